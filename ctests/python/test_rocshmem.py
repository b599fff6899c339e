"""The rocshmem Python package on the host platform, at several PEs (run by ctest under
rocshmem-run, mpirun and unique-id init; see conftest.py). Every test moves fresh random data
(the seed is PE 0's, broadcast; ROCSHMEM_TEST_SEED replays a run) and checks it on the PE that
received it. Bad input must raise the library's one-line message, never crash."""

import gc
import os
import random
import zlib

import numpy as np
import pytest

import rocshmem
from rocshmem import RocshmemError, _arrays

SIZES = [1, 7, 4096, 65537]
DTYPES = ["int8", "int32", "uint64", "float16", "float64"]


@pytest.fixture(scope="module")
def job():
    me, n = rocshmem.my_pe(), rocshmem.n_pes()
    # PE 0's seed to everyone: a broadcast (itself under test) of one int64.
    cell = rocshmem.array(1, "int64")
    src = rocshmem.array(1, "int64")
    if me == 0:
        env = os.environ.get("ROCSHMEM_TEST_SEED")
        src[0] = int(env, 0) if env else random.SystemRandom().getrandbits(62)
    rocshmem.broadcast(cell, src, 0)
    seed = int(cell[0])
    if me == 0:
        print(f"\nrocshmem pytest: {n} PEs, seed {seed:#x} (replay: ROCSHMEM_TEST_SEED={seed:#x})")
    rocshmem.free(src)
    rocshmem.free(cell)
    return me, n, seed


def data(seed, pe, salt, shape, dtype):
    """What PE `pe` sends for `salt`: any PE can recompute it."""
    rng = np.random.default_rng([seed, pe, zlib.crc32(repr(salt).encode())])
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return rng.standard_normal(shape).astype(dt)
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, size=shape, dtype=dt, endpoint=True)


def need_torch():
    """torch, or a skip (every PE alike) where it is not installed; with ROCSHMEM_PYTEST_TORCH=1
    (the ctests whose venv has torch) a missing torch is a failure."""
    if os.environ.get("ROCSHMEM_PYTEST_TORCH") == "1":
        import torch
        return torch
    return pytest.importorskip("torch")


def errmsg(me, call):
    return f"rocshmem: PE {me}: error: {call}: "


def test_identity(job):
    me, n, _ = job
    assert 0 <= me < n
    want = os.environ.get("ROCSHMEM_PYTEST_NRANKS")
    if want:
        assert n == int(want)
    assert rocshmem.initialized()
    info = rocshmem.info()
    assert info["version"] == rocshmem.__version__ and info["name"]
    assert rocshmem.TEAM_WORLD.my_pe() == me and rocshmem.TEAM_WORLD.n_pes() == n
    with pytest.raises(RocshmemError, match="already initialised"):
        rocshmem.init()


@pytest.mark.parametrize("dtype", DTYPES)
def test_put_get_whole_arrays(job, dtype):
    me, n, seed = job
    nxt, prev = (me + 1) % n, (me - 1) % n
    for size in SIZES:
        dst = rocshmem.array(size, dtype)
        assert isinstance(dst, np.ndarray) and dst.shape == (size,) and dst.dtype == np.dtype(dtype)
        assert not dst.any(), "arrays start zeroed"
        rocshmem.barrier_all()  # nobody writes into it before everyone has looked
        src = data(seed, me, ("put", dtype, size), size, dtype)
        rocshmem.put(dst, src, nxt)
        rocshmem.barrier_all()
        np.testing.assert_array_equal(dst, data(seed, prev, ("put", dtype, size), size, dtype))
        back = np.empty(size, dtype)
        rocshmem.get(back, dst, nxt)  # what we put there
        np.testing.assert_array_equal(back, src)
        rocshmem.barrier_all()
        rocshmem.free(dst)


class _Exported:
    """What rocshmem.tensor hands torch.from_dlpack, over a symmetric array (torch need not be
    installed: numpy.from_dlpack consumes the same capsule)."""

    def __init__(self, arr):
        self.arr = arr

    def __dlpack_device__(self):
        return (_arrays.KDL_CPU, 0)

    def __dlpack__(self, stream=None, **kwargs):
        a = self.arr
        return _arrays.dlpack_capsule(self, a.ctypes.data, a.shape, _arrays._c_strides(a.shape),
                                      _arrays.dtype_of(a.dtype.name), (_arrays.KDL_CPU, 0))


