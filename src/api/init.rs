//! Init, finalize, queries and library information.

use super::*;
use crate::bootstrap::{self, Method};
use crate::env::Config;
use std::ffi::{c_char, c_int, c_void};
use std::sync::atomic::Ordering;

fn init_with(method: Method) -> Result<()> {
    let rt = match crate::runtime::lifecycle::init(method) {
        // An explicit init after an implicit one (ROCSHMEM_INIT_ON_DEMAND) is the init the
        // program meant: nothing to do.
        Err(Error::AlreadyInitialized) if STARTED_ON_DEMAND.load(Ordering::Acquire) => return Ok(()),
        r => r?,
    };
    announce(rt);
    publish(Some(rt));
    Ok(())
}

/// Initialises the runtime: under `rocshmem-run`, under an MPI launcher (MPI_COMM_WORLD), or
/// as a single PE when started alone. Exits the process with a message if that fails (this
/// call has no way to return an error).
#[unsafe(no_mangle)]
pub extern "C" fn rocshmem_init() {
    let call = "rocshmem_init";
    match catch_unwind(AssertUnwindSafe(|| init_with(Method::Auto))) {
        Ok(Ok(())) => {}
        Ok(Err(Error::AlreadyInitialized)) => report(call, &Error::AlreadyInitialized),
        Ok(Err(e)) => {
            report(call, &e);
            crate::runtime::exit_now(1);
        }
        Err(_) => {
            report(call, &Error::invalid("internal error (panic) during init"));
            crate::runtime::exit_now(1);
        }
    }
}

/// Initialises from attributes: `ROCSHMEM_INIT_WITH_UNIQUEID` (rank, nranks, uid) or
/// `ROCSHMEM_INIT_WITH_MPI_COMM` (`attr->mpi_comm` points to an `MPI_Comm`; NULL: WORLD).
/// Returns 0 on success.
///
/// # Safety
/// `attr` must point to a valid `rocshmem_init_attr_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rocshmem_init_attr(flags: u32, attr: *mut rocshmem_init_attr_t) -> c_int {
    status_call("rocshmem_init_attr", || {
        if attr.is_null() {
            return Err(Error::NullPointer("attr"));
        }
        // SAFETY: checked non-null; the caller owns a valid struct.
        let a = unsafe { &*attr };
        let method = match flags {
            ROCSHMEM_INIT_WITH_UNIQUEID => {
                if a.nranks < 1 || a.rank < 0 || a.rank >= a.nranks {
                    return Err(Error::invalid(format!(
                        "attr rank={} nranks={} (need 0 <= rank < nranks)",
                        a.rank, a.nranks
                    )));
                }
                Method::UniqueId {
                    rank: a.rank as usize,
                    nranks: a.nranks as usize,
                    uid: a.uid.internal.to_vec().into(),
                }
            }
            ROCSHMEM_INIT_WITH_MPI_COMM => Method::MpiComm((!a.mpi_comm.is_null()).then_some(a.mpi_comm)),
            other => {
                return Err(Error::invalid(format!(
                    "flags={other} is neither ROCSHMEM_INIT_WITH_MPI_COMM (0) nor ROCSHMEM_INIT_WITH_UNIQUEID (1)"
                )));
            }
        };
        init_with(method)
    })
}

/// Initialises over an MPI communicator (`mpi_comm` points to an `MPI_Comm`; NULL, or a null
/// communicator, means the world as launched, as `rocshmem_init` finds it) and reports the
/// thread level provided (always ROCSHMEM_THREAD_MULTIPLE).
/// The C++ header's `rocshmem_init_thread(int, int*, MPI_Comm)` forwards here.
///
/// # Safety
/// `provided` must be NULL or writable; `mpi_comm` NULL or a pointer to an `MPI_Comm`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rocshmem_init_thread(requested: c_int, provided: *mut c_int, mpi_comm: *mut c_void) -> c_int {
    status_call("rocshmem_init_thread", || {
        if !(ROCSHMEM_THREAD_SINGLE..=ROCSHMEM_THREAD_MULTIPLE).contains(&requested) {
            return Err(Error::invalid(format!("requested={requested} is not a ROCSHMEM_THREAD_* level")));
        }
        // A NULL communicator (no pointer, or a null handle) means the world as launched:
        // MPI_COMM_WORLD under mpirun, the job under rocshmem-run, else a single PE.
        // SAFETY: a non-null `mpi_comm` points to an MPI_Comm (Open MPI: a pointer).
        let null_comm = mpi_comm.is_null() || unsafe { (*(mpi_comm as *const *const c_void)).is_null() };
        init_with(if null_comm { Method::Auto } else { Method::MpiComm(Some(mpi_comm)) })?;
        if !provided.is_null() {
            // SAFETY: checked non-null.
            unsafe { *provided = ROCSHMEM_THREAD_MULTIPLE };
        }
        Ok(())
    })
}

