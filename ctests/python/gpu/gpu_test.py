#!/usr/bin/env python3
"""The rocshmem package on NVIDIA GPUs with torch: one process per PE, PE r on GPU r % count
(several PEs may share a GPU, e.g. under MPS).

    rocshmem-run -n 2 python3 gpu_test.py [--init launcher|torch] [--replays 100]

--init torch: torch.distributed (gloo, file store in a folder named by the launcher's job id)
then rocshmem.init_from_torch(). Checks, each on fresh random data at several sizes, on the
receiving PE:
  - rocshmem.array is GPU memory (DeviceArray), seen by torch through DLPack and through
    __cuda_array_interface__ at the same address; rocshmem.tensor likewise;
  - blocking put/get of whole tensors and slices (torch tensors as sources and destinations);
  - stream-ordered put/get/put_signal/signal_wait_until/barrier/reduce/broadcast/alltoall on a
    torch.cuda.Stream (the *_on_stream calls); host reduce/broadcast/atomics/wait_until on GPU
    tensors;
  - a stream-ordered put + barrier captured in torch.cuda.graph and replayed --replays times,
    fresh data before each replay, every byte checked;
  - bad input raises RocshmemError (the library's message), calls after finalize raise.
Prints "PE i: PASS ..." / "FAIL ..." lines; exit status 0 only if everything passed."""

import argparse
import faulthandler
import hashlib
import os
import sys
import tempfile
import time

import torch

import rocshmem

failures = []


def check(who, cond, what):
    if not cond:
        failures.append(what)
        print(f"FAIL gpu_test: {who}: {what}", file=sys.stderr, flush=True)
    return cond


