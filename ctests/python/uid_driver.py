#!/usr/bin/env python3
"""Starts N copies of a command as the PEs of a unique-id job, without any launcher:

    uid_driver.py -n N -- python3 -m pytest ...

Each copy gets ROCSHMEM_PYTEST_UID_DIR (a fresh folder where PE 0 writes the id),
ROCSHMEM_PYTEST_RANK and ROCSHMEM_PYTEST_NRANKS (conftest.py does the init). Exit status 0
only if every copy exits 0; if one fails, the others are stopped after a grace period."""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("-n", type=int, required=True)
    p.add_argument("--timeout", type=float, default=240)
    p.add_argument("command", nargs=argparse.REMAINDER)
    a = p.parse_args()
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    if a.n < 1 or not cmd:
        p.error("need -n >= 1 and a command")
    d = tempfile.mkdtemp(prefix="rocshmem-uid-")
    procs = []
    try:
        for r in range(a.n):
            env = dict(os.environ, ROCSHMEM_PYTEST_UID_DIR=d, ROCSHMEM_PYTEST_RANK=str(r),
                       ROCSHMEM_PYTEST_NRANKS=str(a.n))
            for k in ("ROCSHMEM_RUN_RANK", "ROCSHMEM_RUN_NRANKS", "ROCSHMEM_RUN_UNIQUEID"):
                env.pop(k, None)
            procs.append(subprocess.Popen(cmd, env=env))
        deadline = time.monotonic() + a.timeout
        status = {}
        while len(status) < a.n:
            for i, pr in enumerate(procs):
                if i not in status and pr.poll() is not None:
                    status[i] = pr.returncode
                    if pr.returncode != 0:
                        print(f"uid_driver: PE {i} exited with status {pr.returncode}", file=sys.stderr, flush=True)
                        deadline = min(deadline, time.monotonic() + 15)
            if time.monotonic() > deadline:
                for i, pr in enumerate(procs):
                    if i not in status:
                        print(f"uid_driver: PE {i} did not finish in time: stopped", file=sys.stderr, flush=True)
                        pr.kill()
                        pr.wait()
                        status[i] = -9
                break
            time.sleep(0.05)
    finally:
        for pr in procs:
            if pr.poll() is None:
                pr.kill()
                pr.wait()
        shutil.rmtree(d, ignore_errors=True)
    bad = {i: rc for i, rc in sorted(status.items()) if rc != 0}
    if bad:
        print(f"FAIL uid_driver: PE(s) {sorted(bad)} failed: {bad}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
