//! The GPU runtime layer: where heap memory comes from and how peers map it.
//!
//! One trait, one implementation per platform: `host` (no GPU: memory is shared memory, memfd
//! or POSIX, GPU threads are CPU threads), `cuda` (NVIDIA: libcudart and libcuda) and `hip` (AMD:
//! libamdhip64), the GPU runtimes loaded at run time with libloading, so that none is a
//! link-time dependency of librocshmem. `ROCSHMEM_GPU` chooses (see [`open`]).

pub mod cuda;
pub mod hip;
pub mod hip_arch;
pub mod host;
pub mod host_heap;
pub mod modules;
pub mod share;
pub mod vendor;

use crate::error::{Error, Result};
use crate::log_info;
use std::ffi::c_void;
use std::sync::Arc;

/// Which platform a runtime drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Platform {
    Host,
    Amd,
    Nvidia,
}

impl Platform {
    pub fn name(self) -> &'static str {
        match self {
            Platform::Host => "host",
            Platform::Amd => "amd",
            Platform::Nvidia => "nvidia",
        }
    }
}

/// A mapped piece of memory that peers on the node can map too.
pub struct Segment {
    pub base: *mut u8,
    pub len: usize,
    /// What a peer needs to map it (an IPC handle; on host, the shared-memory name).
    pub handle: Vec<u8>,
    unmap: Option<Box<dyn FnOnce(*mut u8, usize) + Send + Sync>>,
}

// SAFETY: a Segment is a mapping address and length; the memory is shared by design and every
// access through it is synchronised by the SHMEM memory model, not by Rust ownership.
unsafe impl Send for Segment {}
unsafe impl Sync for Segment {}

impl Segment {
    pub fn new(
        base: *mut u8,
        len: usize,
        handle: Vec<u8>,
        unmap: Box<dyn FnOnce(*mut u8, usize) + Send + Sync>,
    ) -> Segment {
        Segment { base, len, handle, unmap: Some(unmap) }
    }

    /// The same mapping, with `first` run before its own release (an unregistration before the
    /// unmap).
    pub fn release_first(mut self, first: Box<dyn FnOnce(*mut u8, usize) + Send + Sync>) -> Segment {
        let then = self.unmap.take();
        self.unmap = Some(Box::new(move |base, len| {
            first(base, len);
            if let Some(f) = then {
                f(base, len);
            }
        }));
        self
    }

    pub fn contains(&self, addr: usize, len: usize) -> bool {
        let b = self.base as usize;
        addr >= b && len <= self.len && addr - b <= self.len - len
    }
}

impl Drop for Segment {
    fn drop(&mut self) {
        if let Some(f) = self.unmap.take() {
            f(self.base, self.len);
        }
    }
}

/// Where device code reads one of the core's tables (device state, teams, contexts).
///
/// The core always keeps the table in process memory and changes it there. On the host
/// platform device code reads that memory directly; on a GPU platform a copy in device memory
/// mirrors it, every change is pushed to the copy, and the addresses handed to users and to
/// device code (team handles, `ctx_opaque`, the state pointer) are the copy's.
pub struct Mirror {
    device: Option<Segment>,
    gpu: Arc<dyn GpuRuntime>,
}

impl Mirror {
    /// A mirror of `len` bytes (nothing is allocated where device code reads process memory).
    pub fn new(gpu: &Arc<dyn GpuRuntime>, len: usize) -> Result<Mirror> {
        Ok(Mirror { device: gpu.alloc_device(len.max(1))?, gpu: Arc::clone(gpu) })
    }

    /// No device copy: device code reads the host table (host platform, tests).
    pub fn none() -> Mirror {
        Mirror { device: None, gpu: Arc::new(host::HostRuntime::new()) }
    }

    /// Whether device code reads a separate copy.
    pub fn is_separate(&self) -> bool {
        self.device.is_some()
    }

    /// The address device code uses for byte 0 of a table whose host copy starts at `host`.
    pub fn base(&self, host: *const u8) -> usize {
        self.device.as_ref().map_or(host as usize, |d| d.base as usize)
    }

