//! The host platform: heap memory is a POSIX shared-memory object per PE.
//!
//! Each object is created 0600 (private to the user), sized with ftruncate (sparse: nothing is
//! touched until used, so eight 1 GiB heaps fit a small machine) and mapped MAP_NORESERVE.
//! Once every PE has mapped every peer, the names are unlinked: nothing is left in /dev/shm
//! after a normal exit or a `kill -9`.

use super::{GpuRuntime, Platform, Segment};
use crate::error::{Error, Result};
use std::ffi::CString;

pub struct HostRuntime;

impl HostRuntime {
    pub fn new() -> HostRuntime {
        HostRuntime
    }
}

impl Default for HostRuntime {
    fn default() -> Self {
        Self::new()
    }
}

fn cname(name: &str) -> Result<CString> {
    CString::new(name).map_err(|_| Error::invalid(format!("segment name {name:?} has a NUL byte")))
}

/// Heaps are mapped at addresses that are multiples of this, in every process, so that the
/// user heap bases of all PEs agree modulo it and `rocshmem_align` can honour alignments up to
/// it (2 MiB: also a huge-page boundary).
pub const SEGMENT_ALIGN: usize = 2 << 20;

fn map(fd: i32, len: usize, what: &str) -> Result<*mut u8> {
    // Reserve len + SEGMENT_ALIGN of address space, place the mapping on an aligned address
    // inside it, and give back the slack on both sides.
    let span = len + SEGMENT_ALIGN;
    // SAFETY: an anonymous, inaccessible reservation; the kernel picks the address.
    let r = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            span,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if r == libc::MAP_FAILED {
        return Err(Error::last_os(format!("reserving {span} bytes of address space for {what}")));
    }
    let start = (r as usize).next_multiple_of(SEGMENT_ALIGN);
    // SAFETY: [start, start+len) lies inside the reservation, which MAP_FIXED replaces.
    let p = unsafe {
        libc::mmap(
            start as *mut libc::c_void,
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_NORESERVE | libc::MAP_FIXED,
            fd,
            0,
        )
    };
    let head = start - r as usize;
    let tail = span - head - len;
    // SAFETY: the slack ranges are parts of our reservation outside the mapping.
    unsafe {
        if head > 0 {
            libc::munmap(r, head);
        }
        if tail > 0 {
            libc::munmap((start + len) as *mut libc::c_void, tail);
        }
    }
    if p == libc::MAP_FAILED {
        let e = Error::last_os(format!("mmap of {len} bytes for {what}"));
        // SAFETY: the reservation part we meant to map over.
        unsafe { libc::munmap(start as *mut libc::c_void, len) };
        return Err(e);
    }
    Ok(p.cast())
}

/// `len` zeroed bytes of private anonymous memory, page aligned.
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
    Ok(Segment::new(p.cast(), len, Vec::new(), unmapper()))
}

fn unmapper() -> Box<dyn FnOnce(*mut u8, usize) + Send + Sync> {
    Box::new(|base, len| {
        // SAFETY: `base`/`len` are exactly what mmap returned for this segment.
        unsafe { libc::munmap(base.cast(), len) };
    })
}

impl GpuRuntime for HostRuntime {
    fn platform(&self) -> Platform {
        Platform::Host
    }

    fn describe(&self) -> String {
        "host platform (no GPU; heaps in POSIX shared memory)".into()
    }

    fn create_segment(&self, name: &str, len: usize) -> Result<Segment> {
        let c = cname(name)?;
        // SAFETY: plain libc calls on a name we own; the fd is closed before returning.
        let fd = unsafe { libc::shm_open(c.as_ptr(), libc::O_CREAT | libc::O_EXCL | libc::O_RDWR, 0o600) };
        if fd < 0 {
            return Err(Error::last_os(format!("shm_open({name})")));
        }
        let cleanup = |e: Error| {
            unsafe {
                libc::close(fd);
                libc::shm_unlink(c.as_ptr());
            }
            e
        };
        if unsafe { libc::ftruncate(fd, len as libc::off_t) } != 0 {
            return Err(cleanup(Error::last_os(format!("ftruncate({name}, {len})"))));
        }
        let base = map(fd, len, name).map_err(cleanup)?;
        unsafe { libc::close(fd) };
        Ok(Segment::new(base, len, name.as_bytes().to_vec(), unmapper()))
    }

