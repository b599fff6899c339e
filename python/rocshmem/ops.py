"""rocSHMEM's tensor operations as ``torch.library`` custom ops, for ``torch.compile``.

    import rocshmem, rocshmem.ops            # registers torch.ops.rocshmem.*

    @torch.compile(fullgraph=True)
    def step(x, sym, out):
        rocshmem.ops.put(sym, x * 2, nxt)     # torch.ops.rocshmem.put
        rocshmem.ops.barrier_all()
        got = rocshmem.ops.load(sym)          # what the previous PE put, after the barrier
        return rocshmem.ops.all_reduce(x, "sum") + got

Each op has a fake (meta) kernel, so torch.compile traces through it without a graph break.
How each op's memory effects are described to the compiler:

- ``put``, ``put_signal``, ``signal_wait_until``, ``barrier_all``, ``sync_all``, ``quiet``,
  ``fence``: effectful ops (``EffectType.ORDERED``): never dropped, never reordered among
  themselves, and their tensors are passed as they are (a symmetric destination must reach the
  library at its own address: a copy would not be symmetric).
- ``get``: mutates ``dst`` (local memory; the source is the peer's symmetric array).
- ``load``: a copy of a symmetric tensor, effectful, so ordered after the waits and barriers
  before it: how a compiled function reads what peers wrote.
- the collectives ``all_reduce``, ``broadcast``, ``all_to_all``, ``all_gather``,
  ``reduce_scatter``: functional (any tensors in, a new tensor out, like
  ``torch.distributed._functional_collectives``); the input is staged through a symmetric
  workspace the package keeps per size (allocated collectively on first use, the same call on
  every PE).

The ops run on the current stream on GPUs (torch's current CUDA stream, enqueued) and complete
on return on the host platform. A symmetric destination of ``put``/``put_signal`` and the
source of ``get`` must be tensors from :func:`rocshmem.tensor`. What the compiler cannot see:
writes to a symmetric tensor that peers read after a barrier must be made by ops, or outside
the compiled function (an in-place ``t.copy_`` of a graph input is moved to the end of the
graph by functionalization).
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch

from . import _core, _table

if not hasattr(torch.library, "custom_op") or not hasattr(torch.library, "_register_effectful_op"):
    raise ImportError(f"rocshmem.ops needs torch.library.custom_op and torch.library._register_effectful_op (tested "
                      f"with torch 2.15; this is torch "
                      f"{torch.__version__})")

__all__ = ["put", "get", "load", "put_signal", "signal_wait_until", "barrier_all", "sync_all", "quiet", "fence",
           "all_reduce", "broadcast", "all_to_all", "all_gather", "reduce_scatter", "OPS"]

_lib_ns = "rocshmem"


def _stream_of(*ts: torch.Tensor) -> Any:
    """torch's current stream for GPU tensors; None (complete on return) on the host platform."""
    for t in ts:
        if t.is_cuda:
            return torch.cuda.current_stream(t.device)
    return None


def _effectful(op: Any) -> Any:
    torch.library._register_effectful_op(op._opoverload, torch.library.EffectType.ORDERED)
    return op


def _on_host_stream(f: Callable[[Any], None], *ts: torch.Tensor) -> None:
    """A stream-only C call: on torch's current stream for GPU tensors, else on a temporary
    HostStream that is waited for."""
    s = _stream_of(*ts)
    if s is not None:
        f(s)
        return
    with _core.HostStream() as hs:
        f(hs)
        hs.synchronize()


# ---------------------------------------------------------------------------------------------
# RMA and signals

@torch.library.custom_op("rocshmem::put", mutates_args=())
def put(dst: torch.Tensor, src: torch.Tensor, pe: int) -> None:
    """``src`` (local) into symmetric ``dst`` on PE ``pe``."""
    _core.put(dst, src.contiguous(), pe, stream=_stream_of(dst, src))


@put.register_fake
def _(dst: torch.Tensor, src: torch.Tensor, pe: int) -> None:
    return None


@torch.library.custom_op("rocshmem::get", mutates_args=("dst",))
def get(dst: torch.Tensor, src: torch.Tensor, pe: int) -> None:
    """Symmetric ``src`` of PE ``pe`` into local ``dst``."""
    _core.get(dst, src, pe, stream=_stream_of(dst, src))


@get.register_fake
def _(dst: torch.Tensor, src: torch.Tensor, pe: int) -> None:
    return None