/// Makes a unique id for unique-id init: call on one process (usually PE 0), pass the bytes to
/// every PE (MPI_Bcast, a file, a store...). This process then hosts the job's rendezvous
/// until every PE has finalised. Returns 0 on success.
///
/// # Safety
/// `uid` must point to a writable `rocshmem_uniqueid_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rocshmem_get_uniqueid(uid: *mut rocshmem_uniqueid_t) -> c_int {
    status_call("rocshmem_get_uniqueid", || {
        if uid.is_null() {
            return Err(Error::NullPointer("uid"));
        }
        let cfg = Config::from_env()?;
        let id = bootstrap::new_unique_id(&cfg)?;
        // SAFETY: checked non-null.
        unsafe { (*uid).internal = id.to_bytes() };
        Ok(())
    })
}

/// Fills `attr` for unique-id init (`mpi_comm` = NULL). Returns 0 on success.
///
/// # Safety
/// `uid` must point to a readable id and `attr` to a writable attribute struct.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rocshmem_set_attr_uniqueid_args(
    rank: c_int,
    nranks: c_int,
    uid: *mut rocshmem_uniqueid_t,
    attr: *mut rocshmem_init_attr_t,
) -> c_int {
    status_call("rocshmem_set_attr_uniqueid_args", || {
        if uid.is_null() {
            return Err(Error::NullPointer("uid"));
        }
        if attr.is_null() {
            return Err(Error::NullPointer("attr"));
        }
        if nranks < 1 || rank < 0 || rank >= nranks {
            return Err(Error::invalid(format!("rank={rank} nranks={nranks} (need 0 <= rank < nranks)")));
        }
        // SAFETY: both checked non-null.
        unsafe {
            (*attr).rank = rank;
            (*attr).nranks = nranks;
            (*attr).uid = *uid;
            (*attr).mpi_comm = std::ptr::null_mut();
        }
        Ok(())
    })
}

/// Completes outstanding operations, synchronises all PEs, releases the heap and teams, and
/// finalises MPI if rocSHMEM initialised it.
#[unsafe(no_mangle)]
pub extern "C" fn rocshmem_finalize() {
    // Not counted in flight: finalize waits for the calls that are (see `inflight`).
    boundary("rocshmem_finalize", (), || {
        crate::runtime::lifecycle::finalize()?;
        publish(None);
        Ok(())
    });
    // How many errors of calls that kept failing were not printed (see log::error_limited).
    log::summarize_repeats(true);
}

/// Internal (used by the C++ shim): whether the runtime is initialised. Prints nothing.
#[unsafe(no_mangle)]
pub extern "C" fn rocshmemi_initialized() -> bool {
    rt().is_ok()
}

/// Extension (not upstream): the one-line message of the last error this thread reported
/// (`rocshmem: PE <n>: error: <call>: <what>`, without the newline), or NULL if it reported
/// none since the previous call; each error is returned once. Kept whatever
/// `ROCSHMEM_DEBUG_LEVEL` says. For bindings (the Python package) that turn a failed call into
/// an exception; the text stays valid until this thread's next call of this function.
#[unsafe(no_mangle)]
pub extern "C" fn rocshmem_last_error() -> *const c_char {
    thread_local! {
        static TAKEN: std::cell::RefCell<std::ffi::CString> = std::cell::RefCell::new(std::ffi::CString::default());
    }
    match catch_unwind(crate::log::take_last_error) {
        Ok(Some(line)) => TAKEN.with(|t| {
            let mut t = t.borrow_mut();
            *t = std::ffi::CString::new(line.replace('\0', " ")).unwrap_or_default();
            t.as_ptr()
        }),
        _ => std::ptr::null(),
    }
}

