//! The MPI functions of the RO backend: one-sided operations on a window, communicator and
//! group management, non-blocking collectives. Like the bootstrap's (`bootstrap::mpi`), they
//! are resolved at run time from the MPI library the bootstrap loaded (Open MPI ABI, types from
//! mpi-sys; under MPICH the RO backend is refused at init), so librocshmem has no link-time
//! dependency on MPI.
//!
//! Every wrapper returns `Err(message)` naming the MPI function and carrying MPI's error
//! string; the objects we create get `MPI_ERRORS_RETURN`, so errors come back instead of
//! aborting inside MPI.

use crate::bootstrap::mpi::Mpi;
use crate::dl::fn_table;
use crate::error::{Error, Result};
use mpi_sys::{MPI_Aint, MPI_Comm, MPI_Datatype, MPI_Errhandler, MPI_Group, MPI_Info, MPI_Op, MPI_Request, MPI_Win};
use std::ffi::{c_char, c_int, c_void};

/// Open MPI's `MPI_IN_PLACE`.
pub const IN_PLACE: *mut c_void = std::ptr::without_provenance_mut(1);
/// Largest count one MPI call moves here (counts are `int`).
pub const MAX_CHUNK: usize = 1 << 30;

/// A user reduction function (`MPI_User_function`).
pub type UserFn = unsafe extern "C" fn(*mut c_void, *mut c_void, *mut c_int, *mut MPI_Datatype);

type Dt = MPI_Datatype;
type Rq = *mut MPI_Request;

fn_table!(
    /// The MPI entry points the RO backend calls.
    #[derive(Clone, Copy)]
    pub struct Fns {
        pub comm_dup = "MPI_Comm_dup": fn(MPI_Comm, *mut MPI_Comm) -> c_int;
        pub comm_free = "MPI_Comm_free": fn(*mut MPI_Comm) -> c_int;
        pub comm_split = "MPI_Comm_split": fn(MPI_Comm, c_int, c_int, *mut MPI_Comm) -> c_int;
        pub comm_group = "MPI_Comm_group": fn(MPI_Comm, *mut MPI_Group) -> c_int;
        pub comm_create_group = "MPI_Comm_create_group": fn(MPI_Comm, MPI_Group, c_int, *mut MPI_Comm) -> c_int;
        pub comm_set_errhandler = "MPI_Comm_set_errhandler": fn(MPI_Comm, MPI_Errhandler) -> c_int;
        pub comm_rank = "MPI_Comm_rank": fn(MPI_Comm, *mut c_int) -> c_int;
        pub group_incl = "MPI_Group_incl": fn(MPI_Group, c_int, *const c_int, *mut MPI_Group) -> c_int;
        pub group_free = "MPI_Group_free": fn(*mut MPI_Group) -> c_int;
        pub group_size = "MPI_Group_size": fn(MPI_Group, *mut c_int) -> c_int;
        pub win_create = "MPI_Win_create": fn(*mut c_void, MPI_Aint, c_int, MPI_Info, MPI_Comm, *mut MPI_Win) -> c_int;
        pub win_set_errhandler = "MPI_Win_set_errhandler": fn(MPI_Win, MPI_Errhandler) -> c_int;
        pub win_lock_all = "MPI_Win_lock_all": fn(c_int, MPI_Win) -> c_int;
        pub win_unlock_all = "MPI_Win_unlock_all": fn(MPI_Win) -> c_int;
        pub win_free = "MPI_Win_free": fn(*mut MPI_Win) -> c_int;
        pub win_flush = "MPI_Win_flush": fn(c_int, MPI_Win) -> c_int;
        pub win_flush_all = "MPI_Win_flush_all": fn(MPI_Win) -> c_int;
        pub win_flush_local_all = "MPI_Win_flush_local_all": fn(MPI_Win) -> c_int;
        pub put = "MPI_Put": fn(*const c_void, c_int, Dt, c_int, MPI_Aint, c_int, Dt, MPI_Win) -> c_int;
        pub get = "MPI_Get": fn(*mut c_void, c_int, Dt, c_int, MPI_Aint, c_int, Dt, MPI_Win) -> c_int;
        pub accumulate = "MPI_Accumulate": fn(*const c_void, c_int, Dt, c_int, MPI_Aint, c_int, Dt, MPI_Op, MPI_Win) -> c_int;
        pub fetch_and_op = "MPI_Fetch_and_op": fn(*const c_void, *mut c_void, Dt, c_int, MPI_Aint, MPI_Op, MPI_Win) -> c_int;
        pub compare_and_swap = "MPI_Compare_and_swap":
            fn(*const c_void, *const c_void, *mut c_void, Dt, c_int, MPI_Aint, MPI_Win) -> c_int;
        pub barrier = "MPI_Barrier": fn(MPI_Comm) -> c_int;
        pub ibarrier = "MPI_Ibarrier": fn(MPI_Comm, Rq) -> c_int;
        pub ibcast = "MPI_Ibcast": fn(*mut c_void, c_int, Dt, c_int, MPI_Comm, Rq) -> c_int;
        pub iallgather = "MPI_Iallgather": fn(*const c_void, c_int, Dt, *mut c_void, c_int, Dt, MPI_Comm, Rq) -> c_int;
        pub ialltoall = "MPI_Ialltoall": fn(*const c_void, c_int, Dt, *mut c_void, c_int, Dt, MPI_Comm, Rq) -> c_int;
        pub ialltoallv = "MPI_Ialltoallv": fn(
            *const c_void, *const c_int, *const c_int, Dt, *mut c_void, *const c_int, *const c_int, Dt, MPI_Comm, Rq
        ) -> c_int;
        pub iallreduce = "MPI_Iallreduce": fn(*const c_void, *mut c_void, c_int, Dt, MPI_Op, MPI_Comm, Rq) -> c_int;
        pub ireduce_scatter_block = "MPI_Ireduce_scatter_block":
            fn(*const c_void, *mut c_void, c_int, Dt, MPI_Op, MPI_Comm, Rq) -> c_int;
        pub test = "MPI_Test": fn(Rq, *mut c_int, *mut c_void) -> c_int;
        pub op_create = "MPI_Op_create": fn(UserFn, c_int, *mut MPI_Op) -> c_int;
        pub op_free = "MPI_Op_free": fn(*mut MPI_Op) -> c_int;
        pub type_contiguous = "MPI_Type_contiguous": fn(c_int, Dt, *mut Dt) -> c_int;
        pub type_commit = "MPI_Type_commit": fn(*mut Dt) -> c_int;
        pub type_free = "MPI_Type_free": fn(*mut Dt) -> c_int;
        pub iprobe = "MPI_Iprobe": fn(c_int, c_int, MPI_Comm, *mut c_int, *mut c_void) -> c_int;
        pub abort = "MPI_Abort": fn(MPI_Comm, c_int) -> c_int;
        pub query_thread = "MPI_Query_thread": fn(*mut c_int) -> c_int;
        pub error_string = "MPI_Error_string": fn(c_int, *mut c_char, *mut c_int) -> c_int;
        pub get_library_version = "MPI_Get_library_version": fn(*mut c_char, *mut c_int) -> c_int;
});

