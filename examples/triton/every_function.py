"""Triton kernels that call every device function of rocshmem.triton (compiled, never run): the
link checks of examples/triton/check_compile.py (NVIDIA) and ctests/python/test_triton_amd.py
(AMD) compile them against the device bitcode. EVERY and TEAM are their signatures."""

import triton
import triton.language as tl

import rocshmem.triton as rt


@triton.jit
def every_function(dst, src, sig, out, words, words32, nbytes):
    """Calls every device function of rocshmem.triton except the team collectives."""
    me = rt.my_pe()
    n = rt.n_pes()
    nxt = (me + 1) % n
    rt.putmem_wg(dst, src, nbytes, nxt)
    rt.putmem_nbi_wg(dst, src, nbytes, nxt)
    rt.getmem_wg(dst, src, nbytes, nxt)
    rt.putmem_signal_wg(dst, src, nbytes, sig, 1, rt.SIGNAL_ADD, nxt)
    rt.uint64_wait_until(sig, rt.CMP_GE, 1)
    v = rt.signal_fetch(sig)
    rt.signal_set(sig, 5, nxt)
    rt.signal_add(sig, 1, nxt)
    rt.signal_op(sig, 1, rt.SIGNAL_ADD, nxt)
    w = rt.signal_wait_until(sig, rt.CMP_GE, 6)
    peer = rt.ptr(words, nxt)
    acc = v.to(tl.int64) + w.to(tl.int64) + tl.load(peer)
    rt.int_p(words32, me, nxt)
    rt.long_p(words, me, nxt)
    rt.float_p(words32 + 1, 1.5, nxt)
    rt.double_p(words + 1, 2.5, nxt)
    acc += rt.int_g(words32, nxt).to(tl.int64) + rt.long_g(words, nxt)
    acc += rt.float_g(words32 + 1, nxt).to(tl.int64) + rt.double_g(words + 1, nxt).to(tl.int64)
    acc += rt.int32_atomic_fetch(words32, nxt).to(tl.int64)
    rt.int32_atomic_set(words32, 1, nxt)
    acc += rt.int32_atomic_swap(words32, 2, nxt).to(tl.int64)
    acc += rt.int32_atomic_compare_swap(words32, 2, 3, nxt).to(tl.int64)
    acc += rt.int32_atomic_fetch_add(words32, 4, nxt).to(tl.int64)
    rt.int32_atomic_add(words32, 5, nxt)
    acc += rt.int32_atomic_fetch_inc(words32, nxt).to(tl.int64)
    rt.int32_atomic_inc(words32, nxt)
    acc += rt.int32_atomic_fetch_and(words32, 7, nxt).to(tl.int64)
    rt.int32_atomic_and(words32, 7, nxt)
    acc += rt.int32_atomic_fetch_or(words32, 8, nxt).to(tl.int64)
    rt.int32_atomic_or(words32, 8, nxt)
    acc += rt.int32_atomic_fetch_xor(words32, 9, nxt).to(tl.int64)
    rt.int32_atomic_xor(words32, 9, nxt)
    acc += rt.int64_atomic_fetch(words, nxt)
    rt.int64_atomic_set(words, 1, nxt)
    acc += rt.int64_atomic_swap(words, 2, nxt)
    acc += rt.int64_atomic_compare_swap(words, 2, 3, nxt)
    acc += rt.int64_atomic_fetch_add(words, 4, nxt)
    rt.int64_atomic_add(words, 5, nxt)
    acc += rt.int64_atomic_fetch_inc(words, nxt)
    rt.int64_atomic_inc(words, nxt)
    acc += rt.int64_atomic_fetch_and(words, 7, nxt)
    rt.int64_atomic_and(words, 7, nxt)
    acc += rt.int64_atomic_fetch_or(words, 8, nxt)
    rt.int64_atomic_or(words, 8, nxt)
    acc += rt.int64_atomic_fetch_xor(words, 9, nxt)
    rt.int64_atomic_xor(words, 9, nxt)
    acc += rt.uint32_atomic_fetch(words32, nxt).to(tl.int64)
    rt.uint32_atomic_set(words32, 1, nxt)
    acc += rt.uint32_atomic_swap(words32, 2, nxt).to(tl.int64)
    acc += rt.uint32_atomic_compare_swap(words32, 2, 3, nxt).to(tl.int64)
    acc += rt.uint32_atomic_fetch_add(words32, 4, nxt).to(tl.int64)
    rt.uint32_atomic_add(words32, 5, nxt)
    acc += rt.uint32_atomic_fetch_inc(words32, nxt).to(tl.int64)
    rt.uint32_atomic_inc(words32, nxt)
    acc += rt.uint32_atomic_fetch_and(words32, 7, nxt).to(tl.int64)
    rt.uint32_atomic_and(words32, 7, nxt)
    acc += rt.uint32_atomic_fetch_or(words32, 8, nxt).to(tl.int64)
    rt.uint32_atomic_or(words32, 8, nxt)
    acc += rt.uint32_atomic_fetch_xor(words32, 9, nxt).to(tl.int64)
    rt.uint32_atomic_xor(words32, 9, nxt)
    acc += rt.uint64_atomic_fetch(sig, nxt).to(tl.int64)
    rt.uint64_atomic_set(sig, 1, nxt)
    acc += rt.uint64_atomic_swap(sig, 2, nxt).to(tl.int64)
    acc += rt.uint64_atomic_compare_swap(sig, 2, 3, nxt).to(tl.int64)
    acc += rt.uint64_atomic_fetch_add(sig, 4, nxt).to(tl.int64)
    rt.uint64_atomic_add(sig, 5, nxt)
    acc += rt.uint64_atomic_fetch_inc(sig, nxt).to(tl.int64)
    rt.uint64_atomic_inc(sig, nxt)
    acc += rt.uint64_atomic_fetch_and(sig, 7, nxt).to(tl.int64)
    rt.uint64_atomic_and(sig, 7, nxt)
    acc += rt.uint64_atomic_fetch_or(sig, 8, nxt).to(tl.int64)
    rt.uint64_atomic_or(sig, 8, nxt)
    acc += rt.uint64_atomic_fetch_xor(sig, 9, nxt).to(tl.int64)
    rt.uint64_atomic_xor(sig, 9, nxt)
    rt.quiet()
    rt.fence()
    rt.sync_all_wg()
    rt.barrier_all_wg()
    tl.store(out, acc + me + n)


