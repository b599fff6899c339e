"""A program written only against upstream rocshmem4py's documented API (README: init and
finalize helpers, PE and team queries, teams, SymmetricBuffer and the framework-agnostic
allocation, put/get, collectives, the host atomic matrix, constants, rocshmem4py.interop.torch),
run unchanged on this package at several PEs. Data: torch tensors over symmetric memory (CPU
tensors on the host platform, CUDA tensors on GPUs), fresh random values (PE 0's seed,
broadcast with the API under test), checked on the PE that received them. The stream forms run
where there is a GPU (upstream's streams are GPU streams)."""

import os
import random

import pytest
import torch

import rocshmem4py
from rocshmem4py.interop import torch as rshmem_torch


@pytest.fixture(scope="module")
def job():
    me, n = rocshmem4py.rocshmem_my_pe(), rocshmem4py.rocshmem_n_pes()
    cell = rshmem_torch.create_tensor((1,), torch.int64)
    src = rshmem_torch.create_tensor((1,), torch.int64)
    if me == 0:
        env = os.environ.get("ROCSHMEM_TEST_SEED")
        src[0] = int(env, 0) if env else random.SystemRandom().getrandbits(62)
    rshmem_torch.broadcast(rocshmem4py.ROCSHMEM_TEAM_WORLD, cell, src, 0)
    sync()
    seed = int(cell[0])
    if me == 0:
        print(f"\nrocshmem4py pytest: {n} PEs, seed {seed:#x} (replay: ROCSHMEM_TEST_SEED={seed:#x})")
    rshmem_torch.free_tensor(src)
    rshmem_torch.free_tensor(cell)
    return me, n, seed


DEV = "cuda" if torch.cuda.is_available() else "cpu"
sync = torch.cuda.synchronize if DEV == "cuda" else (lambda: None)


def data(seed, pe, salt, shape, dtype):
    g = torch.Generator().manual_seed((seed * 1000003 + pe * 7919 + sum(map(ord, salt))) % (1 << 63))
    if dtype.is_floating_point:
        return torch.randn(shape, generator=g).to(dtype).to(DEV)
    info = torch.iinfo(dtype)
    return torch.randint(max(info.min, -(1 << 40)), min(info.max, 1 << 40), shape, generator=g, dtype=torch.int64
                         ).to(dtype).to(DEV)


def test_identity_and_constants(job):
    me, n, _ = job
    want = os.environ.get("ROCSHMEM_PYTEST_NRANKS")
    if want:
        assert n == int(want)
    assert 0 <= me < n
    world = rocshmem4py.ROCSHMEM_TEAM_WORLD
    assert (world, rocshmem4py.ROCSHMEM_TEAM_INVALID, rocshmem4py.ROCSHMEM_SUCCESS) == (0, -1, 0)
    assert rocshmem4py.rocshmem_team_my_pe(world) == me and rocshmem4py.rocshmem_team_n_pes(world) == n
    assert rocshmem4py.rocshmem_team_world() not in (0, -1)
    assert rocshmem4py.rocshmem_team_translate_pe(world, me, world) == me
    assert len({rocshmem4py.ROCSHMEM_CMP_EQ, rocshmem4py.ROCSHMEM_CMP_NE, rocshmem4py.ROCSHMEM_CMP_GT,
                rocshmem4py.ROCSHMEM_CMP_GE, rocshmem4py.ROCSHMEM_CMP_LT, rocshmem4py.ROCSHMEM_CMP_LE}) == 6
    assert rocshmem4py.ROCSHMEM_SIGNAL_SET != rocshmem4py.ROCSHMEM_SIGNAL_ADD
    assert isinstance(rocshmem4py.rocshmem_query_thread(), int)
    for name in ("SymmetricBuffer", "rocshmem_create_buffer", "rocshmem_get_peer_buffer", "init_with_torch",
                 "init_with_mpi", "finalize_with_torch", "finalize_with_mpi", "rocshmem_int_atomic_fetch_add",
                 "rocshmem_uint64_atomic_or", "rocshmem_putmem_signal_on_stream", "TeamConfig"):
        assert name in rocshmem4py.__all__, name


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bfloat16, torch.uint8])
def test_interop_put_get(job, dtype):
    me, n, seed = job
    nxt, prev = (me + 1) % n, (me - 1) % n
    for shape in ((1,), (64,), (33, 17)):
        src = rshmem_torch.create_tensor(shape, dtype)
        dst = rshmem_torch.create_tensor(shape, dtype)
        assert getattr(dst, "__symm_tensor__", False) and dst.shape == torch.Size(shape) and dst.dtype == dtype
        src.copy_(data(seed, me, f"put{shape}", shape, dtype))
        dst.fill_(0)
        rshmem_torch.barrier_all()
        rshmem_torch.put(dst, src, nxt)
        rshmem_torch.barrier_all()
        sync()
        assert torch.equal(dst, data(seed, prev, f"put{shape}", shape, dtype))
        back = rshmem_torch.create_tensor(shape, dtype)
        rshmem_torch.get(back, dst, nxt)  # what this PE put there
        sync()
        assert torch.equal(back, src)
        rshmem_torch.barrier_all()
        for t in (back, dst, src):
            rshmem_torch.free_tensor(t)


