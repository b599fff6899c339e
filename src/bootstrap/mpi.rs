//! MPI, loaded at run time. Types come from mpi-sys (built against Open MPI); the functions and
//! Open MPI's predefined handles are looked up in `libmpi` with libloading, so librocshmem has
//! no link-time dependency on MPI and loads on machines without it.
//!
//! MPI only carries the unique id from rank 0 to the others (`MPI_Bcast`); the rendezvous
//! itself is the same TCP hub every other init path uses.

use crate::error::{Error, Result};
use libloading::os::unix::{Library, RTLD_GLOBAL, RTLD_NOW};
use mpi_sys::{MPI_Comm, MPI_Datatype};
use std::ffi::{c_char, c_int, c_void};

type FnInitialized = unsafe extern "C" fn(*mut c_int) -> c_int;
type FnInitThread = unsafe extern "C" fn(*mut c_int, *mut *mut *mut c_char, c_int, *mut c_int) -> c_int;
type FnFinalize = unsafe extern "C" fn() -> c_int;
type FnCommInt = unsafe extern "C" fn(MPI_Comm, *mut c_int) -> c_int;
type FnBcast = unsafe extern "C" fn(*mut c_void, c_int, MPI_Datatype, c_int, MPI_Comm) -> c_int;
type FnAbort = unsafe extern "C" fn(MPI_Comm, c_int) -> c_int;

/// The loaded MPI library and the few functions the bootstrap uses.
pub struct Mpi {
    lib: Library,
    initialized: FnInitialized,
    finalized: FnInitialized,
    init_thread: FnInitThread,
    finalize: FnFinalize,
    comm_rank: FnCommInt,
    comm_size: FnCommInt,
    bcast: FnBcast,
    abort: FnAbort,
    world: MPI_Comm,
    null: MPI_Comm,
    byte: MPI_Datatype,
    /// We called `MPI_Init_thread`, so `rocshmem_finalize` calls `MPI_Finalize`.
    pub initialized_by_us: bool,
}

// SAFETY: MPI handles are process-global; we only call MPI from the initialising thread or with
// MPI_THREAD_MULTIPLE.
unsafe impl Send for Mpi {}
unsafe impl Sync for Mpi {}

/// `name` in `lib`, or the error saying which symbol the Open MPI ABI lacks.
fn lookup(lib: &Library, name: &str) -> Result<*mut c_void> {
    // SAFETY: looked up as an untyped address; callers cast it to the type MPI declares.
    unsafe { lib.get::<*mut c_void>(name.as_bytes()) }.map(|s| s.into_raw()).map_err(|e| {
        Error::Mpi(format!("{name} not found in the MPI library ({e}); rocSHMEM supports the Open MPI ABI"))
    })
}

const THREAD_MULTIPLE: c_int = mpi_sys::MPI_THREAD_MULTIPLE as c_int;

impl Mpi {
    /// Loads `name` (or libmpi.so.40, then libmpi.so) and initialises MPI if nobody did yet.
    pub fn load(name: &str) -> Result<Mpi> {
        let candidates: Vec<&str> = if name.is_empty() { vec!["libmpi.so.40", "libmpi.so"] } else { vec![name] };
        let mut errors = Vec::new();
        let lib = candidates.iter().find_map(|c| {
            // SAFETY: loading Open MPI runs its constructors, which is what linking it would do.
            // RTLD_GLOBAL lets Open MPI's own plugins find libmpi's symbols.
            match unsafe { Library::open(Some(*c), RTLD_NOW | RTLD_GLOBAL) } {
                Ok(l) => Some(l),
                Err(e) => {
                    errors.push(format!("{c}: {e}"));
                    None
                }
            }
        });
        let Some(lib) = lib else {
            return Err(Error::Mpi(format!(
                "no MPI library could be loaded ({}); install Open MPI or set ROCSHMEM_MPI_LIBRARY, or \
                 start the PEs with rocshmem-run / unique-id init instead",
                errors.join("; ")
            )));
        };
        // SAFETY: each symbol is looked up with the C type MPI declares for it.
        unsafe {
            let sym = |n: &str| lookup(&lib, n);
            let mut mpi = Mpi {
                initialized: std::mem::transmute::<*mut c_void, FnInitialized>(sym("MPI_Initialized")?),
                finalized: std::mem::transmute::<*mut c_void, FnInitialized>(sym("MPI_Finalized")?),
                init_thread: std::mem::transmute::<*mut c_void, FnInitThread>(sym("MPI_Init_thread")?),
                finalize: std::mem::transmute::<*mut c_void, FnFinalize>(sym("MPI_Finalize")?),
                comm_rank: std::mem::transmute::<*mut c_void, FnCommInt>(sym("MPI_Comm_rank")?),
                comm_size: std::mem::transmute::<*mut c_void, FnCommInt>(sym("MPI_Comm_size")?),
                bcast: std::mem::transmute::<*mut c_void, FnBcast>(sym("MPI_Bcast")?),
                abort: std::mem::transmute::<*mut c_void, FnAbort>(sym("MPI_Abort")?),
                // Open MPI's MPI_COMM_WORLD / MPI_BYTE are the addresses of these objects.
                world: MPI_Comm(sym("ompi_mpi_comm_world")?.cast()),
                null: MPI_Comm(sym("ompi_mpi_comm_null")?.cast()),
                byte: MPI_Datatype(sym("ompi_mpi_byte")?.cast()),
                initialized_by_us: false,
                lib,
            };
            mpi.init_if_needed()?;
            Ok(mpi)
        }
    }

