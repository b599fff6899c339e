//! The GPU runtime layer: where heap memory comes from and how peers map it.
//!
//! One trait, one implementation per platform: `host` (no GPU: memory is shared memory, memfd
//! or POSIX, GPU threads are CPU threads), `cuda` (NVIDIA: libcudart and libcuda) and `hip` (AMD:
//! libamdhip64), the GPU runtimes loaded at run time with libloading, so that none is a
//! link-time dependency of librocshmem. `ROCSHMEM_GPU` chooses (`select::open`).
//!
//! This file holds what every platform builds on (the [`GpuRuntime`] trait, [`Segment`],
//! [`Platform`]) and names none of the platforms, so they can use it without an import cycle:
//! `select` picks one, `mirror` (the device copies of the core's tables) uses one.
//!
//! The stream helper kernels' pieces that need no runtime live here too: their argument
//! (`stream_args`), launch grid (`stream_plan`), embedded images (`stream_pack`, loaded by
//! `modules`), and the host platform's ordered queues that run them (`host_streams`); the
//! `*_on_stream` calls themselves are `crate::stream`.

pub mod cuda;
pub mod hip;
pub mod hip_arch;
pub mod host;
pub mod host_heap;
pub mod host_streams;
pub mod mirror;
pub mod modules;
pub mod select;
pub mod share;
pub mod stream_args;
pub mod stream_pack;
pub mod stream_plan;
pub mod vendor;

use crate::error::{Error, Result};
use std::ffi::c_void;

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

impl Segment {
    /// `len` zeroed bytes of private anonymous memory (page aligned), unmapped on drop.
    pub fn anonymous(len: usize) -> Result<Segment> {
        let len = len.max(1);
        // SAFETY: a new private anonymous mapping; the kernel picks the address.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(Error::last_os(format!("mmap of {len} anonymous bytes")));
        }
        Ok(Segment::mmapped(p.cast(), len, Vec::new()))
    }

    /// A segment `mmap` made, released with `munmap`.
    pub fn mmapped(base: *mut u8, len: usize, handle: Vec<u8>) -> Segment {
        Segment::new(
            base,
            len,
            handle,
            Box::new(|base, len| {
                // SAFETY: `base`/`len` are exactly what mmap returned for this segment.
                unsafe { libc::munmap(base.cast(), len) };
            }),
        )
    }
}

impl Drop for Segment {
    fn drop(&mut self) {
        if let Some(f) = self.unmap.take() {
            f(self.base, self.len);
        }
    }
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
        Segment::anonymous(len)
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
        args: &stream_args::StreamArgs,
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
    /// the host API on a heap of GPU memory (`transport::gpu_heap`).
    ///
    /// # Safety
    /// The memory `args` names must stay valid until it returns.
    unsafe fn stream_run_and_wait(
        &self,
        kernel: &str,
        args: &stream_args::StreamArgs,
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

/// A pretend GPU for tests: "device memory" is process memory at other addresses, so that
/// handle arithmetic, pushes and separate device segments can be checked without a GPU.
#[cfg(test)]
pub(crate) mod fake {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};

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
