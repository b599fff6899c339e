//! The stream-ordered host API (`rocshmem_*_on_stream`): argument checks, then one helper kernel
//! (or, for large putmem/getmem on a GPU, one copy) enqueued on the caller's stream; the call
//! returns at once. Also the host platform's stream handles (`rocshmem_host_stream_*`, the
//! `hipStreamCreate`/`Synchronize`/`Destroy` of <rocshmem/host_kernel.hpp>). See
//! src/stream.rs and docs/streams.md.

use super::*;
use crate::gpu::Platform;
use crate::stream::{self, COPY_THRESHOLD, StreamArgs, Work};
use std::ffi::{c_int, c_void};

/// Enqueues helper kernel `name` with `args` for `call` on one work-group.
fn kernel(rt: &Runtime, call: &'static str, stream: *mut c_void, name: &str, args: StreamArgs) -> Result<()> {
    collective(rt, call, stream, name, args, 0)
}

/// Enqueues helper kernel `name` with `args` for `call`, a collective that spreads `spread`
/// bytes over several work-groups when it is large (src/stream.rs, `groups`).
fn collective(
    rt: &Runtime,
    call: &'static str,
    stream: *mut c_void,
    name: &str,
    mut args: StreamArgs,
    spread: u64,
) -> Result<()> {
    // The default context by its handle: the kernel then needs no module global to find it.
    if args.ctx_opaque.is_null() {
        args.ctx_opaque = rt.ctxs.opaque(0);
    }
    // SAFETY: the caller's stream; the memory the arguments name was checked by the caller.
    unsafe { stream::enqueue(rt, call, stream, Work::Kernel { name: name.to_string(), args, spread }) }
}

/// Checks a symmetric range of this PE's heap (`len` bytes at `addr`).
fn symmetric(rt: &Runtime, addr: *const c_void, len: usize, what: &'static str) -> Result<()> {
    rt.heap.offset_of(addr as usize, len, what).map(|_| ())
}

fn signal_word(rt: &Runtime, sig_addr: *mut u64) -> Result<()> {
    if (sig_addr as usize) % 8 != 0 {
        return Err(Error::invalid(format!("sig_addr {sig_addr:p} is not 8-byte aligned")));
    }
    symmetric(rt, sig_addr.cast(), 8, "signal")
}

fn sig_op_ok(sig_op: c_int) -> Result<()> {
    if sig_op == ROCSHMEM_SIGNAL_SET || sig_op == ROCSHMEM_SIGNAL_ADD {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "sig_op={sig_op}: must be ROCSHMEM_SIGNAL_SET ({ROCSHMEM_SIGNAL_SET}) or ROCSHMEM_SIGNAL_ADD ({ROCSHMEM_SIGNAL_ADD})"
        )))
    }
}

/// putmem (`get` false) or getmem on a stream.
fn rma_on_stream(
    call: &'static str,
    get: bool,
    dest: *mut c_void,
    source: *const c_void,
    nelems: usize,
    pe: c_int,
    stream: *mut c_void,
) {
    void_call(call, || {
        let rt = rt()?;
        let wpe = rt.check_pe(pe as i64)?;
        let (sym, local, what): (*const c_void, *const c_void, _) =
            if get { (source, dest, "source") } else { (dest as *const c_void, source, "destination") };
        if nelems == 0 {
            return Ok(());
        }
        // Symmetric on this PE; the kernel path reaches peers this PE does not map (RO backend).
        rt.heap.offset_of(sym as usize, nelems, what)?;
        if local.is_null() {
            return Err(Error::NullPointer(if get { "destination" } else { "source" }));
        }
        // A GPU's copy engine, between the local buffer and the peer's mapped heap (a peer the RO
        // backend reaches is not mapped: the kernel path carries it): for large copies, and for
        // every size inside a graph capture, where a copy node replays in about half the time of
        // a kernel node (measured on one H200: 8 B 2.0 us as a kernel, NVSHMEM's copy node 1.03 us).
        if rt.gpu.platform() != Platform::Host
            && rt.heap.mapped(wpe)
            && (nelems >= COPY_THRESHOLD || rt.gpu.stream_capturing(stream)?)
        {
            let remote = rt.heap.peer_addr(sym as usize, nelems, wpe, what)?;
            let (dst, src) = if get { (dest.cast::<u8>(), remote as *const u8) } else { (remote, source.cast::<u8>()) };
            // SAFETY: the symmetric side is checked; the local side is the caller's buffer.
            return unsafe { stream::enqueue(rt, call, stream, Work::Copy { dst, src, len: nelems }) };
        }
        let args = StreamArgs { dest, source, count: nelems as u64, pe, ..Default::default() };
        kernel(rt, call, stream, if get { "getmem" } else { "putmem" }, args)
    })
}