    /// Writes `bytes` at offset `off` of the device copy (a change of the host copy) and waits
    /// until they are there; nothing to do without a device copy.
    pub fn push(&self, off: usize, bytes: &[u8]) -> Result<()> {
        let Some(d) = &self.device else { return Ok(()) };
        if !d.contains(d.base as usize + off, bytes.len()) {
            return Err(Error::invalid(format!(
                "table push {off}+{} is outside the {}-byte mirror",
                bytes.len(),
                d.len
            )));
        }
        // SAFETY: the destination range was checked to be inside the device copy.
        unsafe { self.gpu.upload(d.base.add(off), bytes) }
    }
}

/// The bytes of `entries[range]`, for [`Mirror::push`].
///
/// # Safety
/// Nobody may write those entries while the slice lives (the tables push under their lock).
pub unsafe fn entry_bytes<T>(entries: &[std::cell::UnsafeCell<T>], range: std::ops::Range<usize>) -> &[u8] {
    let sz = std::mem::size_of::<T>();
    let e = &entries[range.clone()];
    // SAFETY: in bounds (the slice above is); the caller excludes writers.
    unsafe { std::slice::from_raw_parts(e.as_ptr().cast::<u8>(), range.len() * sz) }
}

/// What the core needs from a GPU runtime.
///
/// Every PE has a *host control* segment (shared memory on every platform, see [`host`]:
/// doorbells, exchange words and barrier counters, used by the CPU) and a *device segment* (the device
/// synchronisation area followed by the user heap). On the host platform both are one mapping;
/// on a GPU platform the device segment is GPU memory of its own, shared with peers through
/// IPC handles (see `docs/design.md`, "The NVIDIA platform").
pub trait GpuRuntime: Send + Sync {
    fn platform(&self) -> Platform;
    /// One line for logs and rocshmem_info.
    fn describe(&self) -> String;
    /// Creates this PE's host control segment of `len` bytes, reserved but not touched. `name`
    /// is unique per job and PE.
    fn create_segment(&self, name: &str, len: usize) -> Result<Segment>;
    /// Maps a peer's host control segment from its handle.
    fn open_peer_segment(&self, handle: &[u8], len: usize) -> Result<Segment>;
    /// Called once every PE has mapped this PE's segment: drop whatever name made it findable.
    fn seal_segment(&self, own: &Segment) -> Result<()>;
    /// Removes a segment name left by a job that failed before sealing (best effort).
    fn discard_segment_name(&self, name: &str);

