//! The GPU runtime layer: where heap memory comes from and how peers map it.
//!
//! One trait, one implementation per platform. `host` (no GPU: memory is POSIX shared memory,
//! GPU threads are CPU threads) is the one built now; HIP (libamdhip64) and CUDA (libcudart)
//! implementations will be loaded at run time with libloading, so that no GPU runtime is a
//! link-time dependency of librocshmem.

pub mod host;

use crate::error::Result;

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

/// What the core needs from a GPU runtime.
pub trait GpuRuntime: Send + Sync {
    fn platform(&self) -> Platform;
    /// One line for logs and rocshmem_info.
    fn describe(&self) -> String;
    /// Creates this PE's heap memory of `len` bytes, reserved but not touched. `name` is unique
    /// per job and PE.
    fn create_segment(&self, name: &str, len: usize) -> Result<Segment>;
    /// Maps a peer's segment from its handle.
    fn open_peer_segment(&self, handle: &[u8], len: usize) -> Result<Segment>;
    /// Called once every PE has mapped this PE's segment: drop whatever name made it findable.
    fn seal_segment(&self, own: &Segment) -> Result<()>;
    /// Removes a segment name left by a job that failed before sealing (best effort).
    fn discard_segment_name(&self, name: &str);
}

/// The runtime for this process. Only the host platform exists so far.
pub fn open() -> Result<Box<dyn GpuRuntime>> {
    Ok(Box::new(host::HostRuntime::new()))
}
