//! Host collectives over a set of PEs (a team, or an OpenSHMEM active set).
//!
//! On the IPC backend every member's symmetric buffers are mapped, so members read each other's
//! sources directly between barriers. Reductions combine members in index order, so every PE
//! computes bitwise-identical results (floating point included). The `pSync`/`pWrk` arrays of
//! the active-set forms are not needed and are left untouched (they stay at their initial
//! values, as OpenSHMEM requires).
//!
//! On the RO backend, a set with members this PE does not map runs each collective as blocking
//! MPI collectives on the set's host communicator: broadcast is `MPI_Ibcast`; reductions
//! gather every member's source (`MPI_Iallgather`, or `MPI_Ialltoall` for reduce-scatter) and
//! combine them here in member order with the same loop as the IPC path, so results match it
//! bit for bit and every type and operation of the host API works.

use crate::error::{Error, Result};
use crate::runtime::{Runtime, Stats};
use crate::scalar::Scalar;
use crate::sync::PeSet;

/// Sizes at which a reduction splits the work (reduce-scatter, then all-gather) instead of
/// every member combining everything.
const SPLIT_BYTES: usize = 32 * 1024;

pub struct Group {
    pub set: PeSet,
    pub slot: usize,
    pub my_idx: usize,
}

impl Group {
    pub fn barrier(&self, rt: &Runtime) -> Result<()> {
        rt.sync.barrier(&rt.heap, self.set, self.slot)
    }
}

fn check_sym(rt: &Runtime, addr: usize, bytes: usize, what: &'static str) -> Result<()> {
    rt.heap.offset_of(addr, bytes.max(1), what)?;
    rt.heap.require_host_access("host collectives")
}

/// Refuses a `dst` range that overlaps the `src` range other than by starting at the same
/// address (OpenSHMEM: a reduction or broadcast may work in place, `dest == source`, but the
/// arrays must not otherwise overlap; `exact_ok` false: they must not overlap at all). Every
/// member passes the same symmetric offsets, so every member gets the same verdict before any
/// synchronisation. Partial overlap is not undefined-but-harmless here: members read each
/// other's sources while they write their own destinations.
pub fn check_overlap(dst: usize, dst_bytes: usize, src: usize, src_bytes: usize, exact_ok: bool) -> Result<()> {
    let overlap = dst_bytes > 0 && src_bytes > 0 && dst < src + src_bytes && src < dst + dst_bytes;
    if !overlap || (exact_ok && dst == src) {
        return Ok(());
    }
    let (rel, gap) = if dst >= src { ("after", dst - src) } else { ("before", src - dst) };
    Err(Error::invalid(format!(
        "dest {dst:#x} (+{dst_bytes} bytes) overlaps source {src:#x} (+{src_bytes} bytes), starting {gap} bytes {rel} \
         it: {}; use separate buffers",
        if exact_ok { "only dest == source (in place) is allowed" } else { "dest and source must not overlap" }
    )))
}

/// Copies `bytes` from `src` on member `root` to `dst` on every member (and on the root too
/// when `to_root`, the OpenSHMEM 1.5 team form; the 1.4 active-set form leaves it).
///
/// # Safety
/// `dst` and `src` must be symmetric addresses of `bytes` (checked against the heap).
pub unsafe fn broadcast(
    rt: &Runtime,
    g: &Group,
    dst: *mut u8,
    src: *const u8,
    bytes: usize,
    root: i32,
    to_root: bool,
) -> Result<()> {
    if root < 0 || root as usize >= g.set.size {
        return Err(Error::invalid(format!("pe_root={root} is outside the {} members", g.set.size)));
    }
    if bytes > 0 {
        check_sym(rt, dst as usize, bytes, "dest")?;
        check_sym(rt, src as usize, bytes, "source")?;
        check_overlap(dst as usize, bytes, src as usize, bytes, true)?;
    }
    Stats::add(&rt.stats.collectives, 1);
    let root = root as usize;
    #[cfg(feature = "mpi")]
    if let Some(ro) = rt.sync.ro_for(g.set) {
        if bytes == 0 {
            return Ok(());
        }
        let buf = if g.my_idx == root { src as *mut u8 } else { dst };
        // SAFETY: checked symmetric buffers; at the root MPI only reads `src`.
        unsafe { ro.bcast(g.set, buf, bytes, root)? };
        if g.my_idx == root && to_root && !std::ptr::eq(dst, src) {
            // SAFETY: both ranges checked; memmove handles overlap.
            unsafe { std::ptr::copy(src, dst, bytes) };
        }
        return Ok(());
    }
    g.barrier(rt)?;
    if bytes > 0 && (g.my_idx != root || (to_root && !std::ptr::eq(dst, src))) {
        let from = rt.heap.peer_addr(src as usize, bytes, g.set.pe(root), "source")?;
        // SAFETY: both ranges were checked inside the heaps; memmove handles overlap.
        unsafe { std::ptr::copy(from as *const u8, dst, bytes) };
    }
    g.barrier(rt)
}

