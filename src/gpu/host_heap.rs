//! Heaps in host memory that the GPU maps, for the RO backend on NVIDIA and AMD (docs/ro.md,
//! "GPUs"; docs/amd.md, "RO on AMD"): the logic both GPU runtimes share, over the few runtime
//! calls each makes ([`MappedHostApi`]: CUDA's `cudaHostRegister` family in `cuda.rs`, HIP's
//! `hipHostRegister` family in `hip.rs`).
//!
//! Once [`HostHeaps::enable`] was called (before any segment exists), every host segment of the
//! heaps (this PE's and the peers') is registered with the GPU, and device code uses it at its
//! host address, which each registration checks; the RO command queues are pinned host memory
//! mapped the same way; the proxy's copies run on a non-blocking stream of their own.

use super::Segment;
use crate::error::Result;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

/// The runtime calls behind [`HostHeaps`].
pub trait MappedHostApi: Send + Sync + 'static {
    /// Registers the live mapping `[base, base + len)` with the GPU (portable, mapped); `what`
    /// names it in errors.
    fn register(&self, base: *mut u8, len: usize, what: &str) -> Result<()>;
    /// Undoes [`MappedHostApi::register`] (best effort: runs as a segment is released).
    fn unregister(&self, base: *mut u8);
    /// `len` bytes of pinned host memory mapped into the GPU (portable, mapped; fine-grained).
    fn alloc(&self, len: usize) -> Result<*mut u8>;
    /// Frees memory of [`MappedHostApi::alloc`].
    fn free(&self, base: *mut u8);
    /// Fails, saying why and what to change, unless device code reaches registered or pinned
    /// host memory `base` at that same address.
    fn same_address(&self, base: *mut u8, what: &str) -> Result<()>;
    /// A new non-blocking stream.
    fn create_stream(&self) -> Result<usize>;
    /// Copies `len` bytes from `src` to `dst` on `stream` and waits for that stream.
    ///
    /// # Safety
    /// Both ranges must be valid for `len` bytes; `stream` comes from
    /// [`MappedHostApi::create_stream`].
    unsafe fn copy_and_wait(&self, stream: usize, dst: *mut u8, src: *const u8, len: usize) -> Result<()>;
}

/// Whether the heaps are in host memory, and the proxy's stream; one per GPU runtime.
pub struct HostHeaps<A> {
    api: Arc<A>,
    on: AtomicBool,
    /// Non-blocking stream of [`HostHeaps::copy_beside_kernels`] (created on first use).
    side_stream: OnceLock<usize>,
}

impl<A: MappedHostApi> HostHeaps<A> {
    pub fn new(api: Arc<A>) -> HostHeaps<A> {
        HostHeaps { api, on: AtomicBool::new(false), side_stream: OnceLock::new() }
    }

    /// From now on the heaps are host memory (`GpuRuntime::use_host_heap`).
    pub fn enable(&self) {
        self.on.store(true, Ordering::Relaxed);
    }

    pub fn on(&self) -> bool {
        self.on.load(Ordering::Relaxed)
    }

    /// A host segment of the heaps (`what`: whose), registered with the GPU when the heaps are
    /// in host memory, and unregistered before it unmaps; else unchanged.
    pub fn segment(&self, seg: Segment, what: &str) -> Result<Segment> {
        if !self.on() {
            return Ok(seg);
        }
        self.api.register(seg.base, seg.len, what)?;
        let keep = Arc::clone(&self.api);
        let seg = seg.release_first(Box::new(move |base, _| keep.unregister(base)));
        self.api.same_address(seg.base, what)?;
        Ok(seg)
    }

    /// `len` (at least 1) zeroed bytes of pinned host memory that device code reaches at the
    /// same address (the RO command queues).
    pub fn alloc_mapped(&self, len: usize) -> Result<Segment> {
        let len = len.max(1);
        let p = self.api.alloc(len)?;
        let keep = Arc::clone(&self.api);
        let seg = Segment::new(p, len, Vec::new(), Box::new(move |base, _| keep.free(base)));
        // SAFETY: the whole allocation, host memory.
        unsafe { std::ptr::write_bytes(seg.base, 0, len) };
        self.api.same_address(seg.base, "the RO queues")?;
        Ok(seg)
    }

