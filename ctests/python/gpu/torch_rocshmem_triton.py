#!/usr/bin/env python3
"""PyTorch's own rocSHMEM Triton functions on our library, on NVIDIA GPUs, 2 or more PEs.

    rocshmem-run -n 2 python3 torch_rocshmem_triton.py [--timeout 600]

torch/distributed/_symmetric_memory/_rocshmem_triton.py (shipped by PyTorch, imported on ROCm
builds) declares rocSHMEM's device functions for Triton kernels. This program imports that
module from the installed torch (it is plain Python and imports on a CUDA build too; its code is
not copied here) and calls its functions from Triton kernels of its own, with our device
bitcode librocshmem_device_sm_XX.bc as the kernels' extern library (under torch's key
"rocshmem") and our module init (rocshmem.triton's kernel-load hook runs
rocshmem_hipmodule_init on each loaded module). torch's own module init (c10d's NVSHMEM entry
point on a CUDA build) and its library finder (AMD arch names) are not used.

Each check runs on fresh random data and is verified on the receiving PE:
  my_pe, n_pes; put, get, get_nbi (+ quiet); putmem_signal_block + signal_wait_until (SET, then
  ADD); put, fence, put of a flag + wait_until on the flag (int32), then the data; barrier_all
  and sync_all (the previous PE's put is there after them, read inside the kernel); the 20
  reductions (int16, int32, int64, float32, float64 x sum, max, min, prod) on team 0 through
  torch's reduce, their int32 results 0.
Exit status: 0 if every PE passed; 1 on a failure; 3 if the installed torch has no
_rocshmem_triton module (nothing was run: say so, it is not a pass).
Needs torch with CUDA, triton, the rocshmem package (with its sm_XX bitcode, or ROCSHMEM_BITCODE)
and one GPU per PE (or MPS).
"""

import argparse
import faulthandler
import hashlib
import os
import sys

import torch

try:
    from torch.distributed._symmetric_memory import _rocshmem_triton as trt
except ImportError as e:  # older torch
    print(f"SKIP torch_rocshmem_triton: torch {torch.__version__} has no "
          f"torch.distributed._symmetric_memory._rocshmem_triton ({e}); nothing was run", flush=True)
    sys.exit(3)

import triton
import triton.language as tl

import rocshmem
import rocshmem.triton as rt

# ---- kernels: one program (work-group) per PE; torch's functions are called as its docs show --


@triton.jit
def k_info(out):
    tl.store(out, trt.my_pe())
    tl.store(out + 1, trt.n_pes())


@triton.jit
def k_put(dst, src, nelems, pe):
    trt.put(dst, src, nelems, pe)
    trt.barrier_all()


@triton.jit
def k_get(dst, src, nelems, pe):
    trt.get(dst, src, nelems, pe)


@triton.jit
def k_get_nbi(dst, src, nelems, pe):
    trt.get_nbi(dst, src, nelems, pe)
    trt.quiet()


@triton.jit
def k_put_signal(dst, src, nbytes, sig, value, sig_op, wait_for, pe):
    trt.barrier_all()
    trt.putmem_signal_block(dst, src, nbytes, sig, value, sig_op, pe)
    trt.signal_wait_until(sig, rt.CMP_EQ, wait_for)


@triton.jit(do_not_specialize=["nflag"])
def k_fence(dst, src, nelems, flag, one, nflag, pe, out, BLOCK: tl.constexpr):
    """Data, fence, flag to the next PE; wait for the previous PE's flag, then copy what it
    put into out (inside the kernel: the fence ordered the data before the flag). nflag (1)
    is a runtime value: torch's put converts its element count with .to(), which a constant
    does not have."""
    trt.put(dst, src, nelems, pe)
    trt.fence()
    trt.put(flag, one, nflag, pe)
    trt.wait_until(flag, rt.CMP_GE, 1)
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(dst + offs, mask=offs < nelems, volatile=True), mask=offs < nelems)


