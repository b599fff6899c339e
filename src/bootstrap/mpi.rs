//! MPI, loaded at run time. Types come from mpi-sys (built against Open MPI); the functions and
//! Open MPI's predefined handles are looked up at run time, so librocshmem has no link-time
//! dependency on MPI and loads on machines without it.
//!
//! Two ABIs are understood: Open MPI's (handles are pointers to objects of libmpi) and MPICH's
//! (handles are `int` constants; also Intel MPI and MVAPICH), told apart at run time. The
//! bootstrap works with both; the RO backend needs Open MPI.
//!
//! MPI only carries the unique id from rank 0 to the others (`MPI_Bcast`); the rendezvous
//! itself is the same TCP hub every other init path uses.

use crate::error::{Error, Result};
use libloading::os::unix::{Library, RTLD_GLOBAL, RTLD_NOW};
use mpi_sys::{MPI_Comm, MPI_Datatype};
use std::ffi::{CStr, CString, c_char, c_int, c_void};

type FnInitialized = unsafe extern "C" fn(*mut c_int) -> c_int;
type FnInitThread = unsafe extern "C" fn(*mut c_int, *mut *mut *mut c_char, c_int, *mut c_int) -> c_int;
type FnFinalize = unsafe extern "C" fn() -> c_int;
type FnLibraryVersion = unsafe extern "C" fn(*mut c_char, *mut c_int) -> c_int;
// Open MPI: handles are pointers.
type FnCommInt = unsafe extern "C" fn(MPI_Comm, *mut c_int) -> c_int;
type FnBcast = unsafe extern "C" fn(*mut c_void, c_int, MPI_Datatype, c_int, MPI_Comm) -> c_int;
type FnAbort = unsafe extern "C" fn(MPI_Comm, c_int) -> c_int;
type FnCommF2c = unsafe extern "C" fn(c_int) -> MPI_Comm;
// MPICH: handles are ints.
type FnCommIntM = unsafe extern "C" fn(c_int, *mut c_int) -> c_int;
type FnBcastM = unsafe extern "C" fn(*mut c_void, c_int, c_int, c_int, c_int) -> c_int;
type FnAbortM = unsafe extern "C" fn(c_int, c_int) -> c_int;

/// MPICH's predefined handles (its <mpi.h>; the same in Intel MPI and MVAPICH).
const MPICH_COMM_WORLD: c_int = 0x4400_0000;
const MPICH_COMM_NULL: c_int = 0x0400_0000;
const MPICH_BYTE: c_int = 0x4c00_010d;

/// Which MPI ABI the loaded library has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavour {
    /// Open MPI: handles are addresses of libmpi's objects.
    OpenMpi,
    /// MPICH and its derivatives: handles are `int`s.
    Mpich,
}

impl Flavour {
    pub fn name(self) -> &'static str {
        match self {
            Flavour::OpenMpi => "Open MPI",
            Flavour::Mpich => "MPICH",
        }
    }
}

/// The loaded MPI library and the few functions the bootstrap uses.
pub struct Mpi {
    lib: Library,
    /// What the library is (its path, and MPI_Get_library_version's first line).
    pub describe: String,
    pub flavour: Flavour,
    initialized: FnInitialized,
    finalized: FnInitialized,
    init_thread: FnInitThread,
    finalize: FnFinalize,
    comm_rank: *mut c_void,
    comm_size: *mut c_void,
    bcast: *mut c_void,
    abort: *mut c_void,
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

/// `name` in `lib`, or the error saying which symbol the MPI library lacks.
fn lookup(lib: &Library, name: &str) -> Result<*mut c_void> {
    // SAFETY: looked up as an untyped address; callers cast it to the type MPI declares.
    unsafe { lib.get::<*mut c_void>(name.as_bytes()) }
        .map(|s| s.into_raw())
        .map_err(|e| Error::Mpi(format!("{name} not found in the MPI library ({e})")))
}

/// `name` as the program sees it: the first definition in the global scope (the executable,
/// then the libraries in load order), as the dynamic linker bound every reference to it.
fn global(name: &str) -> Option<*mut c_void> {
    let c = CString::new(name).ok()?;
    // SAFETY: dlsym with a NUL-terminated name.
    let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c.as_ptr()) };
    (!p.is_null()).then_some(p)
}

