"""Session setup for the upstream-API tests: written only against upstream rocshmem4py's
documented API (its README and module list), as a program written for upstream would be. How
the job starts is the ctest's choice (ROCSHMEM4PY_INIT): "torch" -> init_with_torch() (under
torchrun, rocshmem-run or mpirun), "mpi" -> init_with_mpi() (mpirun, mpi4py), "raw" ->
rocshmem_init(). A failed test ends its PE at once (the launcher then stops the others)."""

import os
import sys

import pytest

MODE = os.environ.get("ROCSHMEM4PY_INIT", "torch")


@pytest.fixture(scope="session", autouse=True)
def rocshmem_session():
    import rocshmem4py

    if MODE == "torch":
        rocshmem4py.init_with_torch()
    elif MODE == "mpi":
        rocshmem4py.init_with_mpi()
    else:
        rocshmem4py.set_hip_device_from_env()
        rocshmem4py.rocshmem_init()
    yield
    if MODE == "torch":
        rocshmem4py.finalize_with_torch()
    elif MODE == "mpi":
        rocshmem4py.finalize_with_mpi()
    else:
        rocshmem4py.rocshmem_barrier_all()
        rocshmem4py.rocshmem_finalize()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if rep.failed:
        sys.stderr.write(f"\nFAIL rocshmem4py pytest: {item.nodeid} ({rep.when}):\n{rep.longreprtext}\n")
        sys.stderr.flush()
        os._exit(1)