@triton.jit
def k_barrier_read(dst, src, nelems, pe, out, USE_SYNC: tl.constexpr, BLOCK: tl.constexpr):
    """Put to the next PE, then barrier_all (or quiet + sync_all), then read what the previous
    PE put here, in the same kernel."""
    trt.put(dst, src, nelems, pe)
    if USE_SYNC:
        trt.quiet()
        trt.sync_all()
    else:
        trt.barrier_all()
    offs = tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(dst + offs, mask=offs < nelems, volatile=True), mask=offs < nelems)


@triton.jit
def k_reduce(dst, src, nreduce, ret, OP: tl.constexpr):
    r = trt.reduce(0, dst, src, nreduce, OP)
    tl.store(ret, r)


# ---- host side -------------------------------------------------------------------------------

failures = []


def check(who, cond, what):
    if not cond:
        failures.append(what)
        print(f"FAIL torch_rocshmem_triton: {who}: {what}", file=sys.stderr, flush=True)
    return cond


def gen(seed, pe, salt, n, dtype, lo=0, hi=100):
    h = hashlib.blake2b(f"{seed}:{pe}:{salt}".encode(), digest_size=8).digest()
    g = torch.Generator().manual_seed(int.from_bytes(h, "little") >> 1)
    return torch.randint(lo, hi, (n,), generator=g).to(dtype).cuda()