/// Internal (for bindings such as the Python package, which raise each error as an exception
/// carrying the line): `on` non-zero makes this thread's error lines go only to
/// `rocshmem_last_error`, not to stderr as well, so that each is shown once; a line not taken
/// before the process ends is printed then. Returns the previous setting (0 or 1).
#[unsafe(no_mangle)]
pub extern "C" fn rocshmemi_errors_to_caller(on: c_int) -> c_int {
    catch_unwind(|| crate::log::set_caller_takes(on != 0) as c_int).unwrap_or(0)
}

/// Thread level of the host API: always ROCSHMEM_THREAD_MULTIPLE.
///
/// # Safety
/// `provided` must be NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rocshmem_query_thread(provided: *mut c_int) {
    void_call("rocshmem_query_thread", || {
        if provided.is_null() {
            return Err(Error::NullPointer("provided"));
        }
        // SAFETY: checked non-null.
        unsafe { *provided = ROCSHMEM_THREAD_MULTIPLE };
        Ok(())
    })
}

/// Ends every PE of the job with exit status `status`.
#[unsafe(no_mangle)]
pub extern "C" fn rocshmem_global_exit(status: c_int) {
    crate::runtime::lifecycle::global_exit(status)
}

/// This PE's number, or -1 (with a message) before init.
#[unsafe(no_mangle)]
pub extern "C" fn rocshmem_my_pe() -> c_int {
    value_call("rocshmem_my_pe", -1, || Ok(rt()?.my_pe() as c_int))
}

/// The number of PEs, or -1 (with a message) before init.
#[unsafe(no_mangle)]
pub extern "C" fn rocshmem_n_pes() -> c_int {
    value_call("rocshmem_n_pes", -1, || Ok(rt()?.n_pes() as c_int))
}

/// The OpenSHMEM specification version implemented (1.4).
///
/// # Safety
/// `major` and `minor` must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rocshmem_info_get_version(major: *mut c_int, minor: *mut c_int) {
    void_call("rocshmem_info_get_version", || {
        if major.is_null() || minor.is_null() {
            return Err(Error::NullPointer("major/minor"));
        }
        // SAFETY: checked non-null.
        unsafe {
            *major = ROCSHMEM_MAJOR_VERSION;
            *minor = ROCSHMEM_MINOR_VERSION;
        }
        Ok(())
    })
}

/// Copies the vendor string (at most ROCSHMEM_MAX_NAME_LEN bytes with its NUL) to `name`.
///
/// # Safety
/// `name` must have room for ROCSHMEM_MAX_NAME_LEN bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rocshmem_info_get_name(name: *mut c_char) {
    void_call("rocshmem_info_get_name", || {
        if name.is_null() {
            return Err(Error::NullPointer("name"));
        }
        let s = ROCSHMEM_VENDOR_STRING.as_bytes();
        let n = s.len().min(ROCSHMEM_MAX_NAME_LEN as usize - 1);
        // SAFETY: the caller provides ROCSHMEM_MAX_NAME_LEN bytes; we write n + 1 <= that.
        unsafe {
            std::ptr::copy_nonoverlapping(s.as_ptr(), name.cast(), n);
            *name.add(n) = 0;
        }
        Ok(())
    })
}

/// This library's version (ROCSHMEM_VENDOR_{MAJOR,MINOR,PATCH}_VERSION).
///
/// # Safety
/// The three pointers must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rocshmem_vendor_get_version_info(major: *mut c_int, minor: *mut c_int, patch: *mut c_int) {
    void_call("rocshmem_vendor_get_version_info", || {
        if major.is_null() || minor.is_null() || patch.is_null() {
            return Err(Error::NullPointer("major/minor/patch"));
        }
        // SAFETY: checked non-null.
        unsafe {
            *major = ROCSHMEM_VENDOR_MAJOR_VERSION;
            *minor = ROCSHMEM_VENDOR_MINOR_VERSION;
            *patch = ROCSHMEM_VENDOR_PATCH_VERSION;
        }
        Ok(())
    })
}

/// Prints this PE's operation counters to stdout.
#[unsafe(no_mangle)]
pub extern "C" fn rocshmem_dump_stats() {
    void_call("rocshmem_dump_stats", || {
        let rt = rt()?;
        println!("{}", rt.stats.dump(rt.my_pe()));
        Ok(())
    })
}

/// Zeroes this PE's operation counters.
#[unsafe(no_mangle)]
pub extern "C" fn rocshmem_reset_stats() {
    void_call("rocshmem_reset_stats", || {
        rt()?.stats.reset();
        Ok(())
    })
}
