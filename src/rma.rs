//! Host-initiated RMA on the IPC backend: every peer heap is mapped, so a put is a copy into
//! the peer's mapping and a get a copy out of it (a GPU runtime copy when the heaps are GPU
//! memory). Both complete before they return, which makes the `_nbi` forms the same
//! operations and `quiet` a memory fence. On the RO backend, a peer this PE does not map is
//! reached with MPI from the calling thread (put + flush, get + flush: complete at return too).

use crate::error::{Error, Result};
use crate::runtime::{Runtime, Stats};
use crate::scalar::Scalar;
use crate::sync::ring;

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
    #[cfg(feature = "mpi")]
    if let Some(ro) = rt.ro().filter(|_| !rt.heap.mapped(pe)) {
        rt.heap.offset_of(dst as usize, bytes, "destination")?;
        if src.is_null() {
            return Err(Error::NullPointer("source"));
        }
        Stats::add(&rt.stats.puts, 1);
        Stats::add(&rt.stats.put_bytes, bytes as u64);
        // SAFETY: the caller's readable source; the destination is checked.
        return unsafe { ro.put(dst as usize, src, bytes, pe) };
    }
    let remote = rt.heap.peer_addr(dst as usize, bytes, pe, "destination")?;
    if src.is_null() {
        return Err(Error::NullPointer("source"));
    }
    // SAFETY: `remote` is inside PE `pe`'s mapped heap for `bytes`; `src` is the caller's
    // readable buffer. They may overlap when pe is this PE, hence a memmove (or, when the heap
    // is GPU memory, a GPU runtime copy, complete when it returns).
    unsafe { rt.heap.copy(remote, src, bytes)? };
    ring(&rt.heap.control(pe).header().data_bell);
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
    #[cfg(feature = "mpi")]
    if let Some(ro) = rt.ro().filter(|_| !rt.heap.mapped(pe)) {
        rt.heap.offset_of(src as usize, bytes, "source")?;
        if dst.is_null() {
            return Err(Error::NullPointer("destination"));
        }
        Stats::add(&rt.stats.gets, 1);
        Stats::add(&rt.stats.get_bytes, bytes as u64);
        // SAFETY: the caller's writable destination; the source is checked.
        return unsafe { ro.get(dst, src as usize, bytes, pe) };
    }
    let remote = rt.heap.peer_addr(src as usize, bytes, pe, "source")?;
    if dst.is_null() {
        return Err(Error::NullPointer("destination"));
    }
    // SAFETY: as in put, reversed.
    unsafe { rt.heap.copy(dst, remote as *const u8, bytes)? };
    Stats::add(&rt.stats.gets, 1);
    Stats::add(&rt.stats.get_bytes, bytes as u64);
    Ok(())
}

/// Stores one element at symmetric `dst` on PE `pe`.
pub fn p<T: Scalar>(rt: &Runtime, dst: *mut T, value: T, pe: usize) -> Result<()> {
    #[cfg(feature = "mpi")]
    if rt.ro().is_some() && !rt.heap.mapped(pe) {
        // SAFETY: a local copy of the value.
        return unsafe { put(rt, dst.cast(), (&value as *const T).cast(), std::mem::size_of::<T>(), pe) };
    }
    let remote = rt.heap.peer_addr(dst as usize, std::mem::size_of::<T>(), pe, "destination")?;
    if rt.heap.host_accessible() {
        T::store(remote.cast(), value);
    } else {
        // SAFETY: one element inside PE `pe`'s heap, from a local copy of the value.
        unsafe { rt.heap.copy(remote, (&value as *const T).cast(), std::mem::size_of::<T>())? };
    }
    ring(&rt.heap.control(pe).header().data_bell);
    Stats::add(&rt.stats.puts, 1);
    Stats::add(&rt.stats.put_bytes, std::mem::size_of::<T>() as u64);
    Ok(())
}

/// Loads one element from symmetric `src` on PE `pe`.
pub fn g<T: Scalar>(rt: &Runtime, src: *const T, pe: usize) -> Result<T> {
    #[cfg(feature = "mpi")]
    if rt.ro().is_some() && !rt.heap.mapped(pe) {
        let mut v = std::mem::MaybeUninit::<T>::uninit();
        // SAFETY: local storage of one element; every bit pattern is a value of T.
        unsafe {
            get(rt, v.as_mut_ptr().cast(), src.cast(), std::mem::size_of::<T>(), pe)?;
            return Ok(v.assume_init());
        }
    }
    let remote = rt.heap.peer_addr(src as usize, std::mem::size_of::<T>(), pe, "source")?;
    Stats::add(&rt.stats.gets, 1);
    Stats::add(&rt.stats.get_bytes, std::mem::size_of::<T>() as u64);
    if rt.heap.host_accessible() {
        return Ok(T::load(remote as *const T));
    }
    let mut v = std::mem::MaybeUninit::<T>::uninit();
    // SAFETY: one element of PE `pe`'s heap into local storage of that size; every bit pattern
    // the heap holds is a value of T (plain scalars).
    unsafe {
        rt.heap.copy(v.as_mut_ptr().cast(), remote as *const u8, std::mem::size_of::<T>())?;
        Ok(v.assume_init())
    }
}

/// `rocshmem_ptr`: the address of symmetric `addr` in PE `pe`'s heap, usable with loads and
/// stores from this process (every PE on the host platform), or None. On a GPU platform it is
/// the address of the peer's GPU memory as mapped here: usable by device code and GPU copies.
pub fn ptr(rt: &Runtime, addr: *const u8, pe: usize) -> Option<*mut u8> {
    rt.heap.peer_addr(addr as usize, 1, pe, "address").ok()
}

/// `quiet` / `fence`: on this backend every operation is complete when it returns; the fence
/// orders them for other PEs' observers. On the RO backend also `MPI_Win_flush_all`.
pub fn quiet() {
    std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
    #[cfg(feature = "mpi")]
    if let Some(ro) = crate::runtime::get().ok().and_then(|rt| rt.ro()) {
        ro.flush_all();
    }
}
