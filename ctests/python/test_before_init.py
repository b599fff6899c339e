"""The rocshmem package before init, as a single PE, and after finalize (one process, started
without a launcher; run with --noconftest). Every call raises RocshmemError with the library's
message; nothing crashes."""

import os
import subprocess
import sys

import numpy as np
import pytest

import rocshmem
from rocshmem import RocshmemError

BEFORE = "called before rocshmem_init"


def test_calls_before_init_raise():
    assert not rocshmem.initialized()
    local = np.zeros(8, "int64")
    for what, f in [
        ("rocshmem_my_pe", rocshmem.my_pe),
        ("rocshmem_n_pes", rocshmem.n_pes),
        ("rocshmem_calloc", lambda: rocshmem.array(8, "int64")),
        ("rocshmem_putmem", lambda: rocshmem.put(local, local, 0)),
        ("rocshmem_getmem", lambda: rocshmem.get(local, local, 0)),
        ("rocshmem_int64_atomic_fetch_add", lambda: rocshmem.atomic_fetch_add(local, 0, 1, 0)),
        ("rocshmem_barrier_all", rocshmem.barrier_all),
        ("rocshmem_sync_all", rocshmem.sync_all),
        ("rocshmem_quiet", rocshmem.quiet),
        ("rocshmem_fence", rocshmem.fence),
        ("rocshmem_finalize", rocshmem.finalize),
        ("rocshmem_int64_wait_until", lambda: rocshmem.wait_until(local, 0, "eq", 0)),
    ]:
        with pytest.raises(RocshmemError) as e:
            f()
        msg = str(e.value)
        assert msg.startswith(f"rocshmem: PE ?: error: {what}: ") and BEFORE in msg, msg
    for f in (lambda: rocshmem.TEAM_WORLD.n_pes(), lambda: rocshmem.reduce(local, local),
              lambda: rocshmem.broadcast(local, local, 0), lambda: rocshmem.TEAM_SHARED.split_strided(0, 1, 1)):
        with pytest.raises(RocshmemError, match="before rocshmem.init"):
            f()


def test_single_pe_then_after_finalize():
    uid = rocshmem.get_uniqueid()  # allowed before init
    assert len(uid) == 128
    rocshmem.init(uid=uid, rank=0, nranks=1)
    assert (rocshmem.my_pe(), rocshmem.n_pes()) == (0, 1)
    a = rocshmem.array(100, "float32")
    src = np.random.default_rng().standard_normal(100).astype("float32")
    rocshmem.put(a, src, 0)
    np.testing.assert_array_equal(a, src)
    rocshmem.finalize()
    assert not rocshmem.initialized()
    with pytest.raises(RocshmemError, match="called after rocshmem_finalize"):
        rocshmem.my_pe()
    with pytest.raises(RocshmemError, match="freed"):
        rocshmem.put(a, src, 0)  # the array died with the heap: refused, not dereferenced
    with pytest.raises(RocshmemError, match="after rocshmem_finalize|before rocshmem.init"):
        rocshmem.reduce(src, src)


def test_library_from_environment():
    """ROCSHMEM_LIBRARY picks the library; a wrong one is an error at the first call, and
    importing never needs it."""
    env = dict(os.environ, ROCSHMEM_LIBRARY="/nonexistent/librocshmem.so")
    code = ("import rocshmem\n"
            "try:\n    rocshmem.my_pe()\nexcept rocshmem.RocshmemError as e:\n    print('ERR', e)\n")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "ERR rocshmem: PE ?: error: loading the library: /nonexistent/librocshmem.so (from ROCSHMEM_LIBRARY)" \
        in out.stdout, out.stdout
    env["ROCSHMEM_LIBRARY"] = rocshmem.library_path()
    out = subprocess.run([sys.executable, "-c", "import rocshmem; print(rocshmem.info()['library'])"], env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == os.path.abspath(rocshmem.library_path()), out