/// Open MPI's predefined handles (the addresses of its objects).
#[derive(Clone, Copy)]
pub struct Handles {
    pub byte: Dt,
    pub u16: Dt,
    pub u32: Dt,
    pub u64: Dt,
    /// Indexed by `ROCSHMEM_RO_<type>` codes I8..F64.
    pub types: [Dt; 10],
    pub sum: MPI_Op,
    pub max: MPI_Op,
    pub min: MPI_Op,
    pub prod: MPI_Op,
    pub band: MPI_Op,
    pub bor: MPI_Op,
    pub bxor: MPI_Op,
    pub replace: MPI_Op,
    pub no_op: MPI_Op,
    pub errors_return: MPI_Errhandler,
    pub info_null: MPI_Info,
}

/// The MPI functions and handles, copyable into the proxy thread.
#[derive(Clone, Copy)]
pub struct MpiRma {
    pub f: Fns,
    pub h: Handles,
}

// SAFETY: function pointers and process-global MPI handles; MPI runs with MPI_THREAD_MULTIPLE.
unsafe impl Send for MpiRma {}
unsafe impl Sync for MpiRma {}

impl MpiRma {
    /// Resolves everything from the bootstrap's MPI, and checks that MPI runs with
    /// `MPI_THREAD_MULTIPLE` (the proxy thread and the program's threads both call it).
    pub fn load(m: &Mpi) -> Result<MpiRma> {
        // SAFETY: each symbol has the C type MPI declares for it.
        let f = unsafe { Fns::load_with(|s| m.symbol(s)) }?;
        let dt = |n: &str| m.symbol(n).map(|p| MPI_Datatype(p.cast()));
        let op = |n: &str| m.symbol(n).map(|p| MPI_Op(p.cast()));
        let h = Handles {
            byte: dt("ompi_mpi_byte")?,
            u16: dt("ompi_mpi_uint16_t")?,
            u32: dt("ompi_mpi_uint32_t")?,
            u64: dt("ompi_mpi_uint64_t")?,
            types: [
                dt("ompi_mpi_int8_t")?,
                dt("ompi_mpi_int16_t")?,
                dt("ompi_mpi_int32_t")?,
                dt("ompi_mpi_int64_t")?,
                dt("ompi_mpi_uint8_t")?,
                dt("ompi_mpi_uint16_t")?,
                dt("ompi_mpi_uint32_t")?,
                dt("ompi_mpi_uint64_t")?,
                dt("ompi_mpi_float")?,
                dt("ompi_mpi_double")?,
            ],
            sum: op("ompi_mpi_op_sum")?,
            max: op("ompi_mpi_op_max")?,
            min: op("ompi_mpi_op_min")?,
            prod: op("ompi_mpi_op_prod")?,
            band: op("ompi_mpi_op_band")?,
            bor: op("ompi_mpi_op_bor")?,
            bxor: op("ompi_mpi_op_bxor")?,
            replace: op("ompi_mpi_op_replace")?,
            no_op: op("ompi_mpi_op_no_op")?,
            errors_return: MPI_Errhandler(m.symbol("ompi_mpi_errors_return")?.cast()),
            info_null: MPI_Info(m.symbol("ompi_mpi_info_null")?.cast()),
        };
        let r = MpiRma { f, h };
        let mut level: c_int = 0;
        // SAFETY: MPI is initialised (the bootstrap did it or found it done).
        r.check("MPI_Query_thread", unsafe { (r.f.query_thread)(&mut level) })?;
        if level != mpi_sys::MPI_THREAD_MULTIPLE as c_int {
            return Err(Error::Mpi(format!(
                "the RO backend needs MPI_THREAD_MULTIPLE, but MPI was initialised with thread level {level}: \
                 initialise MPI with MPI_Init_thread(MPI_THREAD_MULTIPLE), or let rocshmem_init do it"
            )));
        }
        Ok(r)
    }