    /// A copy on the library's side stream, complete when it returns (`GpuRuntime::copy_beside_kernels`).
    ///
    /// # Safety
    /// Both ranges must be valid for `len` bytes.
    pub unsafe fn copy_beside_kernels(&self, dst: *mut u8, src: *const u8, len: usize) -> Result<()> {
        let stream = match self.side_stream.get() {
            Some(s) => *s,
            None => {
                let s = self.api.create_stream()?;
                // Two threads racing here: the loser's stream stays unused (one handle, never freed).
                *self.side_stream.get_or_init(|| s)
            }
        };
        // SAFETY: the caller's contract; our stream.
        unsafe { self.api.copy_and_wait(stream, dst, src, len) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use std::sync::Mutex;

    /// Records the calls; device addresses differ from host ones for the bases in `moved`.
    #[derive(Default)]
    struct Fake {
        log: Mutex<Vec<String>>,
        moved: Vec<usize>,
    }

    impl Fake {
        fn say(&self, s: String) {
            self.log.lock().unwrap().push(s);
        }
        fn log(&self) -> Vec<String> {
            self.log.lock().unwrap().clone()
        }
    }

    impl MappedHostApi for Fake {
        fn register(&self, base: *mut u8, len: usize, what: &str) -> Result<()> {
            self.say(format!("register {:#x} {len} {what}", base as usize));
            Ok(())
        }
        fn unregister(&self, base: *mut u8) {
            self.say(format!("unregister {:#x}", base as usize));
        }
        fn alloc(&self, len: usize) -> Result<*mut u8> {
            self.say(format!("alloc {len}"));
            Ok(Box::leak(vec![0xa5u8; len].into_boxed_slice()).as_mut_ptr())
        }
        fn free(&self, base: *mut u8) {
            self.say(format!("free {}", if base.is_null() { "null" } else { "block" }));
        }
        fn same_address(&self, base: *mut u8, what: &str) -> Result<()> {
            if self.moved.contains(&(base as usize)) {
                return Err(Error::Unsupported(format!("{what}: moved")));
            }
            Ok(())
        }
        fn create_stream(&self) -> Result<usize> {
            self.say("stream".into());
            Ok(42)
        }
        unsafe fn copy_and_wait(&self, stream: usize, dst: *mut u8, src: *const u8, len: usize) -> Result<()> {
            self.say(format!("copy on {stream}"));
            // SAFETY: the caller's contract.
            unsafe { std::ptr::copy(src, dst, len) };
            Ok(())
        }
    }

    fn plain(base: usize, log: &Arc<Fake>) -> Segment {
        let log = Arc::clone(log);
        Segment::new(base as *mut u8, 64, Vec::new(), Box::new(move |b, _| log.say(format!("unmap {:#x}", b as usize))))
    }

    #[test]
    fn segments_register_only_when_enabled_and_unregister_before_unmap() {
        let api = Arc::new(Fake::default());
        let heaps = HostHeaps::new(Arc::clone(&api));
        drop(heaps.segment(plain(0x1000, &api), "this PE's heap").unwrap());
        assert_eq!(api.log(), ["unmap 0x1000"], "not enabled: left as it is");
        heaps.enable();
        drop(heaps.segment(plain(0x2000, &api), "a peer's heap").unwrap());
        assert_eq!(api.log()[1..], ["register 0x2000 64 a peer's heap", "unregister 0x2000", "unmap 0x2000"]);
    }

    #[test]
    fn another_device_address_fails_and_releases() {
        let api = Arc::new(Fake { moved: vec![0x3000], ..Fake::default() });
        let heaps = HostHeaps::new(Arc::clone(&api));
        heaps.enable();
        let e = heaps.segment(plain(0x3000, &api), "this PE's heap").err().unwrap().to_string();
        assert!(e.contains("this PE's heap: moved"), "{e}");
        assert_eq!(api.log(), ["register 0x3000 64 this PE's heap", "unregister 0x3000", "unmap 0x3000"]);
    }

    #[test]
    fn queues_are_zeroed_and_copies_share_one_stream() {
        let api = Arc::new(Fake::default());
        let heaps = HostHeaps::new(Arc::clone(&api));
        let one = heaps.alloc_mapped(0).unwrap();
        assert_eq!(one.len, 1);
        drop(one);
        let q = heaps.alloc_mapped(100).unwrap();
        // SAFETY: 100 bytes of the fake's allocation.
        assert!(unsafe { std::slice::from_raw_parts(q.base, 100) }.iter().all(|b| *b == 0));
        let (src, mut dst) = ([7u8; 8], [0u8; 8]);
        for _ in 0..2 {
            // SAFETY: two 8-byte arrays.
            unsafe { heaps.copy_beside_kernels(dst.as_mut_ptr(), src.as_ptr(), 8) }.unwrap();
        }
        assert_eq!(dst, src);
        drop(q);
        assert_eq!(
            api.log(),
            ["alloc 1", "free block", "alloc 100", "stream", "copy on 42", "copy on 42", "free block"]
        );
    }
}
