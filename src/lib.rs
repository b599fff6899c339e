//! rocSHMEM with a Rust core: OpenSHMEM-style communication on a symmetric heap, behind the
//! C and C++ API of AMD's rocSHMEM.
//!
//! Layout (see docs/design.md):
//! - `api/`: the `extern "C"` surface (argument checks, error mapping; `api/gen/` is generated
//!   from the type table in `codegen/`);
//! - `runtime`: init/finalize and the process-wide state;
//! - `bootstrap/`: how PEs find each other (launcher, unique id, MPI);
//! - `gpu/`: where heap memory comes from (host platform now; HIP/CUDA loaded at run time later);
//! - `heap/`: the symmetric heap and its allocator;
//! - `team`, `ctx`: team and context tables, mirrored in `device_abi` structures;
//! - `rma`, `amo`, `p2p`, `coll`, `sync`: the operations;
//! - `env`, `log`, `error`: configuration, diagnostics, errors.

pub mod amo;
pub mod api;
pub mod backend;
pub mod bootstrap;
pub mod coll;
pub mod ctx;
pub mod device_abi;
pub mod env;
pub mod error;
pub mod gpu;
pub mod heap;
pub mod inflight;
pub mod log;
pub mod p2p;
pub mod rma;
pub mod runtime;
pub mod scalar;
pub mod stream;
pub mod sync;
pub mod team;
pub mod watchdog;

/// The library version (the upstream API level it implements).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