/// Enqueues a copy of `nelems` bytes from local `source` to symmetric `dest` on PE `pe` on
/// `stream` (NULL: the default stream); complete when the stream reaches it.
///
/// # Safety
/// `source` must stay readable for `nelems` bytes until the stream has run the copy.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rocshmem_putmem_on_stream(
    dest: *mut c_void,
    source: *const c_void,
    nelems: usize,
    pe: c_int,
    stream: *mut c_void,
) {
    rma_on_stream("rocshmem_putmem_on_stream", false, dest, source, nelems, pe, stream)
}

/// Enqueues a copy of `nelems` bytes from symmetric `source` on PE `pe` to local `dest` on
/// `stream`.
///
/// # Safety
/// `dest` must stay writable for `nelems` bytes until the stream has run the copy.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rocshmem_getmem_on_stream(
    dest: *mut c_void,
    source: *const c_void,
    nelems: usize,
    pe: c_int,
    stream: *mut c_void,
) {
    rma_on_stream("rocshmem_getmem_on_stream", true, dest, source, nelems, pe, stream)
}

/// Enqueues a put of `nelems` bytes to PE `pe` followed by the update of its signal word
/// `sig_addr` (`sig_op`: ROCSHMEM_SIGNAL_SET or _ADD with `signal`) on `stream`.
///
/// # Safety
/// `source` must stay readable for `nelems` bytes until the stream has run the operation.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn rocshmem_putmem_signal_on_stream(
    dest: *mut c_void,
    source: *const c_void,
    nelems: usize,
    sig_addr: *mut u64,
    signal: u64,
    sig_op: c_int,
    pe: c_int,
    stream: *mut c_void,
) {
    void_call("rocshmem_putmem_signal_on_stream", || {
        let rt = rt()?;
        rt.check_pe(pe as i64)?;
        sig_op_ok(sig_op)?;
        signal_word(rt, sig_addr)?;
        if nelems > 0 {
            symmetric(rt, dest, nelems, "destination")?;
            if source.is_null() {
                return Err(Error::NullPointer("source"));
            }
        }
        let args = StreamArgs {
            dest,
            source,
            count: nelems as u64,
            sig_addr,
            value: signal,
            op: sig_op,
            pe,
            ..Default::default()
        };
        kernel(rt, "rocshmem_putmem_signal_on_stream", stream, "putmem_signal", args)
    })
}

/// Enqueues on `stream` a wait until this PE's signal word `sig_addr` compares to `cmp_value`
/// as `cmp` (ROCSHMEM_CMP_*) says: later work on the stream runs after it.
#[unsafe(no_mangle)]
pub extern "C" fn rocshmem_signal_wait_until_on_stream(
    sig_addr: *mut u64,
    cmp: c_int,
    cmp_value: u64,
    stream: *mut c_void,
) {
    void_call("rocshmem_signal_wait_until_on_stream", || {
        let rt = rt()?;
        if !(ROCSHMEM_CMP_EQ..=ROCSHMEM_CMP_LE).contains(&cmp) {
            return Err(Error::invalid(format!("cmp={cmp}: must be one of ROCSHMEM_CMP_EQ..ROCSHMEM_CMP_LE (0..5)")));
        }
        signal_word(rt, sig_addr)?;
        let args = StreamArgs { sig_addr, op: cmp, value: cmp_value, ..Default::default() };
        kernel(rt, "rocshmem_signal_wait_until_on_stream", stream, "signal_wait_until", args)
    })
}

fn signal_on_stream(call: &'static str, name: &str, sig_addr: *mut u64, signal: u64, pe: c_int, stream: *mut c_void) {
    void_call(call, || {
        let rt = rt()?;
        rt.check_pe(pe as i64)?;
        signal_word(rt, sig_addr)?;
        kernel(rt, call, stream, name, StreamArgs { sig_addr, value: signal, pe, ..Default::default() })
    })
}

