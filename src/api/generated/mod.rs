//! Generated entry points of the typed families (see codegen/table.rs). Do not edit the
//! files of this folder; build.rs rewrites them from the table.

pub mod amo;
pub mod coll;
pub mod consts;
pub mod p2p_sync;
pub mod rma;
