#!/usr/bin/env python3
"""The rocshmem.triton device functions added for issue 39 at 2 PEs on NVIDIA GPUs (prepared on
the CPU machine; run by run_h200_more.sh): atomics on 32- and 64-bit words, scalar p/g, signal
set/add and wait, rocshmem_ptr for direct stores, each checked on the receiving PE with fresh
random values. A Triton program is one work-group and a call runs on every thread, so the
kernels call the functions elementwise over a block of addresses (one word per lane: exactly one
operation per word) or, for a signal, with the value non-zero in lane 0 only.

    rocshmem-run -n 2 python3 triton_device_test.py
"""

import faulthandler
import os
import random
import sys

import torch
import triton
import triton.language as tl

import rocshmem
import rocshmem.triton as rt

BLOCK = 32


@rt.jit
def amo_kernel(w32, w64, u32, u64, old32, old64, oldu32, oldu64, base, nxt, BLOCK: tl.constexpr):
    lanes = tl.arange(0, BLOCK)
    v = tl.load(base + lanes)  # this PE's values, one per lane
    tl.store(old32 + lanes, rt.int32_atomic_fetch_add(w32 + lanes, v.to(tl.int32), nxt))
    tl.store(old64 + lanes, rt.int64_atomic_fetch_add(w64 + lanes, v, nxt))
    tl.store(oldu32 + lanes, rt.uint32_atomic_fetch_add(u32 + lanes, v.to(tl.uint32), nxt).to(tl.int64))
    tl.store(oldu64 + lanes, rt.uint64_atomic_fetch_add(u64 + lanes, v.to(tl.uint64), nxt).to(tl.int64))
    rt.int32_atomic_add(w32 + lanes, 1, nxt)
    rt.int64_atomic_inc(w64 + lanes, nxt)
    rt.uint32_atomic_fetch_or(u32 + lanes, (1 << 30), nxt)
    rt.uint64_atomic_xor(u64 + lanes, (1 << 40), nxt)
    rt.barrier_all_wg()


@rt.jit
def cas_kernel(w64, out, base, nxt, BLOCK: tl.constexpr):
    lanes = tl.arange(0, BLOCK)
    v = tl.load(base + lanes)
    cur = rt.int64_atomic_fetch(w64 + lanes, nxt)
    miss = rt.int64_atomic_compare_swap(w64 + lanes, cur + 1, v, nxt)      # cond differs: no swap
    hit = rt.int64_atomic_compare_swap(w64 + lanes, cur, v * 3, nxt)       # swaps
    prev = rt.int64_atomic_swap(w64 + lanes, v * 5, nxt)
    tl.store(out + lanes, (miss == cur).to(tl.int64) + (hit == cur).to(tl.int64) + (prev == v * 3).to(tl.int64))
    rt.barrier_all_wg()


@rt.jit
def pg_kernel(w32, w64, f32, f64, got32, got64, gotf, gotd, base, nxt, me, BLOCK: tl.constexpr):
    lanes = tl.arange(0, BLOCK)
    v = tl.load(base + lanes)
    rt.int_p(w32 + lanes, v.to(tl.int32), nxt)
    rt.long_p(w64 + lanes, v * 7, nxt)
    rt.float_p(f32 + lanes, v.to(tl.float32) * 0.5, nxt)
    rt.double_p(f64 + lanes, v.to(tl.float64) * 0.25, nxt)
    rt.quiet()
    rt.barrier_all_wg()
    # What this PE wrote on nxt, read back with g.
    tl.store(got32 + lanes, rt.int_g(w32 + lanes, nxt))
    tl.store(got64 + lanes, rt.long_g(w64 + lanes, nxt))
    tl.store(gotf + lanes, rt.float_g(f32 + lanes, nxt))
    tl.store(gotd + lanes, rt.double_g(f64 + lanes, nxt))
    rt.barrier_all_wg()


@rt.jit
def signal_ptr_kernel(data, sig, seen, base, nxt, epoch, BLOCK: tl.constexpr):
    lanes = tl.arange(0, BLOCK)
    v = tl.load(base + lanes)
    peer = rt.ptr(data, nxt)                 # nxt's `data`, for direct stores
    tl.store(peer + lanes, v)
    rt.fence()
    one = tl.where(lanes == 0, 1, 0).to(tl.uint64)
    rt.signal_add(sig + lanes * 0, one, nxt)  # exactly one add: lane 0's
    got = rt.signal_wait_until(sig, rt.CMP_GE, epoch)
    rt.quiet()                                # the add is complete before the set
    rt.signal_set(sig + lanes * 0, (lanes * 0 + (epoch + 100)).to(tl.uint64), nxt)  # epoch: an int here (1)
    rt.barrier_all_wg()
    tl.store(seen, got.to(tl.int64))