def data(seed, pe, salt, n, dtype=torch.uint8):
    h = hashlib.blake2b(f"{seed}:{pe}:{salt}".encode(), digest_size=8).digest()
    g = torch.Generator().manual_seed(int.from_bytes(h, "little") >> 1)
    if dtype.is_floating_point:
        return torch.randn(n, generator=g).to(dtype).cuda()
    return torch.randint(0, 100, (n,), generator=g).to(dtype).cuda()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--init", choices=["launcher", "torch"], default="launcher")
    p.add_argument("--replays", type=int, default=100)
    p.add_argument("--timeout", type=float, default=300)
    args = p.parse_args()
    faulthandler.dump_traceback_later(args.timeout, exit=True)
    rank, nranks = int(os.environ.get("ROCSHMEM_RUN_RANK", 0)), int(os.environ.get("ROCSHMEM_RUN_NRANKS", 1))
    torch.cuda.set_device(rank % torch.cuda.device_count())
    torch.zeros(1, device="cuda")  # the context the library will use
    if args.init == "torch":
        import torch.distributed as dist

        job = os.environ.get("ROCSHMEM_RUN_UNIQUEID", "job")[:16].replace("/", "_")
        store = os.path.join(tempfile.gettempdir(), f"rocshmem-gpu-test-{hashlib.md5(job.encode()).hexdigest()}")
        dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=nranks)
        rocshmem.init_from_torch()
    else:
        rocshmem.init()
    me, n = rocshmem.my_pe(), rocshmem.n_pes()
    who = f"PE {me}"
    check(who, (me, n) == (rank, nranks), f"my_pe/n_pes {me}/{n}, expected {rank}/{nranks}")
    nxt, prev = (me + 1) % n, (me - 1) % n
    seed_t = rocshmem.tensor(1, torch.int64)
    src_t = rocshmem.tensor(1, torch.int64)
    src_t.fill_(int(time.time_ns()) & ((1 << 62) - 1))
    # Collectives on GPU memory are stream-ordered (the host forms refuse GPU heaps for now).
    rocshmem.broadcast(seed_t, src_t, 0, stream=torch.cuda.current_stream())
    torch.cuda.current_stream().synchronize()
    seed = int(seed_t.item())
    if me == 0:
        print(f"gpu_test: {n} PEs on {torch.cuda.get_device_name()}, init {args.init}, seed {seed:#x}", flush=True)

    # -- arrays and tensors ---------------------------------------------------------------------
    a = rocshmem.array((4, 1000), "float32")
    check(who, rocshmem.is_gpu_array(a), f"rocshmem.array gave {type(a).__name__}, not a DeviceArray")
    ta = torch.from_dlpack(a)
    tc = torch.as_tensor(a, device="cuda")  # through __cuda_array_interface__
    check(who, ta.data_ptr() == a.ptr == tc.data_ptr() and ta.shape == (4, 1000) and ta.dtype == torch.float32,
          "DLPack / __cuda_array_interface__ views are not the symmetric memory")
    check(who, bool((ta == 0).all()), "arrays start zeroed")
    row = ta[1]
    row.copy_(data(seed, me, "row", 1000, torch.float32))
    rocshmem.put(a[2], row, nxt)  # a DeviceArray slice as destination, a torch tensor as source
    rocshmem.barrier_all()
    check(who, torch.equal(ta[2], data(seed, prev, "row", 1000, torch.float32)), "put of a row")
    sub = torch.empty(10, device="cuda")
    rocshmem.get(sub, ta[2, 5:15], nxt)
    check(who, torch.equal(sub, row[5:15]), "get of a slice")
    rocshmem.barrier_all()

    t = rocshmem.tensor((3, 4096), torch.bfloat16)
    check(who, t.is_cuda and t.dtype == torch.bfloat16 and t.shape == (3, 4096), "rocshmem.tensor shape/dtype/device")
    for size in (1, 4099, 1 << 20):
        dst = rocshmem.tensor(size, torch.uint8)
        src = data(seed, me, ("put", size), size)
        rocshmem.put(dst, src, nxt)
        rocshmem.barrier_all()
        check(who, torch.equal(dst, data(seed, prev, ("put", size), size)), f"blocking put of {size} bytes")
        rocshmem.barrier_all()
        rocshmem.free(dst)

    # -- stream-ordered ---------------------------------------------------------------------------
    s = torch.cuda.Stream()
    for size in (1, 4099, 1 << 20):
        dst = rocshmem.tensor(size, torch.uint8)
        sig = rocshmem.tensor(1, torch.int64)
        src = data(seed, me, ("sput", size), size)
        torch.cuda.synchronize()
        rocshmem.put(dst, src, nxt, stream=s)
        rocshmem.barrier_all(stream=s)
        s.synchronize()
        check(who, torch.equal(dst, data(seed, prev, ("sput", size), size)), f"put on a stream, {size} bytes")
        back = torch.zeros(size, dtype=torch.uint8, device="cuda")
        rocshmem.get(back, dst, nxt, stream=s)
        s.synchronize()
        check(who, torch.equal(back, src), f"get on a stream, {size} bytes")
        rocshmem.barrier_all(stream=s)
        src2 = data(seed, me, ("signal", size), size)
        torch.cuda.synchronize()
        rocshmem.put_signal(dst, src2, sig, 5, nxt, op="add", stream=s)
        rocshmem.signal_wait_until(sig, "eq", 5, stream=s)
        rocshmem.quiet(stream=s)
        s.synchronize()
        check(who, torch.equal(dst, data(seed, prev, ("signal", size), size)) and int(sig.item()) == 5,
              f"put_signal + signal_wait_until on a stream, {size} bytes")
        rocshmem.sync_all(stream=s)
        s.synchronize()
        rocshmem.barrier_all()
        rocshmem.free(sig)
        rocshmem.free(dst)
    x, y = rocshmem.tensor(1000, torch.float32), rocshmem.tensor(1000, torch.float32)
    x.copy_(data(seed, me, "red", 1000, torch.float32))
    torch.cuda.synchronize()
    rocshmem.reduce(y, x, op="sum", stream=s)
    s.synchronize()
    want = sum(data(seed, pe, "red", 1000, torch.float32) for pe in range(n))
    check(who, torch.allclose(y, want, rtol=1e-5, atol=1e-5), "reduce(sum) on a stream")
    rocshmem.broadcast(y, x, n - 1, stream=s)
    s.synchronize()
    check(who, torch.equal(y, data(seed, n - 1, "red", 1000, torch.float32)), "broadcast on a stream")
    z, w = rocshmem.tensor(8 * n, torch.int32), rocshmem.tensor(8 * n, torch.int32)
    z.copy_(torch.arange(8 * n, dtype=torch.int32, device="cuda") + 1000 * me)
    torch.cuda.synchronize()
    rocshmem.alltoall(w, z, stream=s)
    s.synchronize()
    want = torch.cat([torch.arange(8 * me, 8 * me + 8, dtype=torch.int32) + 1000 * j for j in range(n)]).cuda()
    check(who, torch.equal(w, want), "alltoall on a stream")
    # -- host forms on GPU memory: the stream kernels on the library's stream, polled waits --------
    rocshmem.barrier_all()
    rocshmem.reduce(y, x, op="max")
    want = torch.stack([data(seed, pe, "red", 1000, torch.float32) for pe in range(n)]).max(0).values
    check(who, torch.equal(y, want), "host reduce(max) on GPU tensors")
    rocshmem.broadcast(y, x, 0)
    check(who, torch.equal(y, data(seed, 0, "red", 1000, torch.float32)), "host broadcast on GPU tensors")
    c = rocshmem.tensor(2, torch.int64)
    c.zero_()
    torch.cuda.synchronize()
    rocshmem.barrier_all()
    olds = [int(rocshmem.atomic_fetch_add(c, 0, me + 1, 0)) for _ in range(5)]
    check(who, len(set(olds)) == 5 and olds == sorted(olds), f"host atomic_fetch_add fetched {olds}")
    rocshmem.atomic_set(c, 1, 7 + me, nxt)
    rocshmem.wait_until(c, 1, "eq", 7 + prev)
    rocshmem.barrier_all()
    if me == 0:
        check(who, int(c[0].item()) == 5 * n * (n + 1) // 2, f"host atomics on a GPU tensor: {int(c[0].item())}")
    check(who, int(c[1].item()) == 7 + prev, "host atomic_set + wait_until on a GPU tensor")
    rocshmem.barrier_all()
    rocshmem.free(c)
    print(f"{who}: {'PASS' if not failures else 'FAIL'} arrays, tensors, blocking and stream-ordered calls",
          flush=True)

    # -- a captured graph of stream-ordered calls -------------------------------------------------
    size = 65537
    dst = rocshmem.tensor(size, torch.uint8)
    src = torch.empty(size, dtype=torch.uint8, device="cuda")
    rocshmem.barrier_all()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.stream(s):
        src.copy_(data(seed, me, ("graph", -1), size))
        torch.cuda.synchronize()
        with torch.cuda.graph(g, stream=s):
            rocshmem.barrier_all(stream=s)  # the next PE has checked the previous replay
            rocshmem.put(dst, src, nxt, stream=s)
            rocshmem.barrier_all(stream=s)
    ok = 0
    for r in range(args.replays):
        src.copy_(data(seed, me, ("graph", r), size))
        torch.cuda.synchronize()
        g.replay()
        torch.cuda.synchronize()
        ok += check(who, torch.equal(dst, data(seed, prev, ("graph", r), size)), f"graph replay {r}")
    print(f"{who}: {'PASS' if ok == args.replays else 'FAIL'} graph of stream-ordered put + barriers: "
          f"{ok}/{args.replays} replays checked", flush=True)
    rocshmem.barrier_all()
    del g

    # -- bad input ----------------------------------------------------------------------------------
    try:
        rocshmem.put(dst, src, n)
        check(who, False, "put to PE n did not raise")
    except rocshmem.RocshmemError as e:
        check(who, str(e).startswith(f"rocshmem: PE {me}: error: rocshmem_putmem: invalid PE {n}"), f"message: {e}")
    try:
        rocshmem.put(dst, src, nxt, stream=object())
        check(who, False, "a bad stream did not raise")
    except TypeError:
        pass
    rocshmem.barrier_all()
    for tt in (dst, w, z, y, x, t, a, src_t, seed_t):
        rocshmem.free(tt)
    rocshmem.finalize()
    try:
        rocshmem.my_pe()
        check(who, False, "my_pe after finalize did not raise")
    except rocshmem.RocshmemError:
        pass
    faulthandler.cancel_dump_traceback_later()
    print(f"{who}: {'ALL PASS' if not failures else f'FAIL ({len(failures)} checks)'}", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