/// Enqueues an atomic add of `signal` to the signal word `sig_addr` of PE `pe` on `stream`.
#[unsafe(no_mangle)]
pub extern "C" fn rocshmem_signal_add_on_stream(sig_addr: *mut u64, signal: u64, pe: c_int, stream: *mut c_void) {
    signal_on_stream("rocshmem_signal_add_on_stream", "signal_add", sig_addr, signal, pe, stream)
}

/// Enqueues an atomic store of `signal` to the signal word `sig_addr` of PE `pe` on `stream`.
#[unsafe(no_mangle)]
pub extern "C" fn rocshmem_signal_set_on_stream(sig_addr: *mut u64, signal: u64, pe: c_int, stream: *mut c_void) {
    signal_on_stream("rocshmem_signal_set_on_stream", "signal_set", sig_addr, signal, pe, stream)
}

/// Enqueues on `stream` the completion of the operations enqueued before it.
#[unsafe(no_mangle)]
pub extern "C" fn rocshmem_quiet_on_stream(stream: *mut c_void) {
    void_call("rocshmem_quiet_on_stream", || {
        kernel(rt()?, "rocshmem_quiet_on_stream", stream, "quiet", StreamArgs::default())
    })
}

/// A barrier (`sync` false) or sync kernel over `team` (None: the world).
fn sync_on_stream(call: &'static str, name: &str, team: Option<rocshmem_team_t>, stream: *mut c_void) {
    void_call(call, || {
        let rt = rt()?;
        if let Some(t) = team {
            team_of(rt, t)?;
        }
        let args = StreamArgs { team: team.unwrap_or(std::ptr::null_mut()), ..Default::default() };
        kernel(rt, call, stream, name, args)
    })
}

/// Enqueues a barrier over every PE on `stream` (earlier operations on it complete first).
#[unsafe(no_mangle)]
pub extern "C" fn rocshmem_barrier_all_on_stream(stream: *mut c_void) {
    sync_on_stream("rocshmem_barrier_all_on_stream", "barrier_all", None, stream)
}

/// Enqueues a barrier over the members of `team` on `stream`.
#[unsafe(no_mangle)]
pub extern "C" fn rocshmem_barrier_on_stream(team: rocshmem_team_t, stream: *mut c_void) {
    sync_on_stream("rocshmem_barrier_on_stream", "barrier", Some(team), stream)
}

/// Enqueues a sync (a barrier that completes nothing) over every PE on `stream`.
#[unsafe(no_mangle)]
pub extern "C" fn rocshmem_sync_all_on_stream(stream: *mut c_void) {
    sync_on_stream("rocshmem_sync_all_on_stream", "sync_all", None, stream)
}

/// Enqueues a sync over the members of `team` on `stream`.
#[unsafe(no_mangle)]
pub extern "C" fn rocshmem_team_sync_on_stream(team: rocshmem_team_t, stream: *mut c_void) {
    sync_on_stream("rocshmem_team_sync_on_stream", "team_sync", Some(team), stream)
}

/// Enqueues on `stream` an all-to-all over `team`: `size` bytes from each member to each member.
///
/// # Safety
/// `dest` and `source` must be symmetric, `size` times the team size bytes each.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rocshmem_alltoallmem_on_stream(
    team: rocshmem_team_t,
    dest: *mut c_void,
    source: *const c_void,
    size: usize,
    stream: *mut c_void,
) {
    void_call("rocshmem_alltoallmem_on_stream", || {
        let rt = rt()?;
        let t = team_of(rt, team)?;
        let total = crate::rma::byte_len(size, t.set.size)?;
        if total > 0 {
            symmetric(rt, dest, total, "destination")?;
            symmetric(rt, source, total, "source")?;
            crate::coll::check_overlap(dest as usize, total, source as usize, total, false)?;
        }
        let args = StreamArgs { team, dest, source, count: size as u64, ..Default::default() };
        collective(rt, "rocshmem_alltoallmem_on_stream", stream, "alltoallmem", args, total as u64)
    })
}