    /// True when the device segment is device memory of its own, apart from the host control
    /// segment, which the CPU cannot load from or store to: host operations on the symmetric
    /// heap then go through [`GpuRuntime::copy`], and the tables device code reads are mirrored
    /// into device memory ([`GpuRuntime::alloc_device`]). False on the host platform.
    fn separate_device_segment(&self) -> bool {
        false
    }
    /// Creates this PE's device segment of `len` bytes (only when
    /// [`GpuRuntime::separate_device_segment`]); its handle is what peers open.
    fn create_device_segment(&self, len: usize) -> Result<Segment> {
        let _ = len;
        Err(Error::Unsupported(format!("the {} platform has no separate device segment", self.platform().name())))
    }
    /// Maps a peer's device segment from its handle.
    fn open_peer_device_segment(&self, handle: &[u8], len: usize) -> Result<Segment> {
        let _ = (handle, len);
        Err(Error::Unsupported(format!("the {} platform has no separate device segment", self.platform().name())))
    }
    /// Puts the heaps in host memory that the GPU maps (the RO backend with an MPI that cannot
    /// read GPU memory): from then on the device segment is not separate, and the host segments
    /// are registered with the GPU (device pointer = host pointer). Called before any segment
    /// exists. Nothing to do on the host platform.
    fn use_host_heap(&self) -> Result<()> {
        if self.platform() == Platform::Host {
            return Ok(());
        }
        Err(Error::Unsupported(format!(
            "heaps in host memory (ROCSHMEM_BACKEND=ro) are not built for the {} platform yet",
            self.platform().name()
        )))
    }
    /// `len` zeroed bytes of host memory that device code can also read and write at the same
    /// address (RO command queues). Page aligned.
    fn alloc_host_mapped(&self, len: usize) -> Result<Segment> {
        host::anonymous(len)
    }
    /// Whether `addr` is GPU memory the CPU cannot load from or store to (the RO proxy stages
    /// such buffers through host memory). False on the host platform.
    fn is_device_memory(&self, addr: usize) -> bool {
        let _ = addr;
        false
    }
    /// Which GPU this PE uses and whether processes share it concurrently (see [`share`]);
    /// None where there is no GPU (host platform).
    fn identity(&self) -> Option<share::GpuIdentity> {
        None
    }
    /// Makes this runtime's device current on the calling thread (a thread of the library that
    /// copies GPU memory, such as the RO proxy).
    fn bind_thread(&self) -> Result<()> {
        Ok(())
    }
    /// As [`GpuRuntime::copy`], on a stream of the library that never waits for the program's
    /// kernels: for threads that serve running kernels (the RO proxy).
    ///
    /// # Safety
    /// Both ranges must be valid for `len` bytes.
    unsafe fn copy_beside_kernels(&self, dst: *mut u8, src: *const u8, len: usize) -> Result<()> {
        // SAFETY: forwarded.
        unsafe { self.copy(dst, src, len) }
    }
    /// Device memory for a table device code reads (`len` bytes, zeroed), or None when device
    /// code reads the host's own tables (host platform).
    fn alloc_device(&self, len: usize) -> Result<Option<Segment>> {
        let _ = len;
        Ok(None)
    }
    /// Copies `len` bytes between any two addresses of this process (host or device memory),
    /// complete when it returns.
    ///
    /// # Safety
    /// Both ranges must be valid for `len` bytes.
    unsafe fn copy(&self, dst: *mut u8, src: *const u8, len: usize) -> Result<()> {
        // SAFETY: the caller's contract; memmove allows overlap.
        unsafe { std::ptr::copy(src, dst, len) };
        Ok(())
    }
    /// Sets `len` bytes at `dst` (host or device memory) to `byte`, complete when it returns.
    ///
    /// # Safety
    /// The range must be valid for `len` bytes.
    unsafe fn fill(&self, dst: *mut u8, byte: u8, len: usize) -> Result<()> {
        // SAFETY: the caller's contract.
        unsafe { std::ptr::write_bytes(dst, byte, len) };
        Ok(())
    }
    /// Copies host bytes to device memory of a table mirror and waits until they are there,
    /// without waiting for the program's own GPU work.
    ///
    /// # Safety
    /// `dst` must be valid for `src.len()` bytes.
    unsafe fn upload(&self, dst: *mut u8, src: &[u8]) -> Result<()> {
        // SAFETY: forwarded.
        unsafe { self.copy(dst, src.as_ptr(), src.len()) }
    }
    /// `rocshmem_hipmodule_init`: copies `len` bytes from device address `src` into the global
    /// `name` of the GPU module `module`, stream-ordered on `stream` (NULL: the per-thread
    /// default stream), without synchronising. `Ok(false)` when the module has no such global.
    ///
    /// # Safety
    /// `module` must be a loaded module of this runtime, `stream` NULL or a stream of it, and
    /// `src` device memory of `len` bytes.
    unsafe fn module_global_copy(
        &self,
        module: *mut c_void,
        stream: *mut c_void,
        name: &str,
        src: *const u8,
        len: usize,
    ) -> Result<bool> {
        let _ = (module, stream, name, src, len);
        Err(Error::Unsupported(format!(
            "rocshmem_hipmodule_init needs a GPU runtime; this process runs the {} platform, where device code \
             is linked in and needs no module initialisation",
            self.platform().name()
        )))
    }