@triton.jit
def team_collectives(dst, src, out, fdst, fsrc, nbytes, team):
    """The team collectives, on the world team as a constant (0) and as a run-time value (``team``);
    their statuses summed into ``out``."""
    s = rt.team_barrier_wg(0) + rt.team_barrier_wg(team)
    s += rt.broadcastmem_wg(0, dst, src, nbytes, 0) + rt.broadcastmem_wg(team, dst, src, nbytes, 0)
    s += rt.alltoallmem_wg(0, dst, src, nbytes) + rt.alltoallmem_wg(team, dst, src, nbytes)
    s += rt.fcollectmem_wg(0, dst, src, nbytes) + rt.fcollectmem_wg(team, dst, src, nbytes)
    s += rt.short_sum_reduce_wg(0, dst, src, 4) + rt.short_max_reduce_wg(0, dst, src, 4)
    s += rt.short_min_reduce_wg(0, dst, src, 4) + rt.short_prod_reduce_wg(team, dst, src, 4)
    s += rt.int_sum_reduce_wg(0, dst, src, 4) + rt.int_max_reduce_wg(0, dst, src, 4)
    s += rt.int_min_reduce_wg(0, dst, src, 4) + rt.int_prod_reduce_wg(team, dst, src, 4)
    s += rt.long_sum_reduce_wg(0, dst, src, 4) + rt.long_max_reduce_wg(0, dst, src, 4)
    s += rt.long_min_reduce_wg(0, dst, src, 4) + rt.long_prod_reduce_wg(team, dst, src, 4)
    s += rt.longlong_sum_reduce_wg(0, dst, src, 4) + rt.longlong_max_reduce_wg(0, dst, src, 4)
    s += rt.longlong_min_reduce_wg(0, dst, src, 4) + rt.longlong_prod_reduce_wg(team, dst, src, 4)
    s += rt.float_sum_reduce_wg(0, fdst, fsrc, 4) + rt.float_max_reduce_wg(0, fdst, fsrc, 4)
    s += rt.float_min_reduce_wg(0, fdst, fsrc, 4) + rt.float_prod_reduce_wg(team, fdst, fsrc, 4)
    s += rt.double_sum_reduce_wg(0, fdst, fsrc, 4) + rt.double_max_reduce_wg(0, fdst, fsrc, 4)
    s += rt.double_min_reduce_wg(0, fdst, fsrc, 4) + rt.double_prod_reduce_wg(team, fdst, fsrc, 4)
    tl.store(out, s)


EVERY = {"dst": "*u8", "src": "*u8", "sig": "*u64", "out": "*i64", "words": "*i64", "words32": "*i32", "nbytes": "i64"}
TEAM = {"dst": "*u8", "src": "*u8", "out": "*i32", "fdst": "*fp32", "fsrc": "*fp32", "nbytes": "i64", "team": "i32"}