/// `dst[i] = op(src_0[i], ..., src_{n-1}[i])` over the members, on every member.
///
/// # Safety
/// `dst` and `src` must be symmetric arrays of `n` elements (checked against the heap).
pub unsafe fn reduce<T: Scalar, F: Fn(T, T) -> T + Copy>(
    rt: &Runtime,
    g: &Group,
    dst: *mut T,
    src: *const T,
    n: usize,
    op: F,
) -> Result<()> {
    let bytes = crate::rma::byte_len(n, std::mem::size_of::<T>())?;
    if n > 0 {
        check_sym(rt, dst as usize, bytes, "dest")?;
        check_sym(rt, src as usize, bytes, "source")?;
        check_overlap(dst as usize, bytes, src as usize, bytes, true)?;
    }
    Stats::add(&rt.stats.collectives, 1);
    #[cfg(feature = "mpi")]
    if let Some(ro) = rt.sync.ro_for(g.set) {
        if n == 0 {
            return ro.barrier(g.set);
        }
        let members = g.set.size;
        let mut all: Vec<T> = Vec::with_capacity(n * members);
        // SAFETY: `all` has room for every member's n elements; src is checked.
        unsafe {
            ro.allgather(g.set, src.cast(), all.as_mut_ptr().cast(), bytes)?;
            all.set_len(n * members);
        }
        // SAFETY: dst[0..n] checked above.
        unsafe { combine_blocks(&all, n, dst, op) };
        return Ok(());
    }
    g.barrier(rt)?;
    if n == 0 {
        return g.barrier(rt);
    }
    let sources = member_copies(rt, g, src, bytes)?;
    if bytes < SPLIT_BYTES || g.set.size < 3 {
        // Everyone combines everything into a private buffer, then overwrites dst once every
        // member has finished reading (dst may be src: in-place reductions).
        let acc = combine(&sources, 0, n, op);
        g.barrier(rt)?;
        // SAFETY: dst[0..n] checked above; acc has n elements.
        unsafe { std::ptr::copy_nonoverlapping(acc.as_ptr(), dst, n) };
        return Ok(());
    }
    // Member k combines chunk k into its own dst, then everyone gathers the chunks. Chunk k of
    // a source is read only by member k in the first step, so in-place works.
    let chunks = g.set.size;
    let bounds = |k: usize| (n * k / chunks, n * (k + 1) / chunks);
    let (lo, hi) = bounds(g.my_idx);
    let mine = combine(&sources, lo, hi, op);
    // SAFETY: [lo, hi) is inside dst[0..n].
    unsafe { std::ptr::copy_nonoverlapping(mine.as_ptr(), dst.add(lo), hi - lo) };
    g.barrier(rt)?;
    for k in (0..chunks).filter(|k| *k != g.my_idx) {
        let (lo, hi) = bounds(k);
        let theirs = rt.heap.peer_addr(dst as usize, bytes, g.set.pe(k), "dest")? as *const T;
        // SAFETY: chunk k of member k's dst is final and not written until the next barrier.
        unsafe { std::ptr::copy_nonoverlapping(theirs.add(lo), dst.add(lo), hi - lo) };
    }
    g.barrier(rt)
}