/// One of Open MPI's predefined objects (`ompi_mpi_comm_world`, `ompi_mpi_byte`, ...), whose
/// address is the handle. An executable that names the handle (`MPI_COMM_WORLD`) and is not
/// position-independent code holds a *copy* of the object (a copy relocation), and by ELF
/// interposition libmpi itself uses that copy: the global scope finds it (executable first),
/// whereas libmpi's own handle would give libmpi's object, which MPI never initialises.
fn predefined(lib: &Library, name: &str) -> Result<*mut c_void> {
    match global(name) {
        Some(p) => Ok(p),
        None => lookup(lib, name),
    }
}

/// The path of the library that defines `MPI_Init_thread` in this process, if one is loaded
/// (the program linked MPI, or loaded it): rocSHMEM must use that one.
fn loaded_mpi() -> Option<String> {
    let f = global("MPI_Init_thread")?;
    // SAFETY: dladdr fills `info` for an address inside a loaded object.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    if unsafe { libc::dladdr(f, &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dli_fname is a NUL-terminated path owned by the loader.
    Some(unsafe { CStr::from_ptr(info.dli_fname) }.to_string_lossy().into_owned())
}

/// The libraries to try, in order: `name` if given; else the MPI already in the process; else
/// the library of the launcher that started us (Hydra: MPICH; else Open MPI first).
fn candidates(name: &str) -> Vec<String> {
    if !name.is_empty() {
        return vec![name.to_string()];
    }
    if let Some(path) = loaded_mpi() {
        return vec![path];
    }
    let open_mpi = ["libmpi.so.40", "libmpi.so"];
    let mpich = ["libmpich.so.12", "libmpi.so.12", "libmpich.so"];
    let hydra = std::env::var_os("OMPI_COMM_WORLD_SIZE").is_none()
        && (std::env::var_os("PMI_SIZE").is_some() || std::env::var_os("MPI_LOCALNRANKS").is_some());
    let order: Vec<&str> = if hydra {
        mpich.iter().chain(&open_mpi).copied().collect()
    } else {
        open_mpi.iter().chain(&mpich).copied().collect()
    };
    order.into_iter().map(String::from).collect()
}

const THREAD_MULTIPLE: c_int = mpi_sys::MPI_THREAD_MULTIPLE as c_int;

