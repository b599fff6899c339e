//! Where device code reads the core's tables: in process memory (host platform) or in a copy
//! in device memory that every change is pushed to (GPU platforms).

use super::GpuRuntime;
use super::Segment;
use super::host::HostRuntime;
use crate::error::{Error, Result};
use std::sync::Arc;

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
        Mirror { device: None, gpu: Arc::new(HostRuntime::new()) }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::fake;

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
}
