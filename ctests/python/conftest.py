"""pytest setup for the rocshmem package tests (ctests/python): every PE runs the same tests in
the same order, so the collective calls inside them match up.

How the PEs start (set by the ctest that runs them):
- under rocshmem-run or mpirun: rocshmem.init();
- ROCSHMEM_PYTEST_UID_DIR set (uid_driver.py starts the processes): unique-id init, PE 0
  writes the id to a file in that folder, ROCSHMEM_PYTEST_RANK / _NRANKS give the rank.
ROCSHMEM_PYTEST_NRANKS (any mode) is the number of PEs the test expects; ROCSHMEM_PYTEST_CUDA=1
makes GPU ROCSHMEM_RUN_RANK % count current first (the GPU runs of ctests/python/gpu).
"""

import os
import sys
import time

import pytest

import rocshmem


def _uid_init() -> None:
    d = os.environ["ROCSHMEM_PYTEST_UID_DIR"]
    rank, nranks = int(os.environ["ROCSHMEM_PYTEST_RANK"]), int(os.environ["ROCSHMEM_PYTEST_NRANKS"])
    path = os.path.join(d, "uniqueid")
    if rank == 0:
        uid = rocshmem.get_uniqueid()
        with open(path + ".tmp", "wb") as f:
            f.write(uid)
        os.replace(path + ".tmp", path)
    else:
        deadline = time.monotonic() + 60
        while not os.path.exists(path):
            assert time.monotonic() < deadline, "no unique id from PE 0"
            time.sleep(0.01)
        with open(path, "rb") as f:
            uid = f.read()
    rocshmem.init(uid=uid, rank=rank, nranks=nranks)


@pytest.fixture(scope="session", autouse=True)
def runtime():
    if os.environ.get("ROCSHMEM_PYTEST_CUDA") == "1":
        # GPU runs (ctests/python/gpu): PE r on GPU r % count, its context made before init.
        import torch

        torch.cuda.set_device(int(os.environ.get("ROCSHMEM_RUN_RANK", "0")) % torch.cuda.device_count())
        torch.zeros(1, device="cuda")
    if os.environ.get("ROCSHMEM_PYTEST_UID_DIR"):
        _uid_init()
    else:
        rocshmem.init()
    yield
    rocshmem.finalize()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed test ends this PE at once, with its report: the other PEs would otherwise wait
    in the failed test's collectives; rocshmem-run (or the driver) then stops them."""
    outcome = yield
    rep = outcome.get_result()
    if rep.failed:
        pe = os.environ.get("ROCSHMEM_RUN_RANK", os.environ.get("ROCSHMEM_PYTEST_RANK", "?"))
        sys.stderr.write(f"\nFAIL rocshmem pytest: PE {pe}: {item.nodeid} ({rep.when}):\n{rep.longreprtext}\n")
        sys.stderr.flush()
        sys.stdout.flush()
        os._exit(1)