def options():
    """rocshmem.triton's launch options, with the bitcode under torch's extern_libs key."""
    o = rt.options()
    libs = o.pop("extern_libs")
    o["extern_libs"] = {"rocshmem": libs[rt.LIB_NAME]}
    o["num_warps"] = 4
    return o


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--timeout", type=float, default=600)
    args = p.parse_args()
    faulthandler.dump_traceback_later(args.timeout, exit=True)
    rank, nranks = int(os.environ.get("ROCSHMEM_RUN_RANK", 0)), int(os.environ.get("ROCSHMEM_RUN_NRANKS", 1))
    torch.cuda.set_device(rank % torch.cuda.device_count())
    torch.zeros(1, device="cuda")
    rocshmem.init()
    me, n = rocshmem.my_pe(), rocshmem.n_pes()
    who = f"PE {me}"
    nxt, prev = (me + 1) % n, (me - 1) % n
    opts = options()
    seed_t = rocshmem.tensor(1, torch.int64)
    src_t = rocshmem.tensor(1, torch.int64)
    src_t.fill_(int.from_bytes(os.urandom(7), "little"))
    rocshmem.broadcast(seed_t, src_t, 0, stream=torch.cuda.current_stream())
    torch.cuda.synchronize()
    seed = int(seed_t.item())
    if me == 0:
        print(f"torch_rocshmem_triton: torch {torch.__version__} ({trt.__file__}), triton {triton.__version__}, "
              f"{n} PEs, bitcode {opts['extern_libs']['rocshmem']}, seed {seed:#x}", flush=True)

    def sync():
        torch.cuda.synchronize()
        rocshmem.barrier_all()

    # my_pe, n_pes
    info = torch.full((2,), -1, dtype=torch.int32, device="cuda")
    k_info[(1,)](info, **opts)
    torch.cuda.synchronize()
    check(who, info.tolist() == [me, n], f"my_pe/n_pes in a kernel: {info.tolist()}, expected {[me, n]}")

    N = 4099
    dst = rocshmem.tensor(N, torch.int32)
    src = rocshmem.tensor(N, torch.int32)
    out = torch.zeros(8192, dtype=torch.int32, device="cuda")
    flag = rocshmem.tensor(1, torch.int32)
    one = torch.ones(1, dtype=torch.int32, device="cuda")

    # put (+ barrier_all inside): the previous PE's data is here
    dst.zero_()
    src.copy_(gen(seed, me, "put", N, torch.int32))
    sync()
    k_put[(1,)](dst, src, N, nxt, **opts)
    sync()
    check(who, torch.equal(dst, gen(seed, prev, "put", N, torch.int32)), "put (putmem_wg) from the previous PE")

    # get, get_nbi: the next PE's source
    for name, k in (("get", k_get), ("get_nbi", k_get_nbi)):
        src.copy_(gen(seed, me, name, N, torch.int32))
        local = torch.zeros(N, dtype=torch.int32, device="cuda")
        sync()
        k[(1,)](local, src, N, nxt, **opts)
        torch.cuda.synchronize()
        check(who, torch.equal(local, gen(seed, nxt, name, N, torch.int32)), f"{name} from the next PE")
        sync()

    # putmem_signal_block + signal_wait_until: SET, then ADD
    sig = rocshmem.tensor(1, torch.int64)
    sig.zero_()
    nbytes = N * 4
    for round_, (op, value, want) in enumerate(((rt.SIGNAL_SET, 7, 7), (rt.SIGNAL_ADD, 5, 12))):
        src.copy_(gen(seed, me, ("signal", round_), N, torch.int32))
        sync()
        k_put_signal[(1,)](dst, src, nbytes, sig, value, op, want, nxt, **opts)
        torch.cuda.synchronize()
        check(who, int(sig.item()) == want, f"signal word after round {round_}: {int(sig.item())}, expected {want}")
        check(who, torch.equal(dst, gen(seed, prev, ("signal", round_), N, torch.int32)),
              f"putmem_signal_block data, round {round_}")
        sync()

    # fence + wait_until on an int32 flag
    flag.zero_()
    dst.zero_()
    src.copy_(gen(seed, me, "fence", N, torch.int32))
    out.zero_()
    sync()
    k_fence[(1,)](dst, src, N, flag, one, 1, nxt, out, BLOCK=8192, **opts)
    torch.cuda.synchronize()
    check(who, torch.equal(out[:N], gen(seed, prev, "fence", N, torch.int32)),
          "data seen after fence + flag + wait_until")
    sync()

    # barrier_all and sync_all, the data read inside the kernel
    for use_sync in (False, True):
        dst.zero_()
        src.copy_(gen(seed, me, ("bar", use_sync), N, torch.int32))
        out.zero_()
        sync()
        k_barrier_read[(1,)](dst, src, N, nxt, out, USE_SYNC=use_sync, BLOCK=8192, **opts)
        torch.cuda.synchronize()
        check(who, torch.equal(out[:N], gen(seed, prev, ("bar", use_sync), N, torch.int32)),
              f"data after {'quiet + sync_all' if use_sync else 'barrier_all'} in the kernel")
        sync()

    # the 20 reductions
    ret = torch.full((1,), -1, dtype=torch.int32, device="cuda")
    nred = 1000
    for dtype in (torch.int16, torch.int32, torch.int64, torch.float32, torch.float64):
        rsrc = rocshmem.tensor(nred, dtype)
        rdst = rocshmem.tensor(nred, dtype)
        for op in ("sum", "max", "min", "prod"):
            lo, hi = ((1, 3) if op == "prod" else (-50, 50))
            vals = [gen(seed, pe, ("reduce", str(dtype), op), nred, torch.int64, lo, hi).cpu() for pe in range(n)]
            rsrc.copy_(vals[me].to(dtype).cuda())
            rdst.fill_(-99)
            ret.fill_(-1)
            sync()
            k_reduce[(1,)](rdst, rsrc, nred, ret, OP=op, **opts)
            sync()
            stack = torch.stack(vals)
            want = {"sum": stack.sum(0), "max": stack.max(0).values, "min": stack.min(0).values,
                    "prod": stack.prod(0)}[op].to(dtype)
            check(who, int(ret.item()) == 0, f"reduce {op} {dtype}: returned {int(ret.item())}")
            check(who, torch.equal(rdst.cpu(), want), f"reduce {op} {dtype}: result differs")
        rocshmem.free(rdst)
        rocshmem.free(rsrc)

    sync()
    for t in (sig, flag, src, dst, src_t, seed_t):
        rocshmem.free(t)
    rocshmem.finalize()
    if failures:
        print(f"FAIL torch_rocshmem_triton: {who}: {len(failures)} check(s) failed", flush=True)
        return 1
    print(f"PE {me}: PASS torch_rocshmem_triton (torch's put, get, get_nbi, putmem_signal_block, wait_until, "
          "signal_wait_until, fence, quiet, my_pe, n_pes, barrier_all, sync_all and 20 reductions)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
