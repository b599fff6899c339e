#!/usr/bin/env python3
"""Pass data around a ring of PEs with the rocshmem package (host platform or GPUs).

    pip install <rocshmem source tree>
    rocshmem-run -n 4 python3 ring.py          # or: mpirun -n 4 python3 ring.py

Every PE puts its block into the next PE's symmetric array, then all reduce a checksum and PE 0
atomically counts arrivals. Exit status 0 only if every check passes on every PE."""

import sys

import numpy as np

import rocshmem


def main() -> int:
    rocshmem.init()
    me, n = rocshmem.my_pe(), rocshmem.n_pes()
    nxt, prev = (me + 1) % n, (me - 1) % n

    block = rocshmem.array(1 << 16, "int64")      # symmetric: same shape on every PE
    mine = np.arange(block.size, dtype="int64") * n + me
    if rocshmem.is_gpu_array(block):              # GPU memory: any array of the GPU is a source
        import torch
        src = torch.as_tensor(mine, device="cuda")
    else:
        src = mine
    rocshmem.put(block, src, nxt)
    rocshmem.barrier_all()

    got = block.copy_to_host() if rocshmem.is_gpu_array(block) else block
    ok = bool(np.array_equal(got, np.arange(block.size, dtype="int64") * n + prev))

    # A reduction over the ring: everyone's checksum, summed on every PE.
    s = rocshmem.array(1, "int64")
    total = rocshmem.array(1, "int64")
    local_sum = np.array([int(got.sum() % 1000003)], dtype="int64")
    if rocshmem.is_gpu_array(s):
        s.copy_from_host(local_sum)
    else:
        s[:] = local_sum
    if rocshmem.is_gpu_array(s):                  # GPU memory: collectives are stream-ordered
        stream = torch.cuda.current_stream()
        rocshmem.reduce(total, s, op="sum", stream=stream)
        stream.synchronize()
    else:
        rocshmem.reduce(total, s, op="sum")
    want = sum(int((np.arange(block.size, dtype="int64") * n + p).sum() % 1000003) for p in range(n))
    got_total = int(total.copy_to_host()[0] if rocshmem.is_gpu_array(total) else total[0])
    ok &= got_total == want

    counter = rocshmem.array(1, "int64")
    if not rocshmem.is_gpu_array(counter):       # host atomics on GPU heaps are not done yet
        rocshmem.atomic_fetch_add(counter, 0, 1, 0)
        rocshmem.barrier_all()
        if me == 0:
            ok &= int(counter[0]) == n

    print(f"PE {me}/{n}: {'PASS' if ok else 'FAIL'} ring of {block.size} int64 from PE {prev}, "
          f"checksum {got_total}", flush=True)
    for a in (counter, total, s, block):
        rocshmem.free(a)
    rocshmem.finalize()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