    /// MPI's own description of itself (`MPI_Get_library_version`), e.g. "Open MPI v4.1.6, ...".
    pub fn library_version(&self) -> String {
        let mut buf = vec![0 as c_char; 8192];
        let mut len: c_int = 0;
        // SAFETY: MPI_MAX_LIBRARY_VERSION_STRING is 256 in Open MPI; the buffer is larger.
        if unsafe { (self.f.get_library_version)(buf.as_mut_ptr(), &mut len) } != 0 {
            return String::new();
        }
        let bytes: Vec<u8> = buf[..len.clamp(0, 8191) as usize].iter().map(|c| *c as u8).collect();
        String::from_utf8_lossy(&bytes).trim_end_matches('\0').to_string()
    }

    /// MPI's text for error code `rc`.
    pub fn error_text(&self, rc: c_int) -> String {
        let mut buf = [0 as c_char; 512];
        let mut len: c_int = 0;
        // SAFETY: MPI_MAX_ERROR_STRING is 256 in Open MPI; the buffer is larger.
        if unsafe { (self.f.error_string)(rc, buf.as_mut_ptr(), &mut len) } != 0 {
            return format!("MPI error {rc}");
        }
        let bytes: Vec<u8> = buf[..len.clamp(0, 511) as usize].iter().map(|c| *c as u8).collect();
        format!("{} (code {rc})", String::from_utf8_lossy(&bytes))
    }

    /// `Ok` for `MPI_SUCCESS`, else [`Error::Mpi`] "`what` failed: <MPI's error string>".
    pub fn check(&self, what: &str, rc: c_int) -> Result<()> {
        if rc == 0 { Ok(()) } else { Err(Error::Mpi(format!("{what} failed: {}", self.error_text(rc)))) }
    }

    /// A duplicate of `comm` that returns errors.
    pub fn dup(&self, comm: MPI_Comm) -> Result<MPI_Comm> {
        let mut out = MPI_Comm(std::ptr::null_mut());
        // SAFETY: `comm` is a valid communicator; `out` receives the new one.
        self.check("MPI_Comm_dup", unsafe { (self.f.comm_dup)(comm, &mut out) })?;
        self.check("MPI_Comm_set_errhandler", unsafe { (self.f.comm_set_errhandler)(out, self.h.errors_return) })?;
        Ok(out)
    }