@torch.library.custom_op("rocshmem::put_signal", mutates_args=())
def put_signal(dst: torch.Tensor, src: torch.Tensor, signal: torch.Tensor, value: int, pe: int,
               op: str = "set") -> None:
    """``put`` then set (``op="set"``) or add to (``"add"``) the 64-bit ``signal`` on ``pe``."""
    srcc = src.contiguous()
    _on_host_stream(lambda s: _core.put_signal(dst, srcc, signal, value, pe, op=op, stream=s), dst, src)


@put_signal.register_fake
def _(dst: torch.Tensor, src: torch.Tensor, signal: torch.Tensor, value: int, pe: int, op: str = "set") -> None:
    return None


@torch.library.custom_op("rocshmem::signal_wait_until", mutates_args=())
def signal_wait_until(signal: torch.Tensor, cmp: str, value: int) -> None:
    """Waits until this PE's ``signal`` word compares ``cmp`` ("eq", "ge", ...) to ``value``."""
    _on_host_stream(lambda s: _core.signal_wait_until(signal, cmp, value, stream=s), signal)


@signal_wait_until.register_fake
def _(signal: torch.Tensor, cmp: str, value: int) -> None:
    return None


@torch.library.custom_op("rocshmem::load", mutates_args=())
def load(sym: torch.Tensor) -> torch.Tensor:
    """A copy of this PE's symmetric tensor as it is now: ordered after the rocSHMEM ops before it
    (an effectful op), so what peers wrote before a barrier or a signal is what it reads. Read
    symmetric memory that peers write through this inside a compiled function: a plain
    ``sym.clone()`` depends on nothing the compiler sees, and may be moved before the wait."""
    return sym.clone()