def test_dlpack_export(job):
    # Capsules consumed and capsules dropped unconsumed, many times: the capsule destructor
    # runs during the capsule's deallocation (it once took a reference there and crashed), and
    # the consumer frees the DLPack block with libc's free.
    me, n, seed = job
    nxt, prev = (me + 1) % n, (me - 1) % n
    for size in (1, 4099):
        dst = rocshmem.array(size, "int64")
        rocshmem.barrier_all()
        rocshmem.put(dst, data(seed, me, ("dlpack", size), size, "int64"), nxt)
        rocshmem.barrier_all()
        want = data(seed, prev, ("dlpack", size), size, "int64")
        for _ in range(50):
            np.testing.assert_array_equal(np.from_dlpack(_Exported(dst)), want)
            capsule = _Exported(dst).__dlpack__()
            del capsule
        gc.collect()
        rocshmem.barrier_all()
        rocshmem.free(dst)


def test_put_get_slices_and_2d(job):
    me, n, seed = job
    nxt, prev = (me + 1) % n, (me - 1) % n
    a = rocshmem.array((8, 100), "int32")
    row = data(seed, me, "row", 37, "int32")
    rocshmem.put(a[me % 8, 10:47], row, nxt)  # a contiguous slice of a row
    block = data(seed, me, "block", (2, 100), "int32")
    rocshmem.put(a[6:8], block, nxt)  # whole rows: contiguous 2-D
    rocshmem.barrier_all()
    np.testing.assert_array_equal(a[prev % 8, 10:47], data(seed, prev, "row", 37, "int32"))
    np.testing.assert_array_equal(a[6:8], data(seed, prev, "block", (2, 100), "int32"))
    part = np.zeros(5, "int32")
    rocshmem.get(part, a[6, 3:8], prev)  # prev holds what prev-1 sent
    np.testing.assert_array_equal(part, data(seed, (prev - 1) % n, "block", (2, 100), "int32")[0, 3:8])
    rocshmem.barrier_all()
    rocshmem.free(a)


def test_nbi_and_quiet(job):
    me, n, seed = job
    nxt, prev = (me + 1) % n, (me - 1) % n
    a = rocshmem.array(3000, "float64")
    src = data(seed, me, "nbi", 3000, "float64")
    rocshmem.put_nbi(a, src, nxt)
    rocshmem.quiet()
    rocshmem.fence()
    rocshmem.barrier_all()
    np.testing.assert_array_equal(a, data(seed, prev, "nbi", 3000, "float64"))
    out = np.empty(3000)
    rocshmem.get_nbi(out, a, nxt)
    rocshmem.quiet()
    np.testing.assert_array_equal(out, src)
    rocshmem.sync_all()
    rocshmem.barrier_all()
    rocshmem.free(a)


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint32", "uint64"])
def test_atomics_integer(job, dtype):
    me, n, seed = job
    c = rocshmem.array(4, dtype)
    rocshmem.barrier_all()
    # Every PE adds me+1 to PE 0's counter: PE 0 ends with n(n+1)/2; the values returned are
    # the running sums seen before each add, all different.
    old = rocshmem.atomic_fetch_add(c, 0, me + 1, 0)
    rocshmem.atomic_add(c, 1, 2, 0)
    rocshmem.atomic_inc(c, 2, 0)
    first = rocshmem.atomic_fetch_inc(c, 3, 0)
    rocshmem.barrier_all()
    total = rocshmem.atomic_fetch(c, 0, 0)
    assert total == n * (n + 1) // 2
    assert 0 <= old <= total - (me + 1)
    assert rocshmem.atomic_fetch(c, 1, 0) == 2 * n and rocshmem.atomic_fetch(c, 2, 0) == n
    assert 0 <= first < n
    if me == 0:
        np.testing.assert_array_equal(c, np.array([total, 2 * n, n, n], dtype))
    rocshmem.barrier_all()
    # set / swap / compare_swap / bitwise ops on my own slot of the next PE.
    nxt, prev = (me + 1) % n, (me - 1) % n
    d = rocshmem.array(3, dtype)
    v = int(data(seed, me, ("amo", dtype), 3, dtype).view(np.dtype(dtype))[0])
    w = int(data(seed, me, ("amo", dtype), 3, dtype)[1])
    rocshmem.atomic_set(d, 0, v, nxt)
    assert rocshmem.atomic_swap(d, 0, w, nxt) == v
    assert rocshmem.atomic_compare_swap(d, 0, v, 1, nxt) == w, "no swap: cond differs"
    assert rocshmem.atomic_compare_swap(d, 0, w, v, nxt) == w, "swap"
    assert rocshmem.atomic_fetch(d, 0, nxt) == v
    rocshmem.atomic_set(d, 1, 0b1100, nxt)
    assert rocshmem.atomic_fetch_or(d, 1, 0b0011, nxt) == 0b1100
    assert rocshmem.atomic_fetch_and(d, 1, 0b0110, nxt) == 0b1111
    assert rocshmem.atomic_fetch_xor(d, 1, 0b0101, nxt) == 0b0110
    assert rocshmem.atomic_fetch(d, 1, nxt) == 0b0011
    rocshmem.barrier_all()
    pv = int(data(seed, prev, ("amo", dtype), 3, dtype)[0])
    assert int(d[0]) == pv and int(d[1]) == 0b0011
    rocshmem.barrier_all()
    rocshmem.free(d)
    rocshmem.free(c)


