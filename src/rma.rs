//! Host-initiated RMA: checks, counts, and the transport of the target PE (`transport`): a copy
//! into or out of the peer's mapping on IPC, MPI on RO. Both complete before they return, which
//! makes the `_nbi` forms the same operations and `quiet` a fence (and an MPI flush on RO).

use crate::error::{Error, Result};
use crate::runtime::{Runtime, Stats};
use crate::scalar::Scalar;
use crate::transport::Transport;

/// Bytes in `n` elements of `elem` bytes, refusing overflow.
pub fn byte_len(n: usize, elem: usize) -> Result<usize> {
    n.checked_mul(elem).ok_or_else(|| Error::invalid(format!("{n} elements of {elem} bytes overflow size_t")))
}

/// Copies `bytes` from local `src` to symmetric `dst` on PE `pe`.
///
/// # Safety
/// `src` must be readable for `bytes`; `dst` is checked to be in the symmetric heap.
pub unsafe fn put(rt: &Runtime, dst: *mut u8, src: *const u8, bytes: usize, pe: usize) -> Result<()> {
    if bytes == 0 {
        return Ok(());
    }
    let off = rt.heap.offset_of(dst as usize, bytes, "destination")?;
    if src.is_null() {
        return Err(Error::NullPointer("source"));
    }
    // SAFETY: the caller's readable source; the destination is checked.
    unsafe { rt.net.rma(pe).put(&rt.heap, off, src, bytes, pe)? };
    Stats::add(&rt.stats.puts, 1);
    Stats::add(&rt.stats.put_bytes, bytes as u64);
    Ok(())
}

/// Copies `bytes` from symmetric `src` on PE `pe` to local `dst`.
///
/// # Safety
/// `dst` must be writable for `bytes`; `src` is checked to be in the symmetric heap.
pub unsafe fn get(rt: &Runtime, dst: *mut u8, src: *const u8, bytes: usize, pe: usize) -> Result<()> {
    if bytes == 0 {
        return Ok(());
    }
    let off = rt.heap.offset_of(src as usize, bytes, "source")?;
    if dst.is_null() {
        return Err(Error::NullPointer("destination"));
    }
    // SAFETY: the caller's writable destination; the source is checked.
    unsafe { rt.net.rma(pe).get(&rt.heap, dst, off, bytes, pe)? };
    Stats::add(&rt.stats.gets, 1);
    Stats::add(&rt.stats.get_bytes, bytes as u64);
    Ok(())
}

/// Stores one element at symmetric `dst` on PE `pe`.
pub fn p<T: Scalar>(rt: &Runtime, dst: *mut T, value: T, pe: usize) -> Result<()> {
    let off = rt.heap.offset_of(dst as usize, std::mem::size_of::<T>(), "destination")?;
    rt.net.rma(pe).p(&rt.heap, off, value, pe)?;
    Stats::add(&rt.stats.puts, 1);
    Stats::add(&rt.stats.put_bytes, std::mem::size_of::<T>() as u64);
    Ok(())
}

/// Loads one element from symmetric `src` on PE `pe`.
pub fn g<T: Scalar>(rt: &Runtime, src: *const T, pe: usize) -> Result<T> {
    let off = rt.heap.offset_of(src as usize, std::mem::size_of::<T>(), "source")?;
    Stats::add(&rt.stats.gets, 1);
    Stats::add(&rt.stats.get_bytes, std::mem::size_of::<T>() as u64);
    rt.net.rma(pe).g(&rt.heap, off, pe)
}

/// `rocshmem_ptr`: the address of symmetric `addr` in PE `pe`'s heap, usable with loads and
/// stores from this process (every PE on the host platform), or None. On a GPU platform it is
/// the address of the peer's GPU memory as mapped here: usable by device code and GPU copies.
pub fn ptr(rt: &Runtime, addr: *const u8, pe: usize) -> Option<*mut u8> {
    rt.heap.peer_addr(addr as usize, 1, pe, "address").ok()
}

/// `quiet` / `fence`: every transport completes this PE's operations and orders them for other
/// PEs' observers.
pub fn quiet() {
    match crate::runtime::get() {
        Ok(rt) => rt.net.quiet(),
        Err(_) => std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst),
    }
}