def test_raw_putmem_getmem(job):
    me, n, seed = job
    nxt, prev = (me + 1) % n, (me - 1) % n
    dst = rshmem_torch.create_tensor((1000,), torch.float64)
    src = data(seed, me, "raw", (1000,), torch.float64)
    rocshmem4py.rocshmem_barrier_all()
    rocshmem4py.rocshmem_putmem(dst.data_ptr(), src.data_ptr(), src.nbytes, nxt)
    rocshmem4py.rocshmem_barrier_all()
    assert torch.equal(dst, data(seed, prev, "raw", (1000,), torch.float64))
    out = torch.zeros(1000, dtype=torch.float64, device=DEV)
    rocshmem4py.rocshmem_getmem_nbi(out.data_ptr(), dst.data_ptr(), out.nbytes, nxt)
    rocshmem4py.rocshmem_quiet()
    assert torch.equal(out, src)
    rocshmem4py.rocshmem_barrier_all()
    part = data(seed, me, "nbi", (10,), torch.float64)
    rocshmem4py.rocshmem_putmem_nbi(dst.data_ptr() + 80, part.data_ptr(), part.nbytes, nxt)
    rocshmem4py.rocshmem_fence()
    rocshmem4py.rocshmem_quiet()
    rocshmem4py.rocshmem_sync_all()
    rocshmem4py.rocshmem_barrier_all()
    assert torch.equal(dst[10:20], data(seed, prev, "nbi", (10,), torch.float64))
    rocshmem4py.rocshmem_getmem(out.data_ptr(), dst.data_ptr(), 8, me)
    assert out[0] == dst[0]
    with pytest.raises(RuntimeError, match=f"invalid PE {n}"):
        rocshmem4py.rocshmem_putmem(dst.data_ptr(), src.data_ptr(), 8, n)
    rocshmem4py.rocshmem_barrier_all()
    rshmem_torch.free_tensor(dst)