def test_atomics_float(job):
    me, n, seed = job
    nxt = (me + 1) % n
    d = rocshmem.array(2, "float64")
    x = float(data(seed, me, "famo", 1, "float64")[0])
    rocshmem.atomic_set(d, 1, x, nxt)
    assert rocshmem.atomic_swap(d, 1, 2.5, nxt) == x
    assert rocshmem.atomic_fetch(d, 1, nxt) == 2.5
    with pytest.raises(TypeError, match="no double form of atomic_fetch_add"):
        rocshmem.atomic_fetch_add(d, 0, 1.0, nxt)
    rocshmem.barrier_all()
    rocshmem.free(d)


def test_wait_until_and_test(job):
    me, n, seed = job
    nxt, prev = (me + 1) % n, (me - 1) % n
    flag = rocshmem.array((2, 2), "int64")
    payload = rocshmem.array(512, "uint8")
    assert not rocshmem.test(flag, (1, 1), "eq", me + 100)  # nobody writes before the barrier
    rocshmem.barrier_all()
    rocshmem.put(payload, data(seed, me, "wait", 512, "uint8"), nxt)
    rocshmem.fence()
    rocshmem.atomic_set(flag, (1, 1), nxt + 100, nxt)  # the next PE waits for its own number + 100
    rocshmem.wait_until(flag, (1, 1), "eq", me + 100)
    assert rocshmem.test(flag, (-1, -1), rocshmem.CMP_GE, me + 100)
    np.testing.assert_array_equal(payload, data(seed, prev, "wait", 512, "uint8"))
    rocshmem.barrier_all()
    rocshmem.free(payload)
    rocshmem.free(flag)


OPS = {"sum": np.add, "prod": np.multiply, "min": np.minimum, "max": np.maximum,
       "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8", "float32", "float64"])
@pytest.mark.parametrize("op", list(OPS))
def test_reduce(job, op, dtype):
    me, n, seed = job
    if np.dtype(dtype).kind == "f" and op in ("and", "or", "xor"):
        x, y = rocshmem.array(4, dtype), rocshmem.array(4, dtype)
        with pytest.raises(TypeError, match=f"has no {dtype} form"):
            rocshmem.reduce(x, y, op=op)
        rocshmem.free(y)
        rocshmem.free(x)
        return
    for size in (1, 1000):
        def vals(pe):
            v = data(seed, pe, ("reduce", op, dtype, size), size, dtype)
            # small values: no overflow in sums and products of a few PEs
            return (v % 3 + 1).astype(dtype) if np.dtype(dtype).kind != "f" else (v * 0.5 + 1).astype(dtype)

        src, dst = rocshmem.array(size, dtype), rocshmem.array(size, dtype)
        src[:] = vals(me)
        rocshmem.reduce(dst, src, op=op)
        want = vals(0)
        for pe in range(1, n):
            want = OPS[op](want, vals(pe)).astype(dtype)
        if np.dtype(dtype).kind == "f":
            np.testing.assert_allclose(dst, want, rtol=1e-5)
        else:
            np.testing.assert_array_equal(dst, want)
        rocshmem.free(dst)
        rocshmem.free(src)


