"""rocshmem.ops (torch.library custom ops with fake kernels) under torch.compile(fullgraph=True):
no graph break, and the compiled function gives what eager gives, on fresh random data checked
against every PE's inputs (CPU tensors on the host platform; run under rocshmem-run -n 2 with
conftest.py's init). Backends: aot_eager (dynamo + AOTAutograd functionalization: where graph
breaks and op registration show) and inductor (the default backend; set
ROCSHMEM_TEST_INDUCTOR=0 to skip its C++ compile)."""

import os
import random
import zlib

import numpy as np
import pytest
import torch

import rocshmem
import rocshmem.ops as ops

DEV = "cuda" if os.environ.get("ROCSHMEM_PYTEST_CUDA") == "1" else "cpu"
BACKENDS = ["aot_eager"] + ([] if os.environ.get("ROCSHMEM_TEST_INDUCTOR") == "0" else ["inductor"])


@pytest.fixture(scope="module")
def job():
    me, n = rocshmem.my_pe(), rocshmem.n_pes()
    seed = torch.tensor([random.SystemRandom().getrandbits(62) if me == 0 else 0], dtype=torch.int64, device=DEV)
    seed = int(ops.broadcast(seed, 0)[0])
    return me, n, seed


def inputs(seed, pe, salt, n, k=6):
    g = torch.Generator().manual_seed((seed + 7919 * pe + zlib.crc32(repr(salt).encode())) % (1 << 62))
    return torch.randint(-1000, 1000, (n, k), generator=g, dtype=torch.int64).to(DEV)


def make_step(me, n):
    nxt = (me + 1) % n

    def step(x, sym, got, sig, count):
        y = x * 2 + 1
        ops.put(sym, y, nxt)                    # my y into nxt's sym
        ops.barrier_all()
        ops.get(got, sym, nxt)                  # nxt's sym: what I put there
        ops.put_signal(sym, y + 1, sig, 1, nxt, "add")
        ops.signal_wait_until(sig, "ge", count)  # prev's put_signal has landed
        here = ops.load(sym)                    # prev's y + 1, in my sym (ordered after the wait)
        ops.quiet()
        ops.fence()
        ops.sync_all()
        s = ops.all_reduce(x, "sum")
        m = ops.all_reduce(x, "max")
        b = ops.broadcast(x, n - 1)
        a = ops.all_to_all(x)
        g = ops.all_gather(x[me])
        r = ops.reduce_scatter(x, "sum")
        ops.barrier_all()
        return y, got + 0, here, s, m, b, a, g, r

    return step


def expected(seed, me, n, salt):
    xs = [inputs(seed, pe, salt, n) for pe in range(n)]
    prev = (me - 1) % n
    total = sum(xs)
    return [xs[me] * 2 + 1, xs[me] * 2 + 1, xs[prev] * 2 + 2, total, torch.stack(xs).max(0).values, xs[n - 1],
            torch.stack([xs[j][me] for j in range(n)]), torch.stack([xs[pe][pe] for pe in range(n)]), total[me]]


@pytest.mark.parametrize("backend", BACKENDS)
def test_compiled_equals_eager(job, backend):
    me, n, seed = job
    sym = rocshmem.tensor((n, 6), torch.int64)
    sig = rocshmem.tensor(1, torch.int64)
    step = make_step(me, n)
    count = 0
    results = {}
    for mode in ("eager", "compiled"):
        salt = (backend, mode)
        x = inputs(seed, me, salt, n)
        got = torch.zeros_like(x)
        count += 1
        f = step if mode == "eager" else torch.compile(step, fullgraph=True, backend=backend)
        out = f(x, sym, got, sig, count)
        want = expected(seed, me, n, salt)
        for i, (o, w) in enumerate(zip(out, want)):
            assert torch.equal(o.cpu(), w.cpu()), f"{mode} ({backend}), output {i}:\n{o}\nwant\n{w}"
        results[mode] = out
    # Again, compiled, on new data: the graph is reused, every op runs again.
    count += 1
    salt = (backend, "again")
    x = inputs(seed, me, salt, n)
    out = f(x, sym, torch.zeros_like(x), sig, count)
    for o, w in zip(out, expected(seed, me, n, salt)):
        assert torch.equal(o.cpu(), w.cpu())
    rocshmem.barrier_all()
    rocshmem.free(sig)
    rocshmem.free(sym)


def test_no_graph_breaks(job):
    me, n, seed = job
    sym = rocshmem.tensor((n, 6), torch.int64)
    sig = rocshmem.tensor(1, torch.int64)
    x = inputs(seed, me, "explain", n)
    import torch._dynamo as dynamo

    dynamo.reset()
    report = dynamo.explain(make_step(me, n))(x, sym, torch.zeros_like(x), sig, 1)
    assert report.graph_break_count == 0 and report.graph_count == 1, report
    names = {str(node.target) for g in report.graphs for node in g.graph.nodes if node.op == "call_function"}
    for op in ("put", "get", "load", "put_signal", "signal_wait_until", "barrier_all", "all_reduce", "all_gather",
               "reduce_scatter", "all_to_all", "broadcast"):
        assert f"rocshmem.{op}.default" in names, (op, sorted(names))
    rocshmem.barrier_all()
    rocshmem.free(sig)
    rocshmem.free(sym)


def test_fake_kernels_give_shapes(job):
    me, n, _ = job
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        x = torch.empty(n, 3, 5, dtype=torch.float32)
        assert ops.all_reduce(x).shape == (n, 3, 5)
        assert ops.all_gather(x).shape == (n, n, 3, 5)
        assert ops.reduce_scatter(x).shape == (3, 5)
        assert ops.all_to_all(x).shape == (n, 3, 5)
        assert ops.broadcast(x, 0).dtype == torch.float32
    assert set(ops.OPS) >= {"put", "get", "all_reduce"}
    np.testing.assert_equal(sorted(ops.__all__)[:1], ["OPS"])