def test_collectives_world_and_team(job):
    me, n, seed = job
    world = rocshmem4py.ROCSHMEM_TEAM_WORLD
    src = rshmem_torch.create_tensor((n, 5), torch.int32)
    dst = rshmem_torch.create_tensor((n, 5), torch.int32)
    src.copy_(data(seed, me, "a2a", (n, 5), torch.int32))
    rshmem_torch.alltoall(world, dst, src)
    sync()
    want = torch.stack([data(seed, j, "a2a", (n, 5), torch.int32)[me] for j in range(n)])
    assert torch.equal(dst, want)
    for root in range(n):
        src.copy_(data(seed, me, f"bcast{root}", (n, 5), torch.int32))
        rshmem_torch.broadcast(world, dst, src, root)
        sync()
        assert torch.equal(dst, data(seed, root, f"bcast{root}", (n, 5), torch.int32))
    # A team of the even PEs.
    status, evens = rocshmem4py.rocshmem_team_split_strided(world, 0, 2, (n + 1) // 2)
    assert status == rocshmem4py.ROCSHMEM_SUCCESS
    if me % 2:
        assert evens == rocshmem4py.ROCSHMEM_TEAM_INVALID
    else:
        k = rocshmem4py.rocshmem_team_n_pes(evens)
        assert k == (n + 1) // 2 and rocshmem4py.rocshmem_team_my_pe(evens) == me // 2
        assert rocshmem4py.rocshmem_team_translate_pe(evens, k - 1, world) == 2 * (k - 1)
        assert rocshmem4py.rocshmem_team_translate_pe(world, me, evens) == me // 2
        tsrc, tdst = src.view(-1)[:k * 3], dst.view(-1)[:k * 3]
        tsrc.copy_(data(seed, me, "team", (k * 3,), torch.float32).to(torch.int32))
        rshmem_torch.alltoall(evens, tdst, tsrc)
        sync()
        want = torch.cat([data(seed, 2 * j, "team", (k * 3,), torch.float32).to(torch.int32)[3 * (me // 2):
                                                                                            3 * (me // 2) + 3]
                          for j in range(k)])
        assert torch.equal(tdst, want)
        rocshmem4py.rocshmem_barrier(evens)
        rocshmem4py.rocshmem_team_sync(evens)
        rocshmem4py.rocshmem_team_destroy(evens)
    rocshmem4py.rocshmem_team_destroy(rocshmem4py.ROCSHMEM_TEAM_WORLD)  # a no-op, as upstream
    rocshmem4py.rocshmem_barrier_all()
    rshmem_torch.free_tensor(dst)
    rshmem_torch.free_tensor(src)


def test_host_atomics(job):
    me, n, seed = job
    counters = rshmem_torch.create_tensor((4,), torch.int64)
    words = rshmem_torch.create_tensor((4,), torch.int32)
    rocshmem4py.rocshmem_barrier_all()
    c = counters.data_ptr()
    old = rocshmem4py.rocshmem_long_atomic_fetch_add(c, me + 1, 0)
    rocshmem4py.rocshmem_long_atomic_add(c + 8, 2, 0)
    rocshmem4py.rocshmem_longlong_atomic_inc(c + 16, 0)
    rocshmem4py.rocshmem_int_atomic_inc(words.data_ptr(), 0)
    rocshmem4py.rocshmem_barrier_all()
    total = rocshmem4py.rocshmem_long_atomic_fetch(c, 0)
    assert total == n * (n + 1) // 2 and 0 <= old <= total - (me + 1)
    assert rocshmem4py.rocshmem_long_atomic_fetch(c + 8, 0) == 2 * n
    assert rocshmem4py.rocshmem_long_atomic_fetch(c + 16, 0) == n
    assert rocshmem4py.rocshmem_int_atomic_fetch(words.data_ptr(), 0) == n
    rocshmem4py.rocshmem_barrier_all()
    nxt, prev = (me + 1) % n, (me - 1) % n
    u = rshmem_torch.create_tensor((2,), torch.int64)  # uint64 words (torch has no uint64 arithmetic)
    v = int(data(seed, me, "amo", (1,), torch.int64)[0]) & ((1 << 40) - 1)
    p = u.data_ptr()
    rocshmem4py.rocshmem_uint64_atomic_set(p, v, nxt)
    assert rocshmem4py.rocshmem_uint64_atomic_swap(p, 7, nxt) == v
    assert rocshmem4py.rocshmem_uint64_atomic_compare_swap(p, 8, 9, nxt) == 7, "no swap: cond differs"
    assert rocshmem4py.rocshmem_uint64_atomic_compare_swap(p, 7, v, nxt) == 7
    rocshmem4py.rocshmem_uint64_atomic_set(p + 8, 0b1100, nxt)
    assert rocshmem4py.rocshmem_uint64_atomic_fetch_or(p + 8, 0b0011, nxt) == 0b1100
    assert rocshmem4py.rocshmem_uint64_atomic_fetch_and(p + 8, 0b0110, nxt) == 0b1111
    rocshmem4py.rocshmem_uint64_atomic_xor(p + 8, 0b0101, nxt)
    assert rocshmem4py.rocshmem_size_atomic_fetch(p + 8, nxt) == 0b0011
    f = rshmem_torch.create_tensor((2,), torch.float64)
    rocshmem4py.rocshmem_double_atomic_set(f.data_ptr(), 1.5 + me, nxt)
    assert rocshmem4py.rocshmem_double_atomic_swap(f.data_ptr(), 0.25, nxt) == 1.5 + me
    rocshmem4py.rocshmem_barrier_all()
    assert int(u[0]) == int(data(seed, prev, "amo", (1,), torch.int64)[0]) & ((1 << 40) - 1)
    assert int(u[1]) == 0b0011 and float(f[0]) == 0.25
    rocshmem4py.rocshmem_barrier_all()
    for t in (f, u, words, counters):
        rshmem_torch.free_tensor(t)


def test_buffers_peer_views_and_heap_bases(job):
    me, n, seed = job
    nxt, prev = (me + 1) % n, (me - 1) % n
    buf = rocshmem4py.rocshmem_create_buffer(256)
    assert isinstance(buf, rocshmem4py.SymmetricBuffer) and buf.nbytes == 256 and int(buf) == buf.ptr
    msg = data(seed, me, "buf", (32,), torch.float64)
    rocshmem4py.rocshmem_barrier_all()
    buf.put(msg.data_ptr(), msg.nbytes, nxt)  # into nxt's buffer
    rocshmem4py.rocshmem_barrier_all()
    mine = torch.zeros(32, dtype=torch.float64, device=DEV)
    rocshmem4py.rocshmem_getmem(mine.data_ptr(), buf.ptr, 256, me)
    assert torch.equal(mine, data(seed, prev, "buf", (32,), torch.float64))
    # Direct loads from and stores into a peer's memory (host platform: every heap is mapped).
    peer = rocshmem4py.rocshmem_get_peer_buffer(buf, nxt)
    assert peer.ptr == buf.get_remote_ptr(nxt) != 0 and not peer.own_data
    assert rocshmem4py.rocshmem_get_peer_buffer(buf, me) is buf
    t = rshmem_torch.create_tensor((n, 8), torch.int64)
    peer_t = rshmem_torch.get_peer_tensor(t, nxt)
    rocshmem4py.rocshmem_barrier_all()
    peer_t[me].copy_(data(seed, me, "direct", (8,), torch.int64))  # a store into nxt's t
    sync()
    rocshmem4py.rocshmem_barrier_all()
    assert torch.equal(t[prev], data(seed, prev, "direct", (8,), torch.int64))
    bases = rshmem_torch.get_heap_bases(t)
    assert bases.dtype == torch.int64 and bases.shape == (n,)
    assert int(bases[me]) == t.data_ptr()
    assert bases.tolist() == rocshmem4py.rocshmem_get_heap_bases(t.data_ptr()) \
        == rocshmem4py.rocshmem_get_peer_ptr_table(t.data_ptr())
    assert [rocshmem4py.rocshmem_ptr(t.data_ptr(), pe) for pe in range(n)] == bases.tolist()
    rocshmem4py.rocshmem_barrier_all()
    rshmem_torch.free_tensor(t)
    buf.free()
    buf.free()  # a second free does nothing
    assert "freed" in repr(buf)
    raw = rocshmem4py.rocshmem_malloc(64)
    assert raw != 0
    rocshmem4py.rocshmem_free(raw)
    with pytest.raises(ValueError, match="not backed by rocSHMEM"):
        rshmem_torch.free_tensor(torch.zeros(3))
    for p, want_align in ((rocshmem4py.rocshmem_calloc(4, 8), 8), (rocshmem4py.rocshmem_align(256, 64), 256)):
        assert p != 0 and p % want_align == 0
        rocshmem4py.rocshmem_free(p)
    rocshmem4py.rocshmem_reset_stats()
    rocshmem4py.rocshmem_dump_stats()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="upstream's streams are GPU streams")
def test_stream_forms(job):
    me, n, seed = job
    nxt, prev = (me + 1) % n, (me - 1) % n
    s = torch.cuda.current_stream().cuda_stream
    dst = rshmem_torch.create_tensor((4096,), torch.uint8)
    sig = rshmem_torch.create_tensor((1,), torch.int64)
    src = data(seed, me, "stream", (4096,), torch.uint8)
    rocshmem4py.rocshmem_barrier_all_on_stream(s)
    rocshmem4py.rocshmem_putmem_signal_on_stream(dst.data_ptr(), src.data_ptr(), 4096, sig.data_ptr(), 5,
                                                 rocshmem4py.ROCSHMEM_SIGNAL_SET, nxt, s)
    rocshmem4py.rocshmem_signal_wait_until_on_stream(sig.data_ptr(), rocshmem4py.ROCSHMEM_CMP_EQ, 5, s)
    torch.cuda.synchronize()
    assert torch.equal(dst, data(seed, prev, "stream", (4096,), torch.uint8))
    out = torch.zeros(4096, dtype=torch.uint8, device="cuda")
    rocshmem4py.rocshmem_getmem_on_stream(out.data_ptr(), dst.data_ptr(), 4096, nxt, s)
    # Every PE's get of nxt's dst is done before nxt overwrites its dst below (a race without it:
    # the first GPU run read nxt's own data about half the time).
    rocshmem4py.rocshmem_barrier_all_on_stream(s)
    rocshmem4py.rocshmem_putmem_on_stream(dst.data_ptr(), src.data_ptr(), 4096, me, s)
    rocshmem4py.rocshmem_sync_all_on_stream(s)
    rocshmem4py.rocshmem_team_sync_on_stream(rocshmem4py.ROCSHMEM_TEAM_WORLD, s)
    rocshmem4py.rocshmem_barrier_on_stream(rocshmem4py.ROCSHMEM_TEAM_WORLD, s)
    torch.cuda.synchronize()
    assert torch.equal(out, src) and torch.equal(dst, src)
    a = rshmem_torch.create_tensor((n * 16,), torch.uint8)
    b = rshmem_torch.create_tensor((n * 16,), torch.uint8)
    a.copy_(data(seed, me, "a2a_s", (n * 16,), torch.uint8))
    # A collective's source is symmetric (upstream's API: the members read the root's source):
    # the broadcast's comes from the heap, not the plain tensor `src`.
    bsrc = rshmem_torch.create_tensor((4096,), torch.uint8)
    bsrc.copy_(src)
    rocshmem4py.rocshmem_alltoallmem_on_stream(rocshmem4py.ROCSHMEM_TEAM_WORLD, b.data_ptr(), a.data_ptr(), 16, s)
    rocshmem4py.rocshmem_broadcastmem_on_stream(rocshmem4py.ROCSHMEM_TEAM_WORLD, dst.data_ptr(), bsrc.data_ptr(), 4096,
                                                n - 1, s)
    torch.cuda.synchronize()
    assert torch.equal(b, torch.cat([data(seed, j, "a2a_s", (n * 16,), torch.uint8)[16 * me:16 * me + 16]
                                     for j in range(n)]))
    assert torch.equal(dst, data(seed, n - 1, "stream", (4096,), torch.uint8))
    rocshmem4py.rocshmem_barrier_all()
    for t in (bsrc, b, a, sig, dst):
        rshmem_torch.free_tensor(t)


def test_leaked_team_is_drained_by_finalize(job):
    """A split the program never destroys: finalize_with_torch / finalize_with_mpi destroy it
    (collectively) before rocshmem_finalize; the session's finalize checks that."""
    me, n, _ = job
    status, team = rocshmem4py.rocshmem_team_split_strided(rocshmem4py.ROCSHMEM_TEAM_WORLD, 0, 1, n)
    assert status == 0 and rocshmem4py.rocshmem_team_n_pes(team) == n
