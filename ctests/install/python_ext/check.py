"""Runs the upstream-shaped extension built against the install, at every PE of a job
(rocshmem-run -n N python check.py <build dir of the extension>): a ring of putmem, then an
atomic fetch-add on PE 0, with fresh random values checked on the receiving PE."""
import random
import sys

import numpy as np

sys.path.insert(0, sys.argv[1])
import _rocshmem4py_ext as r  # noqa: E402

r.rocshmem_init()
me, n = r.rocshmem_my_pe(), r.rocshmem_n_pes()
assert r.rocshmem_team_n_pes(0) == n
buf = r.rocshmem_malloc(8 * 64)
cnt = r.rocshmem_malloc(8)
zero = np.zeros(1, "int64")
r.rocshmem_putmem(cnt, zero.ctypes.data, 8, me)
rng = np.random.default_rng([random.SystemRandom().getrandbits(32), me])
mine = rng.integers(-(1 << 60), 1 << 60, 64, dtype="int64")
r.rocshmem_barrier_all()
r.rocshmem_putmem(buf, mine.ctypes.data, mine.nbytes, (me + 1) % n)
r.rocshmem_barrier_all()
got = np.zeros(64, "int64")
r.rocshmem_getmem(got.ctypes.data, buf, got.nbytes, me)
back = np.zeros(64, "int64")
r.rocshmem_getmem(back.ctypes.data, buf, back.nbytes, (me + 1) % n)
assert (back == mine).all(), "what this PE put on the next PE"
old = r.rocshmem_long_atomic_fetch_add(cnt, me + 1, 0)
r.rocshmem_barrier_all()
total = np.zeros(1, "int64")
r.rocshmem_getmem(total.ctypes.data, cnt, 8, 0)
assert int(total[0]) == n * (n + 1) // 2 and 0 <= old < int(total[0]), (old, total)
assert (got != 0).any()
r.rocshmem_free(cnt)
r.rocshmem_free(buf)
r.rocshmem_finalize()
print(f"python extension: PE {me} of {n} ok", flush=True)