def test_broadcast_every_root(job):
    me, n, seed = job
    src, dst = rocshmem.array(777, "float32"), rocshmem.array(777, "float32")
    for root in range(n):
        src[:] = data(seed, me, ("bcast", root), 777, "float32")
        rocshmem.broadcast(dst, src, root)
        np.testing.assert_array_equal(dst, data(seed, root, ("bcast", root), 777, "float32"))
    rocshmem.free(dst)
    rocshmem.free(src)


def test_teams(job):
    me, n, seed = job
    world = rocshmem.TEAM_WORLD
    evens = world.split_strided(0, 2, (n + 1) // 2)
    if me % 2:
        assert evens is None
    else:
        assert evens.my_pe() == me // 2 and evens.n_pes() == (n + 1) // 2
        assert evens.translate_pe(evens.my_pe(), world) == me
        assert world.translate_pe(me, evens) == me // 2
    # Collectives on the team: members only.
    a, b = rocshmem.array(64, "int64"), rocshmem.array(64, "int64")
    if evens is not None:
        a[:] = data(seed, me, "team", 64, "int64") % 1000
        rocshmem.reduce(b, a, op="sum", team=evens)
        want = sum(data(seed, pe, "team", 64, "int64") % 1000 for pe in range(0, n, 2))
        np.testing.assert_array_equal(b, want)
        rocshmem.broadcast(b, a, evens.n_pes() - 1, team=evens)
        np.testing.assert_array_equal(b, data(seed, 2 * (evens.n_pes() - 1), "team", 64, "int64") % 1000)
        evens.barrier()
        evens.sync()
        evens.destroy()
        with pytest.raises(RocshmemError, match="destroyed"):
            evens.n_pes()
    row, col = world.split_2d(2)
    assert row.n_pes() == min(2, n - (me // 2) * 2) and row.my_pe() == me % 2
    assert col.my_pe() == me // 2
    row.destroy()
    col.destroy()
    assert rocshmem.TEAM_SHARED.n_pes() >= 1
    with pytest.raises(RocshmemError, match="cannot be destroyed"):
        world.destroy()
    rocshmem.barrier_all()
    rocshmem.free(b)
    rocshmem.free(a)


def test_host_streams(job):
    me, n, seed = job
    nxt, prev = (me + 1) % n, (me - 1) % n
    dst = rocshmem.array(5000, "uint8")
    sig = rocshmem.array(1, "uint64")
    red_src, red_dst = rocshmem.array(10, "int64"), rocshmem.array(10, "int64")
    a2a_src, a2a_dst = rocshmem.array(4 * n, "int32"), rocshmem.array(4 * n, "int32")
    with rocshmem.HostStream() as s:
        assert rocshmem.stream_handle(s) == s.handle != 0
        rocshmem.barrier_all(stream=s)
        rocshmem.put_signal(dst, data(seed, me, "sig", 5000, "uint8"), sig, 7, nxt, op="set", stream=s)
        rocshmem.signal_wait_until(sig, "eq", 7, stream=s)
        rocshmem.quiet(stream=s)
        s.synchronize()
        np.testing.assert_array_equal(dst, data(seed, prev, "sig", 5000, "uint8"))
        rocshmem.sync_all(stream=s)
        rocshmem.signal_add(sig, 5, nxt, stream=s)
        rocshmem.signal_wait_until(sig, "ge", 12, stream=s)
        rocshmem.barrier_all(stream=s)
        rocshmem.signal_set(sig, 1, nxt, stream=s)
        rocshmem.signal_wait_until(sig, "eq", 1, stream=s)
        s.synchronize()
        assert int(sig[0]) == 1
        # put / get on the stream
        rocshmem.put(dst[:100], data(seed, me, "sput", 100, "uint8"), nxt, stream=s)
        rocshmem.barrier_all(stream=s)
        back = np.zeros(100, "uint8")
        rocshmem.get(back, dst[:100], prev, stream=s)
        s.synchronize()
        np.testing.assert_array_equal(dst[:100], data(seed, prev, "sput", 100, "uint8"))
        np.testing.assert_array_equal(back, data(seed, (prev - 1) % n, "sput", 100, "uint8"))
        rocshmem.barrier_all(stream=s)
        # collectives on the stream
        red_src[:] = data(seed, me, "sred", 10, "int64") % 100
        rocshmem.reduce(red_dst, red_src, op="max", stream=s)
        a2a_src[:] = np.arange(4 * n, dtype="int32") + 1000 * me
        rocshmem.alltoall(a2a_dst, a2a_src, stream=s)
        rocshmem.broadcast(dst[2500:], dst[:2500], n - 1, stream=s)
        rocshmem.TEAM_WORLD.barrier(stream=s)
        rocshmem.TEAM_WORLD.sync(stream=s)
        s.synchronize()
    want = np.max([data(seed, pe, "sred", 10, "int64") % 100 for pe in range(n)], axis=0)
    np.testing.assert_array_equal(red_dst, want)
    root, before_root = n - 1, (n - 2) % n  # the root's dst[:2500] came from the PE before it
    np.testing.assert_array_equal(dst[2500:2600], data(seed, (before_root - 0) % n, "sput", 100, "uint8"))
    np.testing.assert_array_equal(dst[2600:], data(seed, before_root, "sig", 5000, "uint8")[100:2500])
    assert root >= 0
    np.testing.assert_array_equal(a2a_dst, np.concatenate([np.arange(4 * me, 4 * me + 4) + 1000 * j
                                                           for j in range(n)]).astype("int32"))
    rocshmem.barrier_all()
    for a in (a2a_dst, a2a_src, red_dst, red_src, sig, dst):
        rocshmem.free(a)


def test_bad_input(job):
    me, n, _ = job
    a = rocshmem.array(16, "int32")
    local = np.zeros(16, "int32")
    with pytest.raises(RocshmemError) as e:
        rocshmem.put(a, local, n)
    assert str(e.value).startswith(errmsg(me, "rocshmem_putmem") + f"invalid PE {n}")
    with pytest.raises(RocshmemError) as e:
        rocshmem.put(local, a, 0)  # the destination is not symmetric
    assert str(e.value).startswith(errmsg(me, "rocshmem_putmem")) and "symmetric heap" in str(e.value)
    with pytest.raises(RocshmemError, match=r"invalid PE -1"):
        rocshmem.get(local, a, -1)
    with pytest.raises(ValueError, match="same size"):
        rocshmem.put(a, np.zeros(15, "int32"), 0)
    with pytest.raises(ValueError, match="view one as the other"):
        rocshmem.put(a, np.zeros(16, "float32"), 0)
    with pytest.raises(ValueError, match="not contiguous"):
        rocshmem.put(a[::2], local[::2], 0)
    with pytest.raises(TypeError, match="not an array"):
        rocshmem.put(a, object(), 0)
    with pytest.raises(TypeError, match="pe must be an int"):
        rocshmem.put(a, local, "1")
    with pytest.raises(ValueError, match="read-only"):
        rocshmem.get(b"x" * 64, a, 0)
    with pytest.raises(IndexError):
        rocshmem.atomic_fetch_add(a, 16, 1, 0)
    with pytest.raises(OverflowError):
        rocshmem.atomic_set(a, 0, 2 ** 40, 0)
    with pytest.raises(ValueError, match="is not one of"):
        rocshmem.reduce(a, a, op="median")
    with pytest.raises(ValueError, match="cmp 'approx'"):
        rocshmem.wait_until(a, 0, "approx", 1)
    with pytest.raises(RocshmemError, match="rocshmem_int32_wait_until: invalid argument"):
        rocshmem.wait_until(a, 0, 17, 1)
    with pytest.raises(TypeError, match="not a stream"):
        rocshmem.put(a, local, 0, stream=object())
    with pytest.raises(RocshmemError, match="not a stream of this process"):
        rocshmem.put(a, local, 0, stream=0x1234)
    with pytest.raises(TypeError, match="not an element type"):
        rocshmem.array(4, "complex128")
    with pytest.raises(RocshmemError, match="at least one element"):
        rocshmem.array(0, "int8")
    with pytest.raises(RocshmemError, match="ROCSHMEM_HEAP_SIZE"):
        rocshmem.array(1 << 50, "uint8")  # every PE fails alike: collective-safe
    with pytest.raises(OverflowError, match=r"shape \(4611686018427387904,\) of int64 is 36893488147419103232 bytes"):
        rocshmem.array(1 << 62, "int64")  # 2**65 bytes: once wrapped to 0 in size_t
    with pytest.raises(RocshmemError, match="rocshmem_team_split_strided"):
        rocshmem.TEAM_WORLD.split_strided(0, 1, n + 1)
    with pytest.raises(RocshmemError, match="unique-id init needs all"):
        rocshmem.init(uid=b"x" * 128)
    with pytest.raises(RocshmemError, match="has 3 bytes"):
        rocshmem.init(uid=b"abc", rank=0, nranks=1)
    with pytest.raises(RocshmemError, match="whole array"):
        rocshmem.free(a[2:])
    with pytest.raises(RocshmemError, match="not in an array from rocshmem.array"):
        rocshmem.free(local)
    rocshmem.barrier_all()
    rocshmem.free(a)
    with pytest.raises(RocshmemError, match="was freed"):
        rocshmem.put(a, local, 0)
    with pytest.raises(RocshmemError, match="was freed"):
        rocshmem.free(a)
    # Nothing went wrong for real: the runtime still works.
    b = rocshmem.array(16, "int32")
    rocshmem.put(b, np.full(16, me, "int32"), (me + 1) % n)
    rocshmem.barrier_all()
    np.testing.assert_array_equal(b, np.full(16, (me - 1) % n, "int32"))
    rocshmem.barrier_all()
    rocshmem.free(b)


def test_buffers_and_dtypes(job):
    me, n, seed = job
    nxt, prev = (me + 1) % n, (me - 1) % n
    a = rocshmem.array(32, "uint8")
    rocshmem.put(a, bytes(range(me, me + 32)), nxt)  # any buffer is a source
    rocshmem.barrier_all()
    assert bytes(a) == bytes(range(prev, prev + 32))
    out = bytearray(32)
    rocshmem.get(out, a, me)
    assert bytes(out) == bytes(range(prev, prev + 32))
    assert rocshmem.dtype_of("float16") == rocshmem.dtype_of(np.float16)
    assert rocshmem.dtype_of(int).typename == "int64" and rocshmem.dtype_of("double").typename == "double"
    rocshmem.barrier_all()
    rocshmem.free(a)


def test_stale_array_refused_after_reallocation(job):
    """A freed array never aliases the allocation that reuses its address: every call refuses
    it (and its views), numpy refuses writes to it, and the new array works."""
    me, n, seed = job
    nxt, prev = (me + 1) % n, (me - 1) % n
    b = rocshmem.array(10, "int64")
    view = b[2:6]
    rocshmem.free(b)
    c = rocshmem.array(10, "int64")
    assert c.ctypes.data == b.ctypes.data, "the allocator reuses the freed block (the case under test)"
    src = data(seed, me, "stale", 10, "int64")
    for call, args in [(rocshmem.put, (b, src, nxt)), (rocshmem.put, (view, src[:4], nxt)),
                       (rocshmem.get, (src, b, nxt)), (rocshmem.put_nbi, (b, src, nxt)),
                       (rocshmem.atomic_fetch_add, (b, 0, 1, nxt)), (rocshmem.wait_until, (b, 0, "eq", 0)),
                       (rocshmem.reduce, (b, c)), (rocshmem.broadcast, (c, b, 0)), (rocshmem.free, (b,))]:
        with pytest.raises(RocshmemError, match=r"was freed .*allocation generation"):
            call(*args)
    with pytest.raises(ValueError, match="read-only"):
        b[0] = 1  # numpy refuses writes to the array rocshmem.array returned
    assert not c.any(), "nothing reached the new array"
    rocshmem.barrier_all()
    rocshmem.put(c, src, nxt)
    rocshmem.barrier_all()
    np.testing.assert_array_equal(c, data(seed, prev, "stale", 10, "int64"))
    rocshmem.barrier_all()
    rocshmem.free(c)


def test_stale_tensor_refused_after_reallocation(job):
    torch = need_torch()
    me, n, seed = job
    nxt, prev = (me + 1) % n, (me - 1) % n
    b = rocshmem.tensor(64, torch.float32)
    view = b[8:16]
    rocshmem.free(b)
    c = rocshmem.tensor(64, torch.float32)
    assert c.data_ptr() == b.data_ptr()
    src = torch.from_numpy(data(seed, me, "stale_t", 64, "float32"))
    for args in [(b, src), (view, src[:8]), (b[1:2], src[:1])]:
        with pytest.raises(RocshmemError, match="was freed"):
            rocshmem.put(*args, nxt)
    with pytest.raises(RocshmemError, match="was freed"):
        rocshmem.free(b)
    rocshmem.barrier_all()
    rocshmem.put(c, src, nxt)
    rocshmem.barrier_all()
    np.testing.assert_array_equal(c.numpy(), data(seed, prev, "stale_t", 64, "float32"))
    rocshmem.barrier_all()
    rocshmem.free(c)


def test_fcollect_and_reduce_scatter_and_host_alltoall(job):
    me, n, seed = job
    for size in (1, 333):
        src, dst = rocshmem.array(size, "int32"), rocshmem.array(n * size, "int32")
        src[:] = data(seed, me, ("fcollect", size), size, "int32")
        rocshmem.fcollect(dst, src)
        np.testing.assert_array_equal(dst, np.concatenate([data(seed, pe, ("fcollect", size), size, "int32")
                                                           for pe in range(n)]))
        rocshmem.free(dst)
        rocshmem.free(src)
    for op, fn in (("sum", np.add), ("max", np.maximum)):
        src, dst = rocshmem.array(n * 50, "int64"), rocshmem.array(50, "int64")
        src[:] = data(seed, me, ("rs", op), n * 50, "int64") % 1000
        rocshmem.reduce_scatter(dst, src, op=op)
        want = data(seed, 0, ("rs", op), n * 50, "int64") % 1000
        for pe in range(1, n):
            want = fn(want, data(seed, pe, ("rs", op), n * 50, "int64") % 1000)
        np.testing.assert_array_equal(dst, want[me * 50:(me + 1) * 50])
        rocshmem.free(dst)
        rocshmem.free(src)
    src, dst = rocshmem.array(3 * n, "float64"), rocshmem.array(3 * n, "float64")
    src[:] = data(seed, me, "a2a_host", 3 * n, "float64")
    rocshmem.alltoall(dst, src)  # no stream: complete on return
    np.testing.assert_array_equal(dst, np.concatenate([data(seed, j, "a2a_host", 3 * n, "float64")[3 * me:3 * me + 3]
                                                       for j in range(n)]))
    with pytest.raises(ValueError, match="must hold the team's"):
        rocshmem.fcollect(dst, src)
    rocshmem.barrier_all()
    rocshmem.free(dst)
    rocshmem.free(src)
    # On a team: the evens
    evens = rocshmem.TEAM_WORLD.split_strided(0, 2, (n + 1) // 2)
    src, dst = rocshmem.array(4, "int32"), rocshmem.array(4 * ((n + 1) // 2), "int32")
    if evens is not None:
        src[:] = me * 10 + np.arange(4, dtype="int32")
        rocshmem.fcollect(dst, src, team=evens)
        np.testing.assert_array_equal(dst, np.concatenate([pe * 10 + np.arange(4, dtype="int32")
                                                           for pe in range(0, n, 2)]))
        evens.destroy()
    rocshmem.barrier_all()
    rocshmem.free(dst)
    rocshmem.free(src)