    /// Called once near the end of init, on the thread that initialises: prepares what the
    /// stream-ordered calls launch (on NVIDIA, starts loading the helper kernels' modules, whose
    /// device globals `fill` fills once the runtime is up: `Runtime::module_init`). Failures
    /// are kept for the first `*_on_stream` call to report. `all_now`: every module at once
    /// (a backend with a proxy thread; `modules::start`). Nothing to do by default.
    fn stream_kernels_start(&self, fill: modules::FillGlobals, all_now: bool) {
        let _ = (fill, all_now);
    }
    /// Waits up to `limit` for the stream kernels' core module (`stream_kernels_start`), once
    /// the runtime is up: init's last step. Nothing to do by default.
    fn stream_kernels_settle(&self, limit: std::time::Duration) {
        let _ = limit;
    }
    /// Waits for what `stream_kernels_start` started (finalize calls it before the runtime
    /// goes away). Nothing to do by default.
    fn stream_kernels_wait(&self) {}
    /// Most work-groups a stream helper kernel is launched with (the GPU's multiprocessor
    /// count); 1 by default.
    fn stream_max_groups(&self) -> u32 {
        1
    }
    /// Launches stream helper kernel `kernel` (device/stream/grid.hpp) with `args` on `blocks`
    /// work-groups of `threads` threads on `stream` (NULL: the per-thread default stream),
    /// without synchronising.
    ///
    /// # Safety
    /// `stream` must be NULL or a stream of this runtime; the memory `args` names must stay
    /// valid until the stream has run the kernel.
    unsafe fn stream_launch(
        &self,
        stream: *mut c_void,
        kernel: &str,
        args: &crate::stream::args::StreamArgs,
        blocks: u32,
        threads: u32,
    ) -> Result<()> {
        let _ = (stream, kernel, args, blocks, threads);
        Err(Error::Unsupported(format!(
            "the stream-ordered calls (*_on_stream) are not available on the {} platform yet",
            self.platform().name()
        )))
    }
    /// As [`GpuRuntime::stream_launch`] on the library's own stream, then waits for the kernel:
    /// the host API on a heap of GPU memory (`stream::run_and_wait`).
    ///
    /// # Safety
    /// The memory `args` names must stay valid until it returns.
    unsafe fn stream_run_and_wait(
        &self,
        kernel: &str,
        args: &crate::stream::args::StreamArgs,
        blocks: u32,
        threads: u32,
    ) -> Result<()> {
        let _ = (kernel, args, blocks, threads);
        Err(Error::Unsupported(format!(
            "the stream helper kernels are not available on the {} platform yet",
            self.platform().name()
        )))
    }
    /// Whether `stream` (NULL: the per-thread default stream) is being captured into a graph.
    /// False by default (the host platform's queues have no capture).
    fn stream_capturing(&self, stream: *mut c_void) -> Result<bool> {
        let _ = stream;
        Ok(false)
    }
    /// Enqueues a copy of `len` bytes from `src` to `dst` on `stream`, without synchronising.
    ///
    /// # Safety
    /// As [`GpuRuntime::stream_launch`]; both ranges valid for `len` bytes.
    unsafe fn stream_copy(&self, stream: *mut c_void, dst: *mut u8, src: *const u8, len: usize) -> Result<()> {
        let _ = (stream, dst, src, len);
        Err(Error::Unsupported(format!(
            "the stream-ordered calls (*_on_stream) are not available on the {} platform yet",
            self.platform().name()
        )))
    }
}

/// How the platform is chosen (`ROCSHMEM_GPU`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    Auto,
    Host,
    Nvidia,
    Amd,
}

impl Choice {
    pub fn parse(text: &str) -> Result<Choice> {
        match text.trim().to_ascii_lowercase().as_str() {
            "" | "auto" => Ok(Choice::Auto),
            "host" | "cpu" | "none" => Ok(Choice::Host),
            "nvidia" | "cuda" => Ok(Choice::Nvidia),
            "amd" | "hip" | "rocm" => Ok(Choice::Amd),
            other => Err(Error::invalid(format!("ROCSHMEM_GPU='{other}' is not one of auto, host, nvidia, amd"))),
        }
    }
}