    fn open_peer_segment(&self, handle: &[u8], len: usize) -> Result<Segment> {
        let name = String::from_utf8_lossy(handle).into_owned();
        let c = cname(&name)?;
        // SAFETY: as above; the fd is closed once mapped.
        let fd = unsafe { libc::shm_open(c.as_ptr(), libc::O_RDWR, 0) };
        if fd < 0 {
            return Err(Error::last_os(format!("shm_open({name}) of a peer's heap")));
        }
        let r = map(fd, len, &name);
        unsafe { libc::close(fd) };
        Ok(Segment::new(r?, len, handle.to_vec(), unmapper()))
    }

    fn seal_segment(&self, own: &Segment) -> Result<()> {
        let c = cname(&String::from_utf8_lossy(&own.handle))?;
        // SAFETY: unlinking our own name; the mappings stay valid.
        if unsafe { libc::shm_unlink(c.as_ptr()) } != 0 {
            return Err(Error::last_os("shm_unlink of this PE's heap"));
        }
        Ok(())
    }

    fn discard_segment_name(&self, name: &str) {
        if let Ok(c) = cname(name) {
            // SAFETY: best-effort unlink; ENOENT is fine.
            unsafe { libc::shm_unlink(c.as_ptr()) };
        }
    }
}

/// Name of PE `pe`'s heap in job `tag` (also how the launcher sweeps leftovers).
pub fn segment_name(tag: u64, pe: usize) -> String {
    format!("/rocshmem-{tag:016x}-{pe}")
}

/// Free bytes of the filesystem behind POSIX shared memory, if it can be read.
pub fn shm_free_bytes() -> Option<u64> {
    let path = CString::new("/dev/shm").ok()?;
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: statvfs fills `st`.
    if unsafe { libc::statvfs(path.as_ptr(), &mut st) } != 0 {
        return None;
    }
    Some(st.f_bavail as u64 * st.f_frsize as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_map_from_another_handle_and_seal() {
        let rt = HostRuntime::new();
        let name = format!("/rocshmem-test-{}", std::process::id());
        let a = rt.create_segment(&name, 1 << 30).unwrap();
        let b = rt.open_peer_segment(&a.handle, 1 << 30).unwrap();
        assert_eq!(a.base as usize % SEGMENT_ALIGN, 0, "segments are mapped 2 MiB aligned");
        assert_eq!(b.base as usize % SEGMENT_ALIGN, 0);
        unsafe {
            *a.base.add(12345) = 7;
            assert_eq!(*b.base.add(12345), 7, "both mappings see the same memory");
        }
        rt.seal_segment(&a).unwrap();
        assert!(rt.open_peer_segment(&a.handle, 4096).is_err(), "the name is gone after sealing");
        unsafe { *b.base.add(1 << 29) = 1 };
        assert_eq!(unsafe { *a.base.add(1 << 29) }, 1, "mappings outlive the name");
        assert!(rt.create_segment(&name, 4096).is_ok(), "the name can be reused");
        rt.discard_segment_name(&name);
    }

    #[test]
    fn segment_is_private_to_the_user() {
        let rt = HostRuntime::new();
        let name = format!("/rocshmem-test-mode-{}", std::process::id());
        let _a = rt.create_segment(&name, 4096).unwrap();
        let meta = std::fs::metadata(format!("/dev/shm{name}")).unwrap();
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        rt.discard_segment_name(&name);
    }
}
