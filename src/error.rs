//! The one error type of the core. The C surface (`api/`) maps it to upstream's return codes
//! and, for `void` calls, to a one-line log message naming the PE and the call.

use std::fmt;

/// Every way a core operation can fail. Each variant renders as one sentence that says what to
/// change, so that the log line a user sees is actionable.
#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// A call that needs the runtime came before `rocshmem_init`.
    NotInitialized,
    /// `rocshmem_init*` was called while the runtime is already up.
    AlreadyInitialized,
    /// A call came after `rocshmem_finalize`.
    Finalized,
    /// A call in a child of `fork()` of the process that initialised: the child is not a PE.
    ForkedChild { parent: u32, child: u32 },
    /// A call that was waiting (for a value, or for other PEs) when another thread of the
    /// process called `rocshmem_finalize`: it gave up so that finalize can go on.
    FinalizedWhileWaiting,
    /// An argument is out of its domain; the text names the argument and its value.
    InvalidArgument(String),
    /// A PE number outside `0..n`.
    InvalidPe { pe: i64, n_pes: usize },
    /// An address that is not inside the symmetric heap (or the range runs past its end).
    NotSymmetric { addr: usize, len: usize, what: &'static str },
    /// PEs made collective calls that do not match (the text names both PEs' calls).
    Mismatch(String),
    /// A null pointer where memory is required.
    NullPointer(&'static str),
    /// The symmetric heap has no room for the request.
    HeapExhausted { requested: usize, largest_free: usize, heap_size: usize },
    /// All team slots (`ROCSHMEM_MAX_NUM_TEAMS`) are in use.
    TeamsExhausted { max: usize },
    /// All host contexts (`ROCSHMEM_MAX_NUM_HOST_CONTEXTS`) are in use.
    ContextsExhausted { max: usize },
    /// A team or context handle that this library did not hand out, or that was destroyed.
    BadHandle(&'static str),
    /// PEs could not find each other (bootstrap); the text says which step and why.
    Bootstrap(String),
    /// An operating-system call failed.
    Os { what: String, errno: i32 },
    /// MPI could not be loaded or used.
    Mpi(String),
    /// A GPU runtime call failed; the text names the call and the runtime's description.
    Gpu(String),
    /// The operation exists upstream but needs something this build or platform lacks; the text
    /// says what (for example a GPU runtime).
    Unsupported(String),
    /// A GDA queue pair failed (an error completion, or it was stopped); the text names the
    /// peer, the side (host or device) and the NIC's syndrome.
    Gda(String),
    /// Another PE failed (or the job was stopped) and this PE cannot go on; the text names that
    /// PE and its reason.
    PeerFailed(String),
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// The errno of the last failed libc call, wrapped with what we were doing.
    pub fn last_os(what: impl Into<String>) -> Error {
        Error::Os { what: what.into(), errno: std::io::Error::last_os_error().raw_os_error().unwrap_or(0) }
    }

    pub fn invalid(msg: impl Into<String>) -> Error {
        Error::InvalidArgument(msg.into())
    }

    /// The value returned by `int` entry points. Upstream returns `ROCSHMEM_ERROR` (1) or -1 for
    /// some team calls; the caller chooses where they differ.
    pub fn code(&self) -> i32 {
        1
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NotInitialized => write!(f, "called before rocshmem_init"),
            Error::AlreadyInitialized => {
                write!(f, "rocSHMEM is already initialised; call rocshmem_init* once per process")
            }
            Error::Finalized => write!(f, "called after rocshmem_finalize"),
            Error::ForkedChild { parent, child } => write!(
                f,
                "called in a forked child (pid {child}) of the process that initialised rocSHMEM (pid {parent}): \
                 a child of fork() is not a PE and must not use its parent's rocSHMEM; make the call in the \
                 parent, or start new PEs with rocshmem-run"
            ),
            Error::FinalizedWhileWaiting => write!(
                f,
                "gave up waiting: another thread of this process called rocshmem_finalize; finish every call \
                 before rocshmem_finalize"
            ),
            Error::InvalidArgument(s) => write!(f, "invalid argument: {s}"),
            Error::InvalidPe { pe, n_pes } => {
                write!(f, "invalid PE {pe}: valid PEs are 0..{}", n_pes.saturating_sub(1))
            }
            Error::NotSymmetric { addr, len, what } => write!(
                f,
                "{what} address {addr:#x} (+{len} bytes) is not inside the symmetric heap; \
                 use memory from rocshmem_malloc"
            ),
            Error::Mismatch(s) => write!(f, "{s}"),
            Error::NullPointer(what) => write!(f, "{what} is NULL"),
            Error::HeapExhausted { requested, largest_free, heap_size } => write!(
                f,
                "symmetric heap exhausted: asked for {requested} bytes, largest free block is \
                 {largest_free} of {heap_size}; raise ROCSHMEM_HEAP_SIZE"
            ),
            Error::TeamsExhausted { max } => {
                write!(f, "all {max} team slots are in use; raise ROCSHMEM_MAX_NUM_TEAMS or destroy teams")
            }
            Error::ContextsExhausted { max } => write!(
                f,
                "all {max} host contexts are in use; raise ROCSHMEM_MAX_NUM_HOST_CONTEXTS or destroy contexts"
            ),
            Error::BadHandle(what) => write!(f, "{what} handle is not valid (never created, or destroyed)"),
            Error::Bootstrap(s) => write!(f, "bootstrap failed: {s}"),
            Error::Os { what, errno } => {
                write!(f, "{what}: {}", std::io::Error::from_raw_os_error(*errno))
            }
            Error::Mpi(s) => write!(f, "MPI: {s}"),
            Error::Gpu(s) => write!(f, "GPU runtime: {s}"),
            Error::Unsupported(s) => write!(f, "not supported here: {s}"),
            Error::Gda(s) => write!(f, "GDA: {s}"),
            Error::PeerFailed(s) => write!(f, "{s}"),
        }
    }
}

impl std::error::Error for Error {}

impl Error {
    /// Wraps an `std::io::Error` with what we were doing when it happened.
    pub fn io(what: impl Into<String>, e: std::io::Error) -> Error {
        match e.raw_os_error() {
            Some(errno) => Error::Os { what: what.into(), errno },
            None => Error::Bootstrap(format!("{}: {e}", what.into())),
        }
    }
}