def main():
    faulthandler.dump_traceback_later(300, exit=True)
    rank = int(os.environ.get("ROCSHMEM_RUN_RANK", 0))
    torch.cuda.set_device(rank % torch.cuda.device_count())
    torch.zeros(1, device="cuda")
    rocshmem.init()
    me, n = rocshmem.my_pe(), rocshmem.n_pes()
    nxt, prev = (me + 1) % n, (me - 1) % n
    seed_src, seed = rocshmem.tensor(1, torch.int64), rocshmem.tensor(1, torch.int64)
    if me == 0:
        seed_src.fill_(random.SystemRandom().getrandbits(40))
    rocshmem.broadcast(seed, seed_src, 0)
    s = int(seed.item())
    fails = []

    def vals(pe, salt):
        g = torch.Generator().manual_seed(s * 131 + pe * 7 + salt)
        return torch.randint(1, 1 << 20, (BLOCK,), generator=g, dtype=torch.int64).cuda()

    def check(cond, what):
        if not cond:
            fails.append(what)
            print(f"FAIL triton_device_test: PE {me}: {what}", file=sys.stderr, flush=True)

    T = lambda dt: rocshmem.tensor(BLOCK, dt)  # noqa: E731
    w32, w64, u32, u64 = T(torch.int32), T(torch.int64), T(torch.int32), T(torch.int64)
    outs = [torch.zeros(BLOCK, dtype=torch.int64 if i else torch.int32, device="cuda") for i in range(4)]
    rocshmem.barrier_all()
    amo_kernel[(1,)](w32, w64, u32, u64, outs[0], outs[1], outs[2], outs[3], vals(me, 1), nxt, BLOCK=BLOCK,
                     num_warps=1)
    torch.cuda.synchronize()
    rocshmem.barrier_all()
    pv = vals(prev, 1)
    check(all(bool((o == 0).all()) for o in outs), "fetch_add returned the zeroed words' old value")
    check(torch.equal(w32.long(), pv + 1), "int32 fetch_add + add")
    check(torch.equal(w64, pv + 1), "int64 fetch_add + inc")
    check(torch.equal(u32.long() & 0xFFFFFFFF, (pv | (1 << 30))), "uint32 fetch_add + fetch_or")
    check(torch.equal(u64, pv ^ (1 << 40)), "uint64 fetch_add + xor")
    out = torch.zeros(BLOCK, dtype=torch.int64, device="cuda")
    cas_kernel[(1,)](w64, out, vals(me, 2), nxt, BLOCK=BLOCK, num_warps=1)
    torch.cuda.synchronize()
    rocshmem.barrier_all()
    check(bool((out == 3).all()), "compare_swap (miss, hit) and swap returned the values before")
    check(torch.equal(w64, vals(prev, 2) * 5), "the word after compare_swap and swap")
    f32, f64 = T(torch.float32), T(torch.float64)
    got = [torch.zeros(BLOCK, dtype=dt, device="cuda") for dt in (torch.int32, torch.int64, torch.float32, torch.float64)]
    pg_kernel[(1,)](w32, w64, f32, f64, *got, vals(me, 3), nxt, me, BLOCK=BLOCK, num_warps=1)
    torch.cuda.synchronize()
    rocshmem.barrier_all()
    mine, pv = vals(me, 3), vals(prev, 3)
    check(torch.equal(w32.long(), pv) and torch.equal(w64, pv * 7), "int_p / long_p on the receiving PE")
    check(torch.equal(f32, pv.float() * 0.5) and torch.equal(f64, pv.double() * 0.25), "float_p / double_p")
    check(torch.equal(got[0].long(), mine) and torch.equal(got[1], mine * 7), "int_g / long_g")
    check(torch.equal(got[2], mine.float() * 0.5) and torch.equal(got[3], mine.double() * 0.25), "float_g / double_g")
    data, sig = T(torch.int64), rocshmem.tensor(1, torch.int64)
    seen = torch.zeros(1, dtype=torch.int64, device="cuda")
    rocshmem.barrier_all()
    signal_ptr_kernel[(1,)](data, sig, seen, vals(me, 4), nxt, 1, BLOCK=BLOCK, num_warps=1)
    torch.cuda.synchronize()
    rocshmem.barrier_all()
    check(torch.equal(data, vals(prev, 4)), "direct stores through rt.ptr")
    # 1: the previous PE's add; 101: its set came in before this PE's wait read the word. An add
    # by every lane would show 32 (or 132).
    check(int(seen.item()) in (1, 101), f"signal_add of lane 0 only, seen by signal_wait_until ({int(seen.item())})")
    check(int(sig.item()) == 101, f"signal_set from the previous PE ({int(sig.item())})")
    rocshmem.barrier_all()
    for t in (sig, data, f64, f32, u64, u32, w64, w32, seed, seed_src):
        rocshmem.free(t)
    rocshmem.finalize()
    print(f"PE {me}: {'PASS' if not fails else 'FAIL'} triton device functions ({len(fails)} failures)", flush=True)
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