impl Mpi {
    /// Loads `name` (or the program's MPI, or the launcher's) and initialises MPI if nobody did.
    pub fn load(name: &str) -> Result<Mpi> {
        let candidates = candidates(name);
        let mut errors = Vec::new();
        let lib = candidates.iter().find_map(|c| {
            // SAFETY: loading MPI runs its constructors, which is what linking it would do.
            // RTLD_GLOBAL lets Open MPI's own plugins find libmpi's symbols.
            match unsafe { Library::open(Some(c.as_str()), RTLD_NOW | RTLD_GLOBAL) } {
                Ok(l) => Some((c.clone(), l)),
                Err(e) => {
                    errors.push(format!("{c}: {e}"));
                    None
                }
            }
        });
        let Some((path, lib)) = lib else {
            return Err(Error::Mpi(format!(
                "no MPI library could be loaded ({}); install Open MPI or MPICH or set ROCSHMEM_MPI_LIBRARY, or \
                 start the PEs with rocshmem-run / unique-id init instead",
                errors.join("; ")
            )));
        };
        let version = library_version(&lib);
        let flavour = if lookup(&lib, "ompi_mpi_comm_world").is_ok() {
            Flavour::OpenMpi
        } else if ["MPICH", "Intel(R) MPI", "MVAPICH"].iter().any(|k| version.contains(k)) {
            Flavour::Mpich
        } else {
            return Err(Error::Mpi(format!(
                "{path} ('{version}') is neither Open MPI nor an MPICH-ABI MPI (MPICH, Intel MPI, MVAPICH); \
                 rocSHMEM's MPI bootstrap knows those two ABIs: set ROCSHMEM_MPI_LIBRARY to one, or start the \
                 PEs with rocshmem-run"
            )));
        };
        let describe = format!("{path} ({})", version.lines().next().unwrap_or("").trim());
        // SAFETY: each symbol is looked up with the C type MPI declares for it.
        unsafe {
            let sym = |n: &str| lookup(&lib, n);
            let (world, null, byte) = match flavour {
                Flavour::OpenMpi => (
                    MPI_Comm(predefined(&lib, "ompi_mpi_comm_world")?.cast()),
                    MPI_Comm(predefined(&lib, "ompi_mpi_comm_null")?.cast()),
                    MPI_Datatype(predefined(&lib, "ompi_mpi_byte")?.cast()),
                ),
                Flavour::Mpich => (mpich_handle(MPICH_COMM_WORLD), mpich_handle(MPICH_COMM_NULL), {
                    MPI_Datatype(MPICH_BYTE as u32 as usize as *mut _)
                }),
            };
            let mut mpi = Mpi {
                describe,
                flavour,
                initialized: std::mem::transmute::<*mut c_void, FnInitialized>(sym("MPI_Initialized")?),
                finalized: std::mem::transmute::<*mut c_void, FnInitialized>(sym("MPI_Finalized")?),
                init_thread: std::mem::transmute::<*mut c_void, FnInitThread>(sym("MPI_Init_thread")?),
                finalize: std::mem::transmute::<*mut c_void, FnFinalize>(sym("MPI_Finalize")?),
                comm_rank: sym("MPI_Comm_rank")?,
                comm_size: sym("MPI_Comm_size")?,
                bcast: sym("MPI_Bcast")?,
                abort: sym("MPI_Abort")?,
                world,
                null,
                byte,
                initialized_by_us: false,
                lib,
            };
            mpi.init_if_needed()?;
            mpi.check_world()?;
            Ok(mpi)
        }
    }

    /// Open MPI: the world communicator found must be the one MPI itself uses, which its
    /// Fortran handle 0 names (`MPI_Comm_f2c(0)`, from libmpi's own table). A mismatch would
    /// crash inside MPI; it becomes an error instead.
    fn check_world(&self) -> Result<()> {
        if self.flavour != Flavour::OpenMpi {
            return Ok(());
        }
        let Ok(f2c) = lookup(&self.lib, "MPI_Comm_f2c") else { return Ok(()) };
        // SAFETY: MPI_Comm_f2c(MPI_Fint) -> MPI_Comm; MPI is initialised.
        let w = unsafe { std::mem::transmute::<*mut c_void, FnCommF2c>(f2c)(0) };
        if w.0 != self.world.0 {
            return Err(Error::Mpi(format!(
                "MPI_COMM_WORLD was found at {:p} but MPI uses {:p}; load rocSHMEM and MPI into one symbol scope \
                 (not RTLD_LOCAL), or pass the communicator with rocshmem_init_attr(ROCSHMEM_INIT_WITH_MPI_COMM)",
                self.world.0, w.0
            )));
        }
        Ok(())
    }

