//! Host collectives over a set of PEs (a team, or an OpenSHMEM active set): argument checks
//! and counts here, the data movement in the transport of the set (`transport`).
//!
//! On IPC every member's symmetric buffers are mapped, so members read each other's sources
//! directly between barriers. On RO (a set with members this PE does not map) each collective
//! runs as blocking MPI collectives on the set's host communicator: broadcast is `MPI_Ibcast`;
//! reductions gather every member's source (`MPI_Iallgather`, or `MPI_Ialltoall` for
//! reduce-scatter). Both combine the members in member order with the same loop
//! (`transport::combine`), so every PE computes bitwise-identical results (floating point
//! included) and every type and operation of the host API works on both. The `pSync`/`pWrk`
//! arrays of the active-set forms are not needed and are left untouched (they stay at their
//! initial values, as OpenSHMEM requires).
//!
//! When the heaps are GPU memory, IPC runs the team broadcast and reduction as the stream
//! helper kernels of `rocshmem_broadcastmem_on_stream` and `rocshmem_ctx_<T>_<op>_reduce_on_stream`
//! on the library's own stream and waits for them (`transport::gpu_heap`; a reduction names its
//! kernel, [`ReduceOp`]); the forms without such a kernel (reduce-scatter, the active-set forms)
//! say so.

use crate::error::{Error, Result};
use crate::runtime::{Runtime, Stats};
use crate::scalar::Scalar;
use crate::transport::{Reduce, ReduceOp, Transport};

pub use crate::transport::Group;

impl Group {
    pub fn barrier(&self, rt: &Runtime) -> Result<()> {
        rt.net.barrier(&rt.heap, self.set, self.slot)
    }
}

fn check_sym(rt: &Runtime, addr: usize, bytes: usize, what: &'static str) -> Result<()> {
    rt.heap.offset_of(addr, bytes.max(1), what).map(|_| ())
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

/// Checks a collective's `dst` (`dst_bytes`) and `src` (`src_bytes`) ranges, then counts it.
fn check_buffers(rt: &Runtime, dst: usize, dst_bytes: usize, src: usize, src_bytes: usize) -> Result<()> {
    if dst_bytes > 0 {
        check_sym(rt, dst, dst_bytes, "dest")?;
        check_sym(rt, src, src_bytes, "source")?;
        check_overlap(dst, dst_bytes, src, src_bytes, true)?;
    }
    Stats::add(&rt.stats.collectives, 1);
    Ok(())
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
    check_buffers(rt, dst as usize, bytes, src as usize, bytes)?;
    // SAFETY: checked symmetric buffers.
    unsafe { rt.net.set(g.set).broadcast(&rt.heap, g, dst, src, bytes, root as usize, to_root) }
}

/// A reduction over the members, `how`: [`Reduce::All`], `dst[i] = op(src_0[i], ...,
/// src_{n-1}[i])` on every member; [`Reduce::Scatter`], member `k` gets
/// `dst[i] = op over members of src_m[k*n + i]` (src holds n × members).
///
/// # Safety
/// `dst` must be a symmetric array of `n` elements, `src` of `n` (All) or `n` × members
/// (Scatter) elements (checked against the heap). `kernel`: the stream helper kernel of this
/// type and operation (`reduce_<type>_<op>`), for a heap of GPU memory.
#[allow(clippy::too_many_arguments)]
pub unsafe fn reduce<T: Scalar, F: Fn(T, T) -> T + Copy>(
    rt: &Runtime,
    g: &Group,
    dst: *mut T,
    src: *const T,
    n: usize,
    op: F,
    how: Reduce,
    kernel: &str,
) -> Result<()> {
    let out_bytes = crate::rma::byte_len(n, std::mem::size_of::<T>())?;
    let blocks = match how {
        Reduce::All => 1,
        Reduce::Scatter => g.set.size,
    };
    let in_bytes = crate::rma::byte_len(out_bytes, blocks)?;
    check_buffers(rt, dst as usize, out_bytes, src as usize, in_bytes)?;
    // SAFETY: checked symmetric arrays of n and n × blocks elements.
    unsafe { rt.net.set(g.set).reduce(&rt.heap, g, dst, src, n, ReduceOp { f: op, kernel }, how) }
}
