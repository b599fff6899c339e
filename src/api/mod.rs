//! The `extern "C"` surface: argument checks, error mapping, and nothing else.
//!
//! Every exported function is a literal `#[unsafe(no_mangle)] pub unsafe extern "C" fn` (so
//! cbindgen sees it) whose body goes through one of the boundary helpers below: they catch
//! panics (a panic never unwinds into C), turn core errors into upstream's return values, and
//! print one line naming the PE and the call. The typed families in `generated/` are generated from
//! the type table (`codegen/`) and are one-line calls into the family helpers of the files
//! here.

pub mod amo;
pub mod coll;
pub mod ctx;
pub mod generated;
pub mod init;
pub mod memory;
pub mod module;
pub mod p2p;
pub mod qp;
pub mod rma;
pub mod stream;
pub mod sync;
pub mod team;
pub mod types;

use crate::error::{Error, Result};
use crate::log::{self, Level};
use crate::runtime::{self, Runtime};
use crate::team::{SHARED_SLOT, Team, WORLD_SLOT};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, Ordering};
pub use types::*;

/// Prints the one-line report of a failed call. A call before `rocshmem_init` is reported
/// once per process (programs written for rocSHMEM 2.x ask for their PE number first, and
/// would otherwise print a line per call): the first such call names itself.
pub(crate) fn report(call: &'static str, e: &Error) {
    if *e == Error::NotInitialized {
        static ONCE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        if ONCE.swap(true, std::sync::atomic::Ordering::Relaxed) {
            log::remember_error(call, format_args!("{e}"));
            return;
        }
        log::write(
            Level::Error,
            call,
            format_args!(
                "{e}: call rocshmem_init first (or set ROCSHMEM_INIT_ON_DEMAND=1 to start the library here, \
                 as rocSHMEM 2.x did); later calls before init are not reported"
            ),
        );
        return;
    }
    // A call that keeps failing the same way prints a few lines, then a count (see log).
    log::error_limited(call, e);
}

/// Runs `f` for an entry point that returns a value; `fail` on error or panic. The call is
/// counted in flight while it runs, so that `rocshmem_finalize` on another thread waits for it
/// (see `inflight`).
#[inline]
pub(crate) fn value_call<T>(call: &'static str, fail: T, f: impl FnOnce() -> Result<T>) -> T {
    let token = crate::inflight::enter(call);
    let v = boundary(call, fail, f);
    crate::inflight::leave(token);
    v
}

/// [`value_call`] without counting the call in flight (`rocshmem_finalize` itself).
pub(crate) fn boundary<T>(call: &'static str, fail: T, f: impl FnOnce() -> Result<T>) -> T {
    if log::enabled(Level::Api) {
        log::write(Level::Api, call, format_args!("called"));
    }
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => {
            report(call, &e);
            fail
        }
        Err(_) => {
            log::write(Level::Error, call, format_args!("internal error (a panic was caught); please report it"));
            fail
        }
    }
}

/// For `void` entry points: errors are reported, nothing else can be done.
pub(crate) fn void_call(call: &'static str, f: impl FnOnce() -> Result<()>) {
    value_call(call, (), f)
}

/// For `int` entry points returning ROCSHMEM_SUCCESS or an error code.
pub(crate) fn status_call(call: &'static str, f: impl FnOnce() -> Result<()>) -> i32 {
    value_call(call, 1, || f().map(|()| 0))
}

/// The runtime, or NotInitialized/Finalized. Only inside a [`value_call`]: the runtime stays
/// mapped until the call returns, and once finalize has begun new calls get `Finalized`.
/// Before init, with `ROCSHMEM_INIT_ON_DEMAND=1`, initialises it first (see [`on_demand`]).
pub(crate) fn rt() -> Result<&'static Runtime> {
    match runtime::get_ready() {
        Err(Error::NotInitialized) => on_demand(),
        r => r,
    }
}

/// The team a context's PE numbers refer to (`None`: the default context).
pub(crate) fn ctx_team(rt: &Runtime, ctx: Option<rocshmem_ctx_t>) -> Result<Team> {
    match ctx {
        None => Ok(rt.world()),
        Some(c) => {
            let entry = rt.ctxs.get(c.ctx_opaque)?;
            rt.teams.get(entry.team)
        }
    }
}

/// World PE for `pe` as the context `ctx` numbers PEs.
pub(crate) fn ctx_pe(rt: &Runtime, ctx: Option<rocshmem_ctx_t>, pe: i32) -> Result<usize> {
    match ctx {
        None => rt.check_pe(pe as i64),
        Some(_) => ctx_team(rt, ctx)?.world_pe(pe as i64),
    }
}

/// A team handle, with a specific error for ROCSHMEM_TEAM_INVALID.
pub(crate) fn team_of(rt: &Runtime, team: rocshmem_team_t) -> Result<Team> {
    rt.teams.get(team)
}