    /// The communicator of `ranks` of `parent` (in that order), collective over those ranks
    /// only (`MPI_Comm_create_group`, with `tag` telling concurrent creations apart).
    pub fn create_group(&self, parent: MPI_Comm, ranks: &[c_int], tag: c_int) -> Result<MPI_Comm> {
        let mut g = MPI_Group(std::ptr::null_mut());
        let mut sub = MPI_Group(std::ptr::null_mut());
        let mut out = MPI_Comm(std::ptr::null_mut());
        // SAFETY: valid communicator and groups; `ranks` has `ranks.len()` entries.
        unsafe {
            self.check("MPI_Comm_group", (self.f.comm_group)(parent, &mut g))?;
            let r = (self.f.group_incl)(g, ranks.len() as c_int, ranks.as_ptr(), &mut sub);
            (self.f.group_free)(&mut g);
            self.check("MPI_Group_incl", r)?;
            let r = (self.f.comm_create_group)(parent, sub, tag, &mut out);
            (self.f.group_free)(&mut sub);
            self.check("MPI_Comm_create_group", r)?;
            self.check("MPI_Comm_set_errhandler", (self.f.comm_set_errhandler)(out, self.h.errors_return))?;
        }
        Ok(out)
    }

    pub fn free_comm(&self, comm: &mut MPI_Comm) {
        if !comm.0.is_null() {
            // SAFETY: a communicator we created and nothing uses any more.
            unsafe { (self.f.comm_free)(comm) };
            comm.0 = std::ptr::null_mut();
        }
    }

    /// Whether request `req` completed (MPI_Test).
    pub fn test(&self, req: &mut MPI_Request, what: &str) -> Result<bool> {
        let mut flag: c_int = 0;
        // SAFETY: an active request; MPI_STATUS_IGNORE is NULL in Open MPI.
        self.check(what, unsafe { (self.f.test)(req, &mut flag, std::ptr::null_mut()) })?;
        Ok(flag != 0)
    }

    /// Waits for `req`: yielding between tests for the first millisecond (other threads of this
    /// process may need the CPU), then sleeping 20 us between them: where PEs outnumber the
    /// cores (a container's CPU limit, CI), a waiter that only yields keeps the core from the
    /// PE whose part it waits for.
    pub fn wait(&self, req: &mut MPI_Request, what: &str) -> Result<()> {
        let start = std::time::Instant::now();
        let mut watch = None;
        let mut polls = 0u32;
        let mut sleep = false;
        while !self.test(req, what)? {
            if sleep {
                std::thread::sleep(std::time::Duration::from_micros(20));
            } else {
                std::thread::yield_now();
                sleep = polls % 64 == 63 && start.elapsed() > std::time::Duration::from_millis(1);
            }
            polls = polls.wrapping_add(1);
            // Watched once it lasts (ROCSHMEM_HANG_TIMEOUT), checked every 1024 polls.
            if polls % 1024 == 0 {
                if watch.is_none() && start.elapsed() > std::time::Duration::from_millis(1) {
                    watch = crate::watchdog::Wait::begin(start);
                }
                if let Some(w) = watch.as_mut() {
                    w.check();
                }
            }
        }
        Ok(())
    }

    /// A 4- or 8-byte unsigned word type.
    pub fn word(&self, width: usize) -> Dt {
        if width == 4 { self.h.u32 } else { self.h.u64 }
    }
}

/// A count as MPI's `int`, or the error.
pub fn count(n: usize, what: &str) -> Result<c_int> {
    c_int::try_from(n)
        .map_err(|_| Error::invalid(format!("{what}: {n} elements exceed what one MPI call takes (2^31 - 1)")))
}

/// The version (major, minor, release) in an Open MPI library version string
/// ("Open MPI v4.1.6, package: ..."), or None for another MPI or an unreadable string.
pub fn open_mpi_version(text: &str) -> Option<(u32, u32, u32)> {
    let rest = &text[text.find("Open MPI v")? + "Open MPI v".len()..];
    let end = rest.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(rest.len());
    let mut parts = rest[..end].split('.').map(|p| p.parse::<u32>().ok());
    Some((parts.next()??, parts.next()??, parts.next().flatten().unwrap_or(0)))
}

#[cfg(test)]
mod version_tests {
    #[test]
    fn open_mpi_versions_parse() {
        use super::open_mpi_version as v;
        assert_eq!(v("Open MPI v4.1.6, package: Open MPI Distribution, ident: 4.1.6"), Some((4, 1, 6)));
        assert_eq!(v("Open MPI v4.1.4, package: Debian OpenMPI"), Some((4, 1, 4)));
        assert_eq!(v("Open MPI v5.0.0rc12, package"), Some((5, 0, 0)));
        assert_eq!(v("MPICH Version: 4.1"), None);
    }
}