/// What a look for GPU runtimes found, without choosing a device (for logs and rocshmem_info):
/// one line per GPU platform.
pub fn probe() -> Vec<String> {
    let hip_library = crate::env::Config::from_env().map(|c| c.hip_library).unwrap_or_default();
    let amd = match hip::Hip::load(&hip_library) {
        Ok(h) => h.summary(),
        Err(e) => format!("amd: not available ({e})"),
    };
    let nvidia = match cuda::Cuda::load() {
        Ok(c) => c.summary(),
        Err(e) => format!("nvidia: not available ({e})"),
    };
    vec![amd, nvidia]
}

/// The runtime for this process, chosen by `ROCSHMEM_GPU` (`choice_text`). `local_rank` is
/// this PE's index among the PEs of its node: a GPU platform uses device
/// `local_rank % device count` unless the program already chose a device. The AMD platform's
/// knobs (`ROCSHMEM_HEAP_ALLOCATOR_TYPE`, `ROCSHMEM_HIP_LIBRARY`) are read from the
/// environment here; a malformed allocator type is refused on every platform.
pub fn open(choice_text: &str, local_rank: usize) -> Result<Arc<dyn GpuRuntime>> {
    let choice = Choice::parse(choice_text)?;
    let cfg = crate::env::Config::from_env()?;
    let allocator = hip::HeapAllocator::parse(&cfg.heap_allocator_type)?;
    open_with(choice, local_rank, || hip::Hip::load(&cfg.hip_library), allocator, cuda::Cuda::load)
}

/// `what: ` in front of a runtime error's text, keeping its kind.
fn prefixed(what: &str, e: Error) -> Error {
    match e {
        Error::Unsupported(s) => Error::Unsupported(format!("{what}: {s}")),
        Error::Gpu(s) => Error::Gpu(format!("{what}: {s}")),
        other => other,
    }
}

/// [`open`] with the HIP and CUDA loaders given (tests pass ones that fail).
pub(crate) fn open_with(
    choice: Choice,
    local_rank: usize,
    load_hip: impl FnOnce() -> Result<hip::Hip>,
    allocator: Option<hip::HeapAllocator>,
    load_cuda: impl FnOnce() -> Result<cuda::Cuda>,
) -> Result<Arc<dyn GpuRuntime>> {
    let host = || -> Arc<dyn GpuRuntime> { Arc::new(host::HostRuntime::new()) };
    let rt: Arc<dyn GpuRuntime> = match choice {
        Choice::Host => host(),
        Choice::Amd => {
            let h = load_hip().map_err(|e| prefixed("ROCSHMEM_GPU=amd", e))?;
            Arc::new(hip::HipRuntime::new(h, local_rank, allocator).map_err(|e| prefixed("ROCSHMEM_GPU=amd", e))?)
        }
        Choice::Nvidia => {
            let t0 = std::time::Instant::now();
            let c = load_cuda().map_err(|e| Error::Unsupported(format!("ROCSHMEM_GPU=nvidia: {e}")))?;
            log_info!("rocshmem_init", "CUDA libraries loaded in {:.1} ms", t0.elapsed().as_secs_f64() * 1e3);
            Arc::new(cuda::CudaRuntime::new(c, local_rank)?)
        }
        // AMD first (the product's first target), then NVIDIA, then the host platform.
        Choice::Auto => match load_hip().and_then(|h| h.device_count().map(|n| (h, n))) {
            Ok((h, n)) if n > 0 => Arc::new(hip::HipRuntime::new(h, local_rank, allocator)?),
            found => {
                match found {
                    Ok(_) => log_info!("rocshmem_init", "HIP runtime found but no AMD GPU"),
                    Err(e) => log_info!("rocshmem_init", "no HIP runtime ({e})"),
                }
                match load_cuda().and_then(|c| c.device_count().map(|n| (c, n))) {
                    Ok((c, n)) if n > 0 => Arc::new(cuda::CudaRuntime::new(c, local_rank)?),
                    Ok(_) => {
                        log_info!("rocshmem_init", "CUDA runtime found but no GPU: using the host platform");
                        host()
                    }
                    Err(e) => {
                        log_info!("rocshmem_init", "no GPU runtime ({e}): using the host platform");
                        host()
                    }
                }
            }
        },
    };
    log_info!("rocshmem_init", "platform {}: {}", rt.platform().name(), rt.describe());
    Ok(rt)
}