/// A non-negative `int` count from C.
pub(crate) fn count(n: i32, what: &str) -> Result<usize> {
    usize::try_from(n).map_err(|_| Error::invalid(format!("{what}={n} is negative")))
}

// Starting the runtime, for `init.rs` and for the first call of a program that relies on
// `ROCSHMEM_INIT_ON_DEMAND` ([`rt`]); here rather than in `init.rs` so that this file names
// none of its children (they all use it).

unsafe extern "C" {
    /// Defined by the C++ shim (src/cxx/shim_core.cpp): sets the C++ globals upstream programs
    /// read on the host (`rocshmem::host::ROCSHMEM_TEAM_WORLD`, `ROCSHMEM_CTX_DEFAULT`, ...).
    /// Also sets the host platform's `rocshmemi_device_fast` (zeroes for NULL).
    fn rocshmemi_cxx_publish(
        ctx: rocshmem_ctx_t,
        world: rocshmem_team_t,
        shared: rocshmem_team_t,
        fast: *const crate::device_abi::rocshmem_device_fast,
    );
}

/// After init, on PE 0: with ROCSHMEM_DEBUG_LEVEL=VERSION / ENV (or the :env modifier), says
/// what runs, and how.
pub(crate) fn announce(rt: &Runtime) {
    if rt.my_pe() != 0 {
        return;
    }
    if log::enabled(Level::Version) {
        let v = format!(
            "rocSHMEM {} ({ROCSHMEM_VENDOR_STRING}), {} PEs, {}",
            crate::VERSION,
            rt.n_pes(),
            rt.gpu.describe()
        );
        log::write(Level::Version, "rocshmem_init", format_args!("{v}"));
    }
    if log::enabled(Level::Env) {
        log::write(Level::Env, "rocshmem_init", format_args!("environment:\n{}", crate::env::describe(false)));
    }
}

/// Makes the default context and the predefined teams visible to C and C++ programs.
pub(crate) fn publish(rt: Option<&Runtime>) {
    let fast = rt.map_or(std::ptr::null(), |rt| &rt.device_state.fast as *const _);
    let (ctx, world, shared) = match rt {
        Some(rt) => {
            let world = rt.teams.handle(WORLD_SLOT);
            (
                rocshmem_ctx_t { ctx_opaque: rt.ctxs.opaque(0), team_opaque: world.cast() },
                world,
                rt.teams.handle(SHARED_SLOT),
            )
        }
        None => (
            rocshmem_ctx_t { ctx_opaque: std::ptr::null_mut(), team_opaque: std::ptr::null_mut() },
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        ),
    };
    // SAFETY: written only here, at init and finalize, before/after any use by the program.
    unsafe {
        ROCSHMEM_HOST_CTX_DEFAULT = ctx;
        ROCSHMEM_HOST_TEAM_WORLD = world;
        ROCSHMEM_HOST_TEAM_SHARED = shared;
        rocshmemi_cxx_publish(ctx, world, shared, fast);
    }
}

/// Whether the runtime was started by a call before init (ROCSHMEM_INIT_ON_DEMAND=1).
pub(crate) static STARTED_ON_DEMAND: AtomicBool = AtomicBool::new(false);

/// A call that needs the runtime came before init. With `ROCSHMEM_INIT_ON_DEMAND=1`, starts
/// the library as `rocshmem_init()` does (launcher, MPI launcher or a single PE; rocSHMEM 2.x
/// started on demand) and returns it; a later `rocshmem_init*` then does nothing. Otherwise
/// NotInitialized. A failed start ends the process, as a failed `rocshmem_init` does.
pub(crate) fn on_demand() -> Result<&'static Runtime> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let wanted = std::env::var("ROCSHMEM_INIT_ON_DEMAND")
        .ok()
        .and_then(|v| crate::env::parse(crate::env::Kind::Bool, "ROCSHMEM_INIT_ON_DEMAND", &v).ok())
        .is_some_and(|v| matches!(v, crate::env::Value::Bool(true)));
    if !wanted {
        return Err(Error::NotInitialized);
    }
    // One thread starts it; others wait and find it started.
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    if let Ok(rt) = crate::runtime::get() {
        return Ok(rt);
    }
    let call = "rocshmem_init (on demand)";
    match crate::runtime::lifecycle::init(crate::bootstrap::Method::Auto) {
        Ok(rt) => {
            STARTED_ON_DEMAND.store(true, Ordering::Release);
            announce(rt);
            publish(Some(rt));
            log::write(
                Level::Info,
                call,
                format_args!("started by a call before rocshmem_init (ROCSHMEM_INIT_ON_DEMAND=1)"),
            );
            Ok(rt)
        }
        Err(Error::AlreadyInitialized) => crate::runtime::get(),
        Err(e) => {
            report(call, &e);
            crate::runtime::exit_now(1);
        }
    }
}