    /// The address of `name` in the loaded MPI library (a function, or one of Open MPI's
    /// predefined objects as the program sees it, whose address is the handle). The RO backend
    /// resolves the rest of the MPI functions it needs through this.
    pub fn symbol(&self, name: &str) -> Result<*mut c_void> {
        if name.starts_with("ompi_") { predefined(&self.lib, name) } else { lookup(&self.lib, name) }
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

    /// The communicator the user's `MPI_Comm` at `p` holds (a pointer-sized handle in Open
    /// MPI, an `int` in MPICH); MPI_COMM_NULL (or a null handle) means MPI_COMM_WORLD, as
    /// upstream treats it.
    ///
    /// # Safety
    /// `p` must point to an `MPI_Comm` of the loaded MPI.
    pub unsafe fn comm_at(&self, p: *const c_void) -> MPI_Comm {
        let comm = match self.flavour {
            // SAFETY: the caller's contract.
            Flavour::OpenMpi => unsafe { *(p as *const MPI_Comm) },
            Flavour::Mpich => mpich_handle(unsafe { *(p as *const c_int) }),
        };
        if comm.0.is_null() || comm.0 == self.null.0 { self.world } else { comm }
    }

    pub fn rank_size(&self, comm: MPI_Comm) -> Result<(usize, usize)> {
        let (mut rank, mut size) = (0, 0);
        // SAFETY: `comm` is a communicator handle of this MPI; each function has the type its
        // ABI declares.
        let (rc1, rc2) = unsafe {
            match self.flavour {
                Flavour::OpenMpi => {
                    let (r, s) = (
                        std::mem::transmute::<*mut c_void, FnCommInt>(self.comm_rank),
                        std::mem::transmute::<*mut c_void, FnCommInt>(self.comm_size),
                    );
                    (r(comm, &mut rank), s(comm, &mut size))
                }
                Flavour::Mpich => {
                    let (r, s) = (
                        std::mem::transmute::<*mut c_void, FnCommIntM>(self.comm_rank),
                        std::mem::transmute::<*mut c_void, FnCommIntM>(self.comm_size),
                    );
                    (r(mpich_int(comm), &mut rank), s(mpich_int(comm), &mut size))
                }
            }
        };
        if rc1 != 0 || rc2 != 0 || size < 1 {
            return Err(Error::Mpi("MPI_Comm_rank/MPI_Comm_size failed: is the communicator valid?".into()));
        }
        Ok((rank as usize, size as usize))
    }

    pub fn bcast(&self, buf: &mut [u8], root: usize, comm: MPI_Comm) -> Result<()> {
        let (p, n, r) = (buf.as_mut_ptr().cast(), buf.len() as c_int, root as c_int);
        // SAFETY: `buf` is valid for its length; every rank passes a buffer of the same size.
        let rc = unsafe {
            match self.flavour {
                Flavour::OpenMpi => std::mem::transmute::<*mut c_void, FnBcast>(self.bcast)(p, n, self.byte, r, comm),
                Flavour::Mpich => std::mem::transmute::<*mut c_void, FnBcastM>(self.bcast)(
                    p,
                    n,
                    self.byte.0 as usize as c_int,
                    r,
                    mpich_int(comm),
                ),
            }
        };
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
        crate::log::flush_untaken(); // MPI_Abort ends the process without running exit_now
        // SAFETY: MPI_Abort ends the job; it does not return in practice.
        unsafe {
            match self.flavour {
                Flavour::OpenMpi => std::mem::transmute::<*mut c_void, FnAbort>(self.abort)(self.world, status),
                Flavour::Mpich => {
                    std::mem::transmute::<*mut c_void, FnAbortM>(self.abort)(mpich_int(self.world), status)
                }
            }
        };
        std::process::exit(status)
    }
}

/// An MPICH `int` handle in our pointer-sized handle type (and back, below).
fn mpich_handle(h: c_int) -> MPI_Comm {
    MPI_Comm(h as u32 as usize as *mut _)
}

fn mpich_int(c: MPI_Comm) -> c_int {
    c.0 as usize as u32 as c_int
}

/// `MPI_Get_library_version` (callable before MPI_Init), or "" if it fails.
fn library_version(lib: &Library) -> String {
    let Ok(f) = lookup(lib, "MPI_Get_library_version") else { return String::new() };
    let mut buf = vec![0 as c_char; 8192];
    let mut len: c_int = 0;
    // SAFETY: MPI_MAX_LIBRARY_VERSION_STRING is at most 8192 in the MPIs we know.
    if unsafe { std::mem::transmute::<*mut c_void, FnLibraryVersion>(f)(buf.as_mut_ptr(), &mut len) } != 0 {
        return String::new();
    }
    let bytes: Vec<u8> = buf[..len.clamp(0, 8191) as usize].iter().map(|c| *c as u8).collect();
    String::from_utf8_lossy(&bytes).trim_end_matches('\0').to_string()
}