@load.register_fake
def _(sym: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(sym)


def _no_arg_op(name: str, host: Callable[[Any], None], doc: str) -> Any:
    def impl() -> None:
        host(torch.cuda.current_stream() if torch.cuda.is_available() and _core._arrays_on_gpu() else None)

    impl.__name__ = name
    impl.__doc__ = doc
    op = torch.library.custom_op(f"rocshmem::{name}", mutates_args=())(impl)
    op.register_fake(lambda: None)
    return _effectful(op)


barrier_all = _no_arg_op("barrier_all", lambda s: _core.barrier_all(stream=s),
                         "Completes this PE's operations, then waits for every PE.")
sync_all = _no_arg_op("sync_all", lambda s: _core.sync_all(stream=s), "Waits for every PE.")
quiet = _no_arg_op("quiet", lambda s: _core.quiet(stream=s), "Completes this PE's puts and gets.")
fence = _no_arg_op("fence", lambda s: _core.fence(), "Orders this PE's puts to each PE.")
for _op in (put, put_signal, signal_wait_until, load):
    _effectful(_op)

# ---------------------------------------------------------------------------------------------
# Functional collectives over symmetric workspaces

_ws_lock = threading.Lock()
_workspaces: Dict[Tuple[str, int, Any], Tuple[Any, Any]] = {}


def _workspace(kind: str, nbytes: int, device: torch.device) -> Tuple[torch.Tensor, torch.Tensor]:
    """Two symmetric uint8 tensors of nbytes (source and destination), kept per size: made by
    the first call of that size, which every PE makes at the same point (collective)."""
    key = (kind, nbytes, str(device))
    with _ws_lock:
        ws = _workspaces.get(key)
        alloc = _core._arrays.allocation_of(ws[0]) if ws is not None else None
        if ws is None or alloc is None or not alloc.live:
            ws = (_core.tensor(max(nbytes, 1), "uint8"), _core.tensor(max(nbytes, 1), "uint8"))
            _workspaces[key] = ws
    return ws


def _forget_workspaces() -> None:
    with _ws_lock:
        _workspaces.clear()


def _bytes(t: torch.Tensor) -> torch.Tensor:
    return t.contiguous().view(-1).view(torch.uint8)


def _collective(kind: str, x: torch.Tensor, in_mult: int, out_mult: int, run: Callable[[Any, Any], None],
                out_shape: List[int], host: bool = False) -> torch.Tensor:
    n_in = x.numel() * x.element_size() * in_mult
    n_out = x.numel() * x.element_size() * out_mult
    src_ws, dst_ws = _workspace(kind, max(n_in, n_out), x.device)
    src, dst = src_ws[:n_in], dst_ws[:n_out]
    src[: x.numel() * x.element_size()].copy_(_bytes(x))
    if host and x.is_cuda:
        torch.cuda.current_stream(x.device).synchronize()  # a host-side collective reads the staged input
    run(src.view(x.dtype), dst.view(x.dtype))
    return dst.view(x.dtype).clone().view(out_shape)


def _n() -> int:
    return _core.n_pes()


@torch.library.custom_op("rocshmem::all_reduce", mutates_args=())
def all_reduce(x: torch.Tensor, op: str = "sum") -> torch.Tensor:
    """Element-wise ``op`` (sum, min, max, prod, and, or, xor) of ``x`` over every PE."""
    return _collective("reduce", x, 1, 1, lambda s, d: _core.reduce(d, s, op=op, stream=_stream_of(x)),
                       list(x.shape))


@all_reduce.register_fake
def _(x: torch.Tensor, op: str = "sum") -> torch.Tensor:
    return torch.empty_like(x, memory_format=torch.contiguous_format)


@torch.library.custom_op("rocshmem::broadcast", mutates_args=())
def broadcast(x: torch.Tensor, root: int) -> torch.Tensor:
    """PE ``root``'s ``x`` on every PE."""
    return _collective("bcast", x, 1, 1, lambda s, d: _core.broadcast(d, s, root, stream=_stream_of(x)),
                       list(x.shape))


@broadcast.register_fake
def _(x: torch.Tensor, root: int) -> torch.Tensor:
    return torch.empty_like(x, memory_format=torch.contiguous_format)


@torch.library.custom_op("rocshmem::all_to_all", mutates_args=())
def all_to_all(x: torch.Tensor) -> torch.Tensor:
    """``x`` split along dim 0 into n_pes blocks: block ``j`` to PE ``j``; the result holds
    every PE's block for this PE, in PE order."""
    return _collective("a2a", x, 1, 1, lambda s, d: _core.alltoall(d, s, stream=_stream_of(x)), list(x.shape))


@all_to_all.register_fake
def _(x: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(x, memory_format=torch.contiguous_format)


@torch.library.custom_op("rocshmem::all_gather", mutates_args=())
def all_gather(x: torch.Tensor) -> torch.Tensor:
    """Every PE's ``x``, stacked along a new dim 0 in PE order (fcollect)."""
    n = _n()
    return _collective("fcollect", x, 1, n, lambda s, d: _core.fcollect(d, s[: x.numel()]), [n] + list(x.shape),
                       host=True)


@all_gather.register_fake
def _(x: torch.Tensor) -> torch.Tensor:
    n = _core.n_pes() if _core.initialized() else 1
    return x.new_empty([n] + list(x.shape))


@torch.library.custom_op("rocshmem::reduce_scatter", mutates_args=())
def reduce_scatter(x: torch.Tensor, op: str = "sum") -> torch.Tensor:
    """``x`` (dim 0 = n_pes blocks) reduced over every PE; this PE gets block ``my_pe``.

    Done as the stream-ordered reduce of all of ``x`` (what :func:`all_reduce` does), of which
    this PE keeps its block: the C API's reduce-scatter is a host call only, which the NVIDIA
    platform refuses on the symmetric heap (GPU memory there). The same path on every platform
    (on the host platform the reduce is the blocking host call)."""
    n = _n()
    if x.shape[0] != n:
        raise ValueError(f"rocshmem.ops.reduce_scatter: dim 0 of x is {x.shape[0]}, not the number of PEs ({n})")
    blk = x.numel() // n
    me = _core.my_pe()
    full = _collective("rs", x, 1, 1, lambda s, d: _core.reduce(d, s, op=op, stream=_stream_of(x)), [x.numel()])
    return full[me * blk:(me + 1) * blk].view(list(x.shape[1:])).clone()


@reduce_scatter.register_fake
def _(x: torch.Tensor, op: str = "sum") -> torch.Tensor:
    return x.new_empty(list(x.shape[1:]))


OPS = {name: getattr(torch.ops.rocshmem, name) for name in
       ("put", "get", "load", "put_signal", "signal_wait_until", "barrier_all", "sync_all", "quiet", "fence", "all_reduce",
        "broadcast", "all_to_all", "all_gather", "reduce_scatter")}
"""Every op, as torch.ops.rocshmem.<name>."""

_ = _table  # the constants stay reachable for users of this module
_core._after_finalize.append(_forget_workspaces)