    /// The address of `name` in the loaded MPI library (a function, or one of Open MPI's
    /// predefined objects, whose address is the handle). The RO backend resolves the rest of
    /// the MPI functions it needs through this.
    pub fn symbol(&self, name: &str) -> Result<*mut c_void> {
        lookup(&self.lib, name)
    }

    fn init_if_needed(&mut self) -> Result<()> {
        let mut flag: c_int = 0;
        // SAFETY: MPI_Initialized/Finalized may be called at any time.
        unsafe { (self.initialized)(&mut flag) };
        if flag != 0 {
            return Ok(());
        }
        let mut fin: c_int = 0;
        unsafe { (self.finalized)(&mut fin) };
        if fin != 0 {
            return Err(Error::Mpi("MPI was already finalised; it cannot be initialised again".into()));
        }
        let mut provided: c_int = 0;
        // SAFETY: NULL argc/argv are allowed by MPI.
        let rc =
            unsafe { (self.init_thread)(std::ptr::null_mut(), std::ptr::null_mut(), THREAD_MULTIPLE, &mut provided) };
        if rc != 0 {
            return Err(Error::Mpi(format!("MPI_Init_thread failed with code {rc}")));
        }
        self.initialized_by_us = true;
        Ok(())
    }

    pub fn world(&self) -> MPI_Comm {
        self.world
    }

    /// The communicator to use for `comm`: MPI_COMM_NULL (or a null handle) means
    /// MPI_COMM_WORLD, as upstream treats it.
    pub fn resolve(&self, comm: MPI_Comm) -> MPI_Comm {
        if comm.0.is_null() || comm.0 == self.null.0 { self.world } else { comm }
    }

    pub fn rank_size(&self, comm: MPI_Comm) -> Result<(usize, usize)> {
        let (mut rank, mut size) = (0, 0);
        // SAFETY: `comm` is a communicator handle given by the user or MPI_COMM_WORLD.
        let rc1 = unsafe { (self.comm_rank)(comm, &mut rank) };
        let rc2 = unsafe { (self.comm_size)(comm, &mut size) };
        if rc1 != 0 || rc2 != 0 || size < 1 {
            return Err(Error::Mpi("MPI_Comm_rank/MPI_Comm_size failed: is the communicator valid?".into()));
        }
        Ok((rank as usize, size as usize))
    }

    pub fn bcast(&self, buf: &mut [u8], root: usize, comm: MPI_Comm) -> Result<()> {
        // SAFETY: `buf` is valid for its length; every rank passes a buffer of the same size.
        let rc = unsafe { (self.bcast)(buf.as_mut_ptr().cast(), buf.len() as c_int, self.byte, root as c_int, comm) };
        if rc != 0 {
            return Err(Error::Mpi(format!("MPI_Bcast failed with code {rc}")));
        }
        Ok(())
    }

    /// Finalises MPI if rocSHMEM initialised it.
    pub fn finalize_if_ours(&self) {
        if self.initialized_by_us {
            // SAFETY: we initialised MPI and nothing else of ours uses it afterwards.
            unsafe { (self.finalize)() };
        }
    }

    pub fn abort(&self, status: i32) -> ! {
        // SAFETY: MPI_Abort ends the job; it does not return in practice.
        unsafe { (self.abort)(self.world, status) };
        std::process::exit(status)
    }
}
