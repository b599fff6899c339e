#!/usr/bin/env python3
"""A Triton kernel calling rocSHMEM, captured in a CUDA graph by PyTorch and replayed, one PE per GPU.

    put_signal_graph.py [-n PES] [--replays 100] [--sizes 1,4099,1048583] [--timeout 300]

Uses the installed Python package `rocshmem` (pip install <source tree>): its library, its
device bitcode and rocshmem.triton (ROCSHMEM_LIBRARY / ROCSHMEM_BITCODE pick others). Needs
torch with CUDA, triton, and PES GPUs (default 2) with peer access (PEs may share a GPU).

This process starts PES copies of itself (PE i on GPU i) and waits for them. PE 0 makes a
unique id and writes it to a file the others read (the out-of-band exchange); each PE then
  - makes its GPU current, inits rocSHMEM with the id (rocshmem_init_attr via ctypes),
  - allocates the symmetric destination and signal word (rocshmem_malloc, seen as torch tensors),
  - runs the Triton kernel ring_put_signal once per size: barrier, put-with-signal of the
    source to the next PE's destination, wait for the previous PE's signal; Triton compiles it
    with our bitcode, and rocshmem_hipmodule_init runs on its module (kernel-load hook) before
    the first launch,
  - captures the launches for all sizes in one torch.cuda.graph and replays it --replays times,
    writing fresh random data into the source before each replay (outside the graph) and
    checking on the receiving PE, after each replay, every byte of every size and the signal.
Each PE prints "PE i: PASS ..." or "FAIL ... PE i: ..." lines; the exit status is 0 only if every
PE passed. A PE that does not finish within --timeout seconds is stopped (exit status 1).
Replay a run's data with ROCSHMEM_TEST_SEED=<seed printed by the run>.

Under rocshmem-run (`rocshmem-run -n 2 python3 put_signal_graph.py`) the PEs init with
rocshmem.init() instead of the unique id (PE i on GPU i).
"""

import argparse
import faulthandler
import hashlib
import os
import random
import signal
import subprocess
import sys
import tempfile
import time

import triton.language as tl

import rocshmem
import rocshmem.triton as rt


@rt.jit(do_not_specialize=["nbytes", "nxt"])
def ring_put_signal(dst, src, sig, epoch, nbytes, nxt):
    """One program (work-group) per PE: entry barrier (the next PE has checked what it got last
    time), put nbytes of src into the next PE's dst with the signal set to this launch's number,
    wait until the previous PE's put has set ours to the same number. epoch counts the launches
    on this PE (in lockstep on every PE); it lives in device memory, so each graph replay sees
    its own value."""
    e = tl.load(epoch) + 1
    rt.barrier_all_wg()
    rt.putmem_signal_wg(dst, src, nbytes, sig, e, rt.SIGNAL_SET, nxt)
    rt.uint64_wait_until(sig, rt.CMP_EQ, e)
    tl.store(epoch, e)


def fail_exit(msg):
    print(f"FAIL put_signal_graph: {msg}", file=sys.stderr, flush=True)
    sys.exit(1)


def parse_sizes(text):
    try:
        sizes = [int(x, 0) for x in text.split(",") if x]
    except ValueError:
        sizes = []
    if not sizes or min(sizes) < 1:
        fail_exit(f"--sizes {text!r}: need a comma-separated list of byte counts >= 1")
    return sizes


# --------------------------------------------------------------------------------------------
# Launcher: starts the PEs, stops them all if one fails or the time is up.

def launch(args):
    env_seed = os.environ.get("ROCSHMEM_TEST_SEED")
    seed = int(env_seed, 0) if env_seed else random.SystemRandom().getrandbits(63)
    print(f"put_signal_graph: {args.n} PEs, sizes {args.sizes}, {args.replays} replays, seed {seed:#x} "
          f"(replay: ROCSHMEM_TEST_SEED={seed:#x})", flush=True)
    xdir = tempfile.mkdtemp(prefix="rocshmem-triton-")
    procs = []
    try:
        for rank in range(args.n):
            cmd = [sys.executable, os.path.abspath(__file__), "--rank", str(rank), "-n", str(args.n),
                   "--exchange-dir", xdir, "--seed", str(seed),
                   "--replays", str(args.replays), "--sizes", args.sizes, "--timeout", str(args.timeout)]
            procs.append(subprocess.Popen(cmd))
        deadline = time.monotonic() + args.timeout + 30
        status = {}
        while len(status) < len(procs):
            for i, p in enumerate(procs):
                if i not in status and p.poll() is not None:
                    status[i] = p.returncode
                    if p.returncode != 0:
                        print(f"FAIL put_signal_graph: PE {i} exited with status {p.returncode}", file=sys.stderr,
                              flush=True)
                        # The others may wait for it in a barrier: give them a moment, then stop them.
                        deadline = min(deadline, time.monotonic() + 15)
            if time.monotonic() > deadline:
                for i, p in enumerate(procs):
                    if i not in status:
                        print(f"FAIL put_signal_graph: PE {i} did not finish in time: stopped", file=sys.stderr,
                              flush=True)
                        p.kill()
                        p.wait()
                        status[i] = -signal.SIGKILL
                break
            time.sleep(0.05)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        for f in os.listdir(xdir):
            os.unlink(os.path.join(xdir, f))
        os.rmdir(xdir)
    bad = {i: rc for i, rc in sorted(status.items()) if rc != 0}
    if bad:
        print(f"FAIL put_signal_graph: PE(s) {sorted(bad)} failed (exit status {bad})", file=sys.stderr)
        return 1
    print(f"PASS put_signal_graph: {args.n} PEs, {len(parse_sizes(args.sizes))} sizes, 1 eager run + "
          f"{args.replays} graph replays, every byte checked on the receiving PE")
    return 0


