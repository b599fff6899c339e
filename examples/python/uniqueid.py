#!/usr/bin/env python3
"""Unique-id init from any launcher (here: this script starts its own processes).

    python3 uniqueid.py -n 2

PE 0 makes the id with rocshmem.get_uniqueid() and hands the 128 bytes to the others (here
through a pipe; torch's store, MPI or a file work the same); each process calls
rocshmem.init(uid=..., rank=r, nranks=n), then they exchange a block and check it."""

import argparse
import subprocess
import sys

import numpy as np

import rocshmem


def pe(rank: int, nranks: int, uid: bytes) -> int:
    rocshmem.init(uid=uid, rank=rank, nranks=nranks)
    me, n = rocshmem.my_pe(), rocshmem.n_pes()
    a = rocshmem.array(1000, "float64")
    rocshmem.put(a, np.full(1000, float(me)), (me + 1) % n)
    rocshmem.barrier_all()
    ok = bool((a == float((me - 1) % n)).all())
    print(f"PE {me}/{n} (unique id): {'PASS' if ok else 'FAIL'}", flush=True)
    rocshmem.free(a)
    rocshmem.finalize()
    return 0 if ok else 1


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("-n", type=int, default=2)
    p.add_argument("--rank", type=int)
    args = p.parse_args()
    if args.rank is not None:  # a child: the id arrives on stdin
        return pe(args.rank, args.n, sys.stdin.buffer.read(128))
    children = [subprocess.Popen([sys.executable, __file__, "-n", str(args.n), "--rank", str(r)],
                                 stdin=subprocess.PIPE) for r in range(1, args.n)]
    uid = rocshmem.get_uniqueid()  # this process is PE 0: it hosts the rendezvous
    for c in children:
        c.stdin.write(uid)
        c.stdin.close()
    rc = pe(0, args.n, uid)
    return max([rc] + [c.wait(timeout=120) for c in children])


if __name__ == "__main__":
    sys.exit(main())
