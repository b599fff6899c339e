#!/usr/bin/env python3
"""Can this process use its GPU? Makes the device current (LOCAL_RANK, or ROCSHMEM_RUN_RANK,
modulo the GPUs it sees), runs a small kernel and waits for it; prints the CUDA_MPS_* variables
it got (MPS: a client reaches the control daemon through CUDA_MPS_PIPE_DIRECTORY) and, on
failure, the error. Exit status 0 if the GPU was usable, 1 if not. Used by run_h200.sh and
run_h200_more.sh before each test (one process) and under torchrun (each child).

    python cuda_probe.py
    python -m torch.distributed.run --standalone --nproc_per_node=2 cuda_probe.py
"""

import os
import sys


def main() -> int:
    tag = " ".join(f"{k}={os.environ[k]}" for k in ("RANK", "LOCAL_RANK", "ROCSHMEM_RUN_RANK") if k in os.environ)
    tag = f"pid {os.getpid()}" + (f", {tag}" if tag else "")
    env = " ".join(f"{k}={v}" for k, v in sorted(os.environ.items())
                   if k.startswith("CUDA_MPS_") or k == "CUDA_VISIBLE_DEVICES") or "no CUDA_MPS_* variables"
    dev = "?"
    try:
        import torch

        n = torch.cuda.device_count()
        local = int(os.environ.get("LOCAL_RANK", os.environ.get("ROCSHMEM_RUN_RANK", "0")))
        if n == 0:
            raise RuntimeError("torch sees no CUDA device")
        dev = f"cuda:{local % n} of {n}"
        torch.cuda.set_device(local % n)
        got = torch.ones(256, device="cuda").sum().item()
        torch.cuda.synchronize()
        if got != 256:
            raise RuntimeError(f"a kernel summed 256 ones to {got}")
    except Exception as e:  # noqa: BLE001 - report whatever stopped it
        first = str(e).strip().splitlines()[0] if str(e).strip() else ""
        print(f"FAIL cuda_probe ({tag}): {dev}: {type(e).__name__}: {first} [{env}]", file=sys.stderr, flush=True)
        return 1
    print(f"cuda_probe ({tag}): {dev} usable [{env}]", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