# --------------------------------------------------------------------------------------------
# One PE.

def exchange_uid(rank, xdir, timeout):
    """PE 0 makes the id and publishes it (written whole, then renamed); the others wait for it."""
    path = os.path.join(xdir, "uniqueid")
    if rank == 0:
        uid = rocshmem.get_uniqueid()
        with open(path + ".tmp", "wb") as f:
            f.write(uid)
        os.replace(path + ".tmp", path)
        return uid
    deadline = time.monotonic() + timeout
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            raise TimeoutError(f"no unique id from PE 0 in {path} after {timeout} s")
        time.sleep(0.01)
    with open(path, "rb") as f:
        return f.read()


def data(seed, pe, step, size_index, nbytes):
    """The bytes PE `pe` sends at `step` for size `size_index`: any PE can recompute them."""
    import torch

    h = hashlib.blake2b(f"{seed}:{pe}:{step}:{size_index}".encode(), digest_size=8).digest()
    g = torch.Generator().manual_seed(int.from_bytes(h, "little") >> 1)
    return torch.randint(0, 256, (nbytes,), dtype=torch.uint8, generator=g)


def run_pe(args):
    try:
        import torch
    except ImportError as e:
        fail_exit(f"this demonstration needs torch with CUDA ({e})")

    timeout = args.timeout
    # Never hang: dump the stacks and exit if this PE is stuck (a C-level timer thread, so it also
    # fires while the main thread waits inside CUDA).
    faulthandler.dump_traceback_later(timeout, exit=True)
    under_launcher = args.rank is None
    rank = int(os.environ["ROCSHMEM_RUN_RANK"]) if under_launcher else args.rank
    who = f"PE {rank}"

    if not torch.cuda.is_available():
        fail_exit(f"{who}: torch sees no CUDA GPU (this demonstration needs NVIDIA GPUs)")
    ngpu = torch.cuda.device_count()
    nranks = int(os.environ["ROCSHMEM_RUN_NRANKS"]) if under_launcher else args.n
    if ngpu < nranks and rank == 0:
        print(f"put_signal_graph: {nranks} PEs share {ngpu} GPU(s) (PE r uses GPU r % {ngpu})", flush=True)
    # The library takes the device current on this thread: make it current (a CUDA context) first.
    torch.cuda.set_device(rank % ngpu)
    torch.zeros(1, device="cuda")

    if under_launcher:
        rocshmem.init()
    else:
        rocshmem.init(uid=exchange_uid(rank, args.exchange_dir, timeout), rank=rank, nranks=nranks)
    me, n = rocshmem.my_pe(), rocshmem.n_pes()
    if (me, n) != (rank, nranks):
        fail_exit(f"{who}: rocshmem.my_pe/n_pes = {me}/{n}, expected {rank}/{nranks}")
    nxt, prev = (me + 1) % n, (me - 1) % n
    if me == 0:
        print(f"put_signal_graph: {n} PEs of {rocshmem.info()['name']} on {torch.cuda.get_device_name()}, "
              f"bitcode {rt.bitcode_path()}", flush=True)

    sizes = parse_sizes(args.sizes)
    seed = args.seed
    offsets, total = [], 0
    for s in sizes:
        offsets.append(total)
        total += (s + 255) // 256 * 256
    # Symmetric: what the peer writes (destinations, signal word). The source and the launch
    # counter are ordinary torch memory.
    sym = rocshmem.tensor(total + 8, torch.uint8)
    dst = [sym[o:o + s] for o, s in zip(offsets, sizes)]
    sig = sym[total:total + 8].view(torch.int64)
    src = [torch.empty(s, dtype=torch.uint8, device="cuda") for s in sizes]
    epoch = torch.zeros(1, dtype=torch.int64, device="cuda")
    sig.zero_()

    failures = []

    def check(step, what):
        """After a run: every byte each size received from prev, the signal and the counter."""
        torch.cuda.synchronize()
        bad = []
        launches = (step + 2) * len(sizes)  # step -1 is the eager run, one launch per size each
        got_epoch, got_sig = int(epoch.item()), int(sig.item())
        if got_epoch != launches or got_sig != launches:
            bad.append(f"launch counter {got_epoch}, signal {got_sig}, expected {launches} both")
        for i, nbytes in enumerate(sizes):
            got, want = dst[i].cpu(), data(seed, prev, step, i, nbytes)
            if not torch.equal(got, want):
                diff = (got != want).nonzero().flatten()
                at = int(diff[0])
                bad.append(f"{nbytes} bytes from PE {prev}: {diff.numel()} differ, first at byte {at} "
                           f"(got {int(got[at])}, expected {int(want[at])})")
        for b in bad:
            print(f"FAIL put_signal_graph: {who}: {what}: {b} (seed {seed:#x})", file=sys.stderr, flush=True)
        failures.extend(f"{what}: {b}" for b in bad)
        return not bad

    def prepare(step):
        """Fresh data into the sources, zeroes into the destinations (stream-ordered, outside the
        graph; the peer writes only after the kernel's entry barrier, so after this)."""
        for i, nbytes in enumerate(sizes):
            src[i].copy_(data(seed, me, step, i, nbytes))
            dst[i].zero_()

    def launch_all():
        for i, nbytes in enumerate(sizes):
            ring_put_signal[(1,)](dst[i], src[i], sig, epoch, nbytes, nxt)  # rt.jit links the bitcode

    # Eager run: compiles (Triton links the bitcode), loads the module, the hook runs
    # rocshmem_hipmodule_init on it, then the launches.
    t0 = time.monotonic()
    prepare(-1)
    launch_all()
    ok = check(-1, "eager run")
    if not rt.modules:
        failures.append("the kernel-load hook initialised no module (is the hook installed?)")
        print(f"FAIL put_signal_graph: {who}: {failures[-1]}", file=sys.stderr, flush=True)
        ok = False
    print(f"{who}: {'PASS' if ok else 'FAIL'} eager run ({len(sizes)} sizes; compile + load "
          f"{time.monotonic() - t0:.1f} s; modules initialised: {[m[0] for m in rt.modules]})", flush=True)

    # Capture: the launches only (data is written between replays, outside the graph).
    rocshmem.barrier_all()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        launch_all()
    torch.cuda.synchronize()
    if int(epoch.item()) != len(sizes):
        failures.append(f"the capture ran the kernels (launch counter {int(epoch.item())}, expected {len(sizes)})")
        print(f"FAIL put_signal_graph: {who}: {failures[-1]}", file=sys.stderr, flush=True)
    t0 = time.monotonic()
    replays_ok = 0
    for r in range(args.replays):
        prepare(r)
        graph.replay()
        replays_ok += check(r, f"replay {r}")
    print(f"{who}: {'PASS' if replays_ok == args.replays else 'FAIL'} graph: {replays_ok}/{args.replays} replays "
          f"checked ({time.monotonic() - t0:.1f} s)", flush=True)

    rocshmem.barrier_all()
    del graph, dst, sig  # the tensors over the heap are not used after this
    rocshmem.free(sym)
    rocshmem.finalize()
    faulthandler.cancel_dump_traceback_later()
    if failures:
        print(f"FAIL put_signal_graph: {who}: {len(failures)} check(s) failed", file=sys.stderr, flush=True)
        return 1
    print(f"{who}: ALL PASS", flush=True)
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-n", type=int, default=2, help="number of PEs (GPUs), default 2")
    p.add_argument("--replays", type=int, default=100, help="graph replays, default 100")
    p.add_argument("--sizes", default="1,4099,1048583", help="bytes per put, comma-separated")
    p.add_argument("--timeout", type=float, default=300, help="seconds before a PE is stopped, default 300")
    p.add_argument("--seed", type=int, help=argparse.SUPPRESS)
    p.add_argument("--rank", type=int, help=argparse.SUPPRESS)
    p.add_argument("--exchange-dir", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.n < 1 or args.replays < 0 or args.timeout <= 0:
        fail_exit("-n must be >= 1, --replays >= 0, --timeout > 0")
    parse_sizes(args.sizes)
    if args.rank is not None or "ROCSHMEM_RUN_RANK" in os.environ:
        if args.seed is None:
            # Under rocshmem-run: the job's id is the same on every PE and new each run.
            env_seed = os.environ.get("ROCSHMEM_TEST_SEED")
            job = os.environ.get("ROCSHMEM_RUN_UNIQUEID", "")
            args.seed = int(env_seed, 0) if env_seed else int.from_bytes(
                hashlib.blake2b(job.encode(), digest_size=8).digest(), "little") >> 1
        return run_pe(args)
    return launch(args)


if __name__ == "__main__":
    sys.exit(main())