/// Enqueues on `stream` a broadcast of `nelems` bytes from `source` on team member `pe_root`
/// to `dest` on every member.
///
/// # Safety
/// `dest` and `source` must be symmetric, `nelems` bytes each.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rocshmem_broadcastmem_on_stream(
    team: rocshmem_team_t,
    dest: *mut c_void,
    source: *const c_void,
    nelems: usize,
    pe_root: c_int,
    stream: *mut c_void,
) {
    void_call("rocshmem_broadcastmem_on_stream", || {
        let rt = rt()?;
        let t = team_of(rt, team)?;
        if pe_root < 0 || pe_root as usize >= t.set.size {
            return Err(Error::invalid(format!(
                "pe_root={pe_root}: the team has {} members (0..{})",
                t.set.size,
                t.set.size - 1
            )));
        }
        if nelems > 0 {
            symmetric(rt, dest, nelems, "destination")?;
            symmetric(rt, source, nelems, "source")?;
            crate::coll::check_overlap(dest as usize, nelems, source as usize, nelems, true)?;
        }
        let args = StreamArgs { team, dest, source, count: nelems as u64, pe: pe_root, ..Default::default() };
        collective(rt, "rocshmem_broadcastmem_on_stream", stream, "broadcastmem", args, nelems as u64)
    })
}

/// The typed `rocshmem_ctx_<T>_<op>_reduce_on_stream`: 0 when enqueued, else ROCSHMEM_ERROR.
#[allow(clippy::too_many_arguments)]
pub(crate) fn reduce<T>(
    call: &'static str,
    ctx: rocshmem_ctx_t,
    team: rocshmem_team_t,
    dest: *mut T,
    source: *const T,
    nreduce: c_int,
    stream: *mut c_void,
    tname: &str,
    op: &str,
) -> c_int {
    status_call(call, || {
        let rt = rt()?;
        ctx_team(rt, Some(ctx))?;
        team_of(rt, team)?;
        let bytes = crate::rma::byte_len(count(nreduce, "nreduce")?, std::mem::size_of::<T>())?;
        if bytes > 0 {
            symmetric(rt, dest.cast(), bytes, "destination")?;
            symmetric(rt, source.cast(), bytes, "source")?;
            crate::coll::check_overlap(dest as usize, bytes, source as usize, bytes, true)?;
        }
        let args = StreamArgs {
            ctx_opaque: ctx.ctx_opaque,
            ctx_team: ctx.team_opaque,
            team,
            dest: dest.cast(),
            source: source.cast(),
            count: nreduce as u64,
            ..Default::default()
        };
        // In place (dest == source; other overlap was refused above): one work-group, staged
        // through the team's scratch.
        let spread = if std::ptr::eq(dest, source) { 0 } else { bytes as u64 };
        collective(rt, call, stream, &format!("reduce_{tname}_{op}"), args, spread)
    })
}

/// Host platform: creates an ordered host queue, the stream of the `*_on_stream` calls (the
/// `hipStreamCreate` of <rocshmem/host_kernel.hpp>). 0, or ROCSHMEM_ERROR on a GPU platform
/// (use its runtime's streams there).
///
/// # Safety
/// `stream` must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rocshmem_host_stream_create(stream: *mut *mut c_void) -> c_int {
    status_call("rocshmem_host_stream_create", || {
        if stream.is_null() {
            return Err(Error::NullPointer("stream"));
        }
        if let Ok(rt) = rt() {
            let p = rt.gpu.platform();
            if p != Platform::Host {
                return Err(Error::invalid(format!(
                    "this process runs the {} platform: create streams with its runtime (cudaStreamCreate / \
                     hipStreamCreate); host streams are for the host platform",
                    p.name()
                )));
            }
        }
        let h = crate::gpu::host_streams::create()?;
        // SAFETY: checked non-null; the caller's pointer.
        unsafe { *stream = h as *mut c_void };
        Ok(())
    })
}

/// Host platform: waits until everything enqueued on `stream` (NULL: the default stream) has
/// run. ROCSHMEM_ERROR if an operation on it failed since the last synchronize (each failure
/// was also reported when it happened).
#[unsafe(no_mangle)]
pub extern "C" fn rocshmem_host_stream_synchronize(stream: *mut c_void) -> c_int {
    status_call("rocshmem_host_stream_synchronize", || crate::gpu::host_streams::synchronize(stream as usize))
}

/// Host platform: waits for `stream`'s work, then destroys it.
#[unsafe(no_mangle)]
pub extern "C" fn rocshmem_host_stream_destroy(stream: *mut c_void) -> c_int {
    status_call("rocshmem_host_stream_destroy", || crate::gpu::host_streams::destroy(stream as usize))
}