/// Member `k` gets `dst[i] = op over members of src_m[k*n + i]` (src holds n × members).
///
/// # Safety
/// `dst` must be a symmetric array of `n` elements, `src` of `n` × members (checked).
pub unsafe fn reduce_scatter<T: Scalar, F: Fn(T, T) -> T + Copy>(
    rt: &Runtime,
    g: &Group,
    dst: *mut T,
    src: *const T,
    n: usize,
    op: F,
) -> Result<()> {
    let out_bytes = crate::rma::byte_len(n, std::mem::size_of::<T>())?;
    let in_bytes = crate::rma::byte_len(out_bytes, g.set.size)?;
    if n > 0 {
        check_sym(rt, dst as usize, out_bytes, "dest")?;
        check_sym(rt, src as usize, in_bytes, "source")?;
        check_overlap(dst as usize, out_bytes, src as usize, in_bytes, true)?;
    }
    Stats::add(&rt.stats.collectives, 1);
    #[cfg(feature = "mpi")]
    if let Some(ro) = rt.sync.ro_for(g.set) {
        if n == 0 {
            return ro.barrier(g.set);
        }
        let members = g.set.size;
        let mut mine: Vec<T> = Vec::with_capacity(n * members);
        // SAFETY: block j of `mine` is member j's chunk for this PE; src is checked.
        unsafe {
            ro.alltoall(g.set, src.cast(), mine.as_mut_ptr().cast(), out_bytes)?;
            mine.set_len(n * members);
        }
        // SAFETY: dst[0..n] checked above.
        unsafe { combine_blocks(&mine, n, dst, op) };
        return Ok(());
    }
    g.barrier(rt)?;
    if n == 0 {
        return g.barrier(rt);
    }
    let sources = member_copies(rt, g, src, in_bytes)?;
    let lo = g.my_idx * n;
    let acc = combine(&sources, lo, lo + n, op);
    g.barrier(rt)?;
    // SAFETY: dst[0..n] checked above.
    unsafe { std::ptr::copy_nonoverlapping(acc.as_ptr(), dst, n) };
    Ok(())
}

/// Where each member's copy of the symmetric array `src` (`bytes` long) is mapped here.
fn member_copies<T>(rt: &Runtime, g: &Group, src: *const T, bytes: usize) -> Result<Vec<*const T>> {
    (0..g.set.size)
        .map(|i| rt.heap.peer_addr(src as usize, bytes, g.set.pe(i), "source").map(|p| p as *const T))
        .collect()
}

/// RO: `blocks` holds every member's n elements (member order); their combination goes to dst.
///
/// # Safety
/// `dst` must be writable for n elements.
#[cfg(feature = "mpi")]
unsafe fn combine_blocks<T: Scalar, F: Fn(T, T) -> T + Copy>(blocks: &[T], n: usize, dst: *mut T, op: F) {
    let sources: Vec<*const T> = blocks.chunks_exact(n).map(|b| b.as_ptr()).collect();
    let acc = combine(&sources, 0, n, op);
    // SAFETY: the caller's dst holds n elements; acc has n.
    unsafe { std::ptr::copy_nonoverlapping(acc.as_ptr(), dst, n) };
}

/// Elements `lo..hi` combined over all sources, in source order. `op` is a type parameter, not
/// a function pointer, so each reduction gets its own loop, which the compiler vectorises (an
/// indirect call per element made host reductions 2x slower than Open MPI's OpenSHMEM).
fn combine<T: Scalar, F: Fn(T, T) -> T + Copy>(sources: &[*const T], lo: usize, hi: usize, op: F) -> Vec<T> {
    // SAFETY: every source pointer covers at least `hi` elements (checked by the callers) and
    // no member writes them before the next barrier.
    let first = unsafe { std::slice::from_raw_parts(sources[0].add(lo), hi - lo) };
    let mut acc = first.to_vec();
    for s in &sources[1..] {
        let other = unsafe { std::slice::from_raw_parts(s.add(lo), hi - lo) };
        for (a, b) in acc.iter_mut().zip(other) {
            *a = op(*a, *b);
        }
    }
    acc
}