/// A pretend GPU for tests: "device memory" is process memory at other addresses, so that
/// handle arithmetic, pushes and separate device segments can be checked without a GPU.
#[cfg(test)]
pub(crate) mod fake {
    use super::*;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[derive(Default)]
    pub struct FakeGpu {
        /// Bytes uploaded (table pushes) and filled, to check what was sent.
        pub uploads: AtomicUsize,
        pub fills: Mutex<Vec<(usize, usize)>>,
    }

    /// Zeroed, page-aligned process memory, freed when the segment drops.
    fn leak(len: usize) -> Segment {
        let layout = std::alloc::Layout::from_size_align(len.max(1), 4096).unwrap();
        // SAFETY: a non-zero size.
        let p = unsafe { std::alloc::alloc_zeroed(layout) };
        assert!(!p.is_null());
        Segment::new(
            p,
            len,
            (p as usize).to_le_bytes().to_vec(),
            Box::new(move |base, _| {
                // SAFETY: allocated above with this layout.
                unsafe { std::alloc::dealloc(base, layout) }
            }),
        )
    }

    impl GpuRuntime for FakeGpu {
        fn platform(&self) -> Platform {
            Platform::Nvidia
        }
        fn describe(&self) -> String {
            "fake GPU".into()
        }
        fn create_segment(&self, _: &str, len: usize) -> Result<Segment> {
            Ok(leak(len))
        }
        fn open_peer_segment(&self, _: &[u8], len: usize) -> Result<Segment> {
            Ok(leak(len))
        }
        fn seal_segment(&self, _: &Segment) -> Result<()> {
            Ok(())
        }
        fn discard_segment_name(&self, _: &str) {}
        fn separate_device_segment(&self) -> bool {
            true
        }
        fn create_device_segment(&self, len: usize) -> Result<Segment> {
            Ok(leak(len))
        }
        fn alloc_device(&self, len: usize) -> Result<Option<Segment>> {
            Ok(Some(leak(len)))
        }
        unsafe fn fill(&self, dst: *mut u8, byte: u8, len: usize) -> Result<()> {
            self.fills.lock().unwrap().push((dst as usize, len));
            // SAFETY: the caller's contract.
            unsafe { std::ptr::write_bytes(dst, byte, len) };
            Ok(())
        }
        unsafe fn upload(&self, dst: *mut u8, src: &[u8]) -> Result<()> {
            self.uploads.fetch_add(src.len(), Ordering::Relaxed);
            // SAFETY: the caller's contract.
            unsafe { std::ptr::copy(src.as_ptr(), dst, src.len()) };
            Ok(())
        }
    }

    pub fn gpu() -> Arc<dyn GpuRuntime> {
        Arc::new(FakeGpu::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mirror_pushes_to_its_own_copy() {
        let host = [7u8; 64];
        let none = Mirror::none();
        assert!(!none.is_separate());
        assert_eq!(none.base(host.as_ptr()), host.as_ptr() as usize);
        none.push(0, &host).unwrap();
        let m = Mirror::new(&fake::gpu(), 64).unwrap();
        assert!(m.is_separate());
        let base = m.base(host.as_ptr());
        assert_ne!(base, host.as_ptr() as usize, "device code reads the copy");
        m.push(8, &host[8..16]).unwrap();
        // SAFETY: the fake device copy is process memory of 64 bytes.
        let copy = unsafe { std::slice::from_raw_parts(base as *const u8, 64) };
        assert_eq!(&copy[..8], &[0; 8]);
        assert_eq!(&copy[8..16], &[7; 8]);
        assert!(m.push(60, &host[..8]).is_err(), "a push past the end is refused");
    }

    #[test]
    fn choice_parses() {
        assert_eq!(Choice::parse("").unwrap(), Choice::Auto);
        assert_eq!(Choice::parse(" AUTO ").unwrap(), Choice::Auto);
        assert_eq!(Choice::parse("host").unwrap(), Choice::Host);
        assert_eq!(Choice::parse("nvidia").unwrap(), Choice::Nvidia);
        assert_eq!(Choice::parse("amd").unwrap(), Choice::Amd);
        assert!(Choice::parse("intel").unwrap_err().to_string().contains("ROCSHMEM_GPU"));
    }

    fn no_cuda() -> Result<cuda::Cuda> {
        Err(Error::Unsupported("libcudart not found (test)".into()))
    }

    fn no_hip() -> Result<hip::Hip> {
        Err(Error::Unsupported("libamdhip64 not found (test)".into()))
    }

    #[test]
    fn auto_falls_back_to_host_without_cuda() {
        let rt = open_with(Choice::Auto, 3, no_hip, None, no_cuda).unwrap();
        assert_eq!(rt.platform(), Platform::Host);
        assert!(!rt.separate_device_segment());
        assert!(rt.alloc_device(64).unwrap().is_none());
    }

    #[test]
    fn forced_platforms_fail_clearly() {
        let e = open_with(Choice::Nvidia, 0, no_hip, None, no_cuda).err().unwrap().to_string();
        assert!(e.contains("ROCSHMEM_GPU=nvidia") && e.contains("libcudart"), "{e}");
        let e = open_with(Choice::Amd, 0, no_hip, None, || panic!("amd must not load CUDA")).err().unwrap().to_string();
        assert!(e.contains("ROCSHMEM_GPU=amd") && e.contains("libamdhip64"), "{e}");
        assert_eq!(
            open_with(Choice::Host, 0, || panic!("host must not load HIP"), None, || panic!("host must not load CUDA"))
                .unwrap()
                .platform(),
            Platform::Host
        );
    }

    #[test]
    fn hip_without_an_amd_gpu() {
        // Where libamdhip64 is installed but sees no GPU (CI, this machine): amd refuses with one
        // message saying so, auto goes on to CUDA and then the host platform. Elsewhere (no HIP,
        // or an AMD GPU) there is nothing to check here (hip.rs checks the loader).
        match hip::Hip::load("") {
            Ok(h) if h.device_count().unwrap() == 0 => {}
            _ => return,
        }
        let e = open_with(Choice::Amd, 0, || hip::Hip::load(""), None, no_cuda).err().unwrap();
        assert!(matches!(e, Error::Gpu(_)), "{e:?}");
        let e = e.to_string();
        assert!(e.contains("ROCSHMEM_GPU=amd") && e.contains("libamdhip64") && e.contains("no AMD GPU"), "{e}");
        let mut tried_cuda = false;
        let load_cuda = || {
            tried_cuda = true;
            no_cuda()
        };
        let rt = open_with(Choice::Auto, 0, || hip::Hip::load(""), None, load_cuda).unwrap();
        assert_eq!(rt.platform(), Platform::Host);
        assert!(tried_cuda, "auto tries CUDA after a HIP without GPU");
    }

    #[test]
    fn host_copy_and_fill() {
        let rt = host::HostRuntime::new();
        let mut a = [1u8; 8];
        let b = [9u8; 8];
        unsafe {
            rt.copy(a.as_mut_ptr(), b.as_ptr(), 4).unwrap();
            rt.fill(a.as_mut_ptr().add(6), 0, 2).unwrap();
        }
        assert_eq!(a, [9, 9, 9, 9, 1, 1, 0, 0]);
    }
}
