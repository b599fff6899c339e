"""rocSHMEM device functions for Triton kernels (NVIDIA and AMD GPUs).

    import rocshmem, rocshmem.triton as rt
    import triton, triton.language as tl

    @rt.jit                                   # triton.jit + the rocSHMEM bitcode at every launch
    def ring(dst, src, sig, nbytes, nxt):
        rt.barrier_all_wg()
        rt.putmem_signal_wg(dst, src, nbytes, sig, 1, rt.SIGNAL_SET, nxt)
        rt.uint64_wait_until(sig, rt.CMP_EQ, 1)

    rocshmem.init_from_torch()
    ring[(1,)](dst, src, sig, n, nxt)          # no options needed

What this module does for you:
- finds the device bitcode for the GPU's arch, ``librocshmem_device_sm_XX.bc`` (NVIDIA) or
  ``librocshmem_device_gfxNNN.bc`` (AMD), bundled in the package, next to ``ROCSHMEM_LIBRARY``
  when that is set, in ``ROCSHMEM_LIB_DIR`` or ``$ROCM_PATH/lib``, or ``ROCSHMEM_BITCODE``, and gives it to
  Triton as an extern library (``@rt.jit`` kernels get it at every launch; plain
  ``@triton.jit`` kernels take ``**rt.options()`` at launch);
- registers, at import, a Triton kernel-load hook that calls ``rocshmem_hipmodule_init`` on
  every module (a ``CUmodule``, or the ``hipModule_t`` on AMD) holding rocSHMEM's device
  globals, right after Triton loads it and before its
  first launch, on the stream Triton launches on (so also inside ``torch.cuda.graph`` capture,
  provided the kernel was launched once before the capture, as any Triton kernel must be);
  modules loaded before a re-init are initialised again by ``rocshmem.init``.

Rules (docs/pytorch-triton.md says why): a Triton program is one CUDA block (one AMD
work-group) and a scalar call
runs on every thread, so data movement and barriers use the work-group (``_wg``) forms;
per-thread reads (my_pe, signal_fetch, wait_until) are fine. Pointers are passed as 64-bit
integers (a Triton pointer is converted here).
"""

from __future__ import annotations

import ctypes
import os
import threading
from typing import Any, Callable, Dict, List, Optional, Tuple

import triton
import triton.language as tl
from triton.language import core
from triton.runtime.jit import JITFunction

from . import _core, _table
from ._lib import call, error, fn, package_lib_dir

SIGNAL_SET = _table.ROCSHMEM_SIGNAL_SET
SIGNAL_ADD = _table.ROCSHMEM_SIGNAL_ADD
CMP_EQ, CMP_NE, CMP_GT = _table.ROCSHMEM_CMP_EQ, _table.ROCSHMEM_CMP_NE, _table.ROCSHMEM_CMP_GT
CMP_GE, CMP_LT, CMP_LE = _table.ROCSHMEM_CMP_GE, _table.ROCSHMEM_CMP_LT, _table.ROCSHMEM_CMP_LE

LIB_NAME = "librocshmem_device"
"""The key of the bitcode in Triton's ``extern_libs`` option (NVIDIA)."""
LIB_NAME_AMD = "rocshmem"
"""The key on AMD: Triton's AMD backend links an extern library only when an unresolved function
of the kernel has the key in its name (as ``ocml`` in ``__ocml_*``), so it must be a part of
every entry point's name."""

# ---------------------------------------------------------------------------------------------
# Device functions. Argument types are the C ones: pointers and size_t as int64, uint64_t as
# uint64, int as int32; a void function is declared as returning an int32 nobody reads (LLVM
# rewrites both shapes to the definition's exactly).


def _i64(x: Any, s: Any) -> Any:
    return core.cast(s.to_tensor(x), tl.int64, _semantic=s)


def _u64(x: Any, s: Any) -> Any:
    return core.cast(s.to_tensor(x), tl.uint64, _semantic=s)


def _i32(x: Any, s: Any) -> Any:
    return core.cast(s.to_tensor(x), tl.int32, _semantic=s)


def _call(symbol: str, args: List[Any], types: List[Any], ret: Any, s: Any) -> Any:
    return core.extern_elementwise("", "", args, {tuple(types): (symbol, ret)}, is_pure=False, _semantic=s)


@core.extern
def my_pe(_semantic=None):
    """This PE's number (int32)."""
    return _call("rocshmem_my_pe", [], [], tl.int32, _semantic)


@core.extern
def n_pes(_semantic=None):
    """The number of PEs (int32)."""
    return _call("rocshmem_n_pes", [], [], tl.int32, _semantic)


def _rma_wg(symbol: str, dst: Any, src: Any, nbytes: Any, pe: Any, s: Any) -> None:
    _call(symbol, [_i64(dst, s), _i64(src, s), _i64(nbytes, s), _i32(pe, s)],
          [tl.int64, tl.int64, tl.int64, tl.int32], tl.int32, s)


@core.extern
def putmem_wg(dst, src, nbytes, pe, _semantic=None):
    """Copies nbytes from src to symmetric dst on PE pe (whole block; complete on return)."""
    _rma_wg("rocshmem_putmem_wg", dst, src, nbytes, pe, _semantic)


@core.extern
def getmem_wg(dst, src, nbytes, pe, _semantic=None):
    """Copies nbytes from symmetric src on PE pe to local dst (whole block)."""
    _rma_wg("rocshmem_getmem_wg", dst, src, nbytes, pe, _semantic)


@core.extern
def putmem_nbi_wg(dst, src, nbytes, pe, _semantic=None):
    """Non-blocking putmem_wg: complete after quiet (whole block)."""
    _rma_wg("rocshmem_putmem_nbi_wg", dst, src, nbytes, pe, _semantic)


@core.extern
def putmem_signal_wg(dst, src, nbytes, sig_addr, signal, sig_op, pe, _semantic=None):
    """putmem_wg, then sets (SIGNAL_SET) or adds to (SIGNAL_ADD) the uint64 at symmetric sig_addr
    on PE pe, after the data (whole block)."""
    s = _semantic
    _call("rocshmem_putmem_signal_wg",
          [_i64(dst, s), _i64(src, s), _i64(nbytes, s), _i64(sig_addr, s), _u64(signal, s), _i32(sig_op, s),
           _i32(pe, s)], [tl.int64, tl.int64, tl.int64, tl.int64, tl.uint64, tl.int32, tl.int32], tl.int32, s)


@core.extern
def uint64_wait_until(ivar, cmp, value, _semantic=None):
    """Waits until the local uint64 at ivar compares (CMP_*) true with value (every thread)."""
    s = _semantic
    _call("rocshmem_uint64_wait_until", [_i64(ivar, s), _i32(cmp, s), _u64(value, s)],
          [tl.int64, tl.int32, tl.uint64], tl.int32, s)


@core.extern
def signal_fetch(sig_addr, _semantic=None):
    """The local signal word's value (uint64)."""
    s = _semantic
    return _call("rocshmem_signal_fetch", [_i64(sig_addr, s)], [tl.int64], tl.uint64, s)


@core.extern
def barrier_all_wg(_semantic=None):
    """Completes this PE's puts, then waits for every PE (whole block)."""
    _call("rocshmem_barrier_all_wg", [], [], tl.int32, _semantic)


@core.extern
def sync_all_wg(_semantic=None):
    """Waits for every PE, without completing puts (whole block)."""
    _call("rocshmem_sync_all_wg", [], [], tl.int32, _semantic)


@core.extern
def quiet(_semantic=None):
    """Completes this PE's puts (this thread's view)."""
    _call("rocshmem_quiet", [], [], tl.int32, _semantic)


@core.extern
def fence(_semantic=None):
    """Orders this PE's puts to each PE."""
    _call("rocshmem_fence", [], [], tl.int32, _semantic)


@core.extern
def ptr(dest, pe, _semantic=None):
    """The address of symmetric ``dest`` on PE ``pe`` for direct loads and stores, as a pointer of
    ``dest``'s type (``rocshmem_ptr``), or null where the peer is not reachable that way (IPC
    peers are)."""
    s = _semantic
    addr = _call("rocshmem_ptr", [_i64(dest, s), _i32(pe, s)], [tl.int64, tl.int32], tl.int64, s)
    t = s.to_tensor(dest)
    if t.type.scalar.is_ptr():
        return core.cast(addr, t.type.scalar, _semantic=s)
    return addr


@core.extern
def signal_wait_until(sig_addr, cmp, value, _semantic=None):
    """Waits until the local signal word compares ``cmp`` (CMP_*) true with ``value``; returns its
    value (``rocshmem_signal_wait_until``: a wait on the word, then a fetch)."""
    s = _semantic
    _call("rocshmem_uint64_wait_until", [_i64(sig_addr, s), _i32(cmp, s), _u64(value, s)],
          [tl.int64, tl.int32, tl.uint64], tl.int32, s)
    return _call("rocshmem_signal_fetch", [_i64(sig_addr, s)], [tl.int64], tl.uint64, s)


@core.extern
def signal_set(sig_addr, value, pe, _semantic=None):
    """Atomically sets the signal word ``sig_addr`` on PE ``pe`` to ``value`` (an atomic set of
    the uint64 word, which is what a signal set is)."""
    s = _semantic
    _call("rocshmem_uint64_atomic_set", [_i64(sig_addr, s), _u64(value, s), _i32(pe, s)],
          [tl.int64, tl.uint64, tl.int32], tl.int32, s)


@core.extern
def signal_add(sig_addr, value, pe, _semantic=None):
    """Atomically adds ``value`` to the signal word ``sig_addr`` on PE ``pe``."""
    s = _semantic
    _call("rocshmem_uint64_atomic_add", [_i64(sig_addr, s), _u64(value, s), _i32(pe, s)],
          [tl.int64, tl.uint64, tl.int32], tl.int32, s)


# Scalar put (p) and get (g): C type name -> Triton type.
_SCALAR = {"int": tl.int32, "long": tl.int64, "float": tl.float32, "double": tl.float64}


def _make_p(c: str, ty: Any) -> Any:
    sym = f"rocshmem_{c}_p"

    def p(dest, value, pe, _semantic=None):
        s = _semantic
        _call(sym, [_i64(dest, s), core.cast(s.to_tensor(value), ty, _semantic=s), _i32(pe, s)],
              [tl.int64, ty, tl.int32], tl.int32, s)

    p.__name__ = p.__qualname__ = f"{c}_p"
    p.__doc__ = f"Writes one {ty} ``value`` to symmetric ``dest`` on PE ``pe`` (``{sym}``)."
    return core.extern(p)


def _make_g(c: str, ty: Any) -> Any:
    sym = f"rocshmem_{c}_g"

    def g(source, pe, _semantic=None):
        s = _semantic
        return _call(sym, [_i64(source, s), _i32(pe, s)], [tl.int64, tl.int32], ty, s)

    g.__name__ = g.__qualname__ = f"{c}_g"
    g.__doc__ = f"Reads one {ty} from symmetric ``source`` on PE ``pe`` (``{sym}``)."
    return core.extern(g)


# Atomics on 32- and 64-bit words: type -> Triton type; operation -> (values taken, returns).
_AMO_TYPES = {"int32": tl.int32, "int64": tl.int64, "uint32": tl.uint32, "uint64": tl.uint64}
_AMO_OPS = {"fetch": (0, True), "set": (1, False), "swap": (1, True), "compare_swap": (2, True),
            "fetch_add": (1, True), "add": (1, False), "fetch_inc": (0, True), "inc": (0, False),
            "fetch_and": (1, True), "and": (1, False), "fetch_or": (1, True), "or": (1, False),
            "fetch_xor": (1, True), "xor": (1, False)}


def _make_amo(t: str, op: str) -> Any:
    ty = _AMO_TYPES[t]
    nvals, fetch = _AMO_OPS[op]
    sym = f"rocshmem_{t}_atomic_{op}"

    def emit(dest: Any, vals: List[Any], pe: Any, s: Any) -> Any:
        args = [_i64(dest, s)] + [core.cast(s.to_tensor(v), ty, _semantic=s) for v in vals] + [_i32(pe, s)]
        r = _call(sym, args, [tl.int64] + [ty] * nvals + [tl.int32], ty if fetch else tl.int32, s)
        return r if fetch else None

    f: Callable[..., Any]
    if nvals == 0:
        def f0(dest, pe, _semantic=None):
            return emit(dest, [], pe, _semantic)
        f = f0
    elif nvals == 1:
        def f1(dest, value, pe, _semantic=None):
            return emit(dest, [value], pe, _semantic)
        f = f1
    else:
        def f2(dest, cond, value, pe, _semantic=None):
            return emit(dest, [cond, value], pe, _semantic)
        f = f2
    f.__name__ = f.__qualname__ = f"{t}_atomic_{op}"
    f.__doc__ = f"``{sym}``: the atomic {op.replace('_', ' ')} of a {t} on PE ``pe``" + \
        (" (returns the value before)." if fetch else ".")
    return core.extern(f)


_GENERATED: List[str] = []
for _c, _ty in _SCALAR.items():
    for _f in (_make_p(_c, _ty), _make_g(_c, _ty)):
        globals()[_f.__name__] = _f
        _GENERATED.append(_f.__name__)
for _t in _AMO_TYPES:
    for _op in _AMO_OPS:
        _f = _make_amo(_t, _op)
        globals()[_f.__name__] = _f
        _GENERATED.append(_f.__name__)

# ---------------------------------------------------------------------------------------------
# Work-group collectives on a team, with the C-linkage entry points of the device bitcode that
# PyTorch's rocSHMEM Triton layer calls (issue 36): the team is an int32 handle first, 0 = the
# world team (the only one these entry points take: another team returns ROCSHMEM_ERROR), and
# each returns the C status (int32, 0 = success).
# - the 24 typed reductions rocshmem_<T>_<op>_reduce_wg(int team, T *dest, const T *source,
#   int nreduce): upstream's names;
# - rocshmem_alltoallmem_wg(int team, void *dest, const void *source, size_t nbytes) and
#   rocshmem_broadcastmem_wg(int team, void *dest, const void *source, size_t nbytes,
#   int pe_root), rocshmem_signal_op: this library's, with the same shape (upstream's bitcode
#   has none);
# - the team barrier: upstream's bitcode has no C-linkage barrier taking a team, only
#   rocshmem_barrier_wg() (the world team's barrier), which team_barrier_wg calls for team 0;
# - fcollect: upstream's bitcode has no C-linkage fcollect, so fcollectmem_wg is built here from
#   putmem_nbi_wg and barrier_all_wg, for team 0 (the same algorithm as the device library's).
# A compile-time team other than 0 is refused when the kernel compiles; a bitcode without a
# function (an older one, or upstream's for this library's names) is refused with a message
# saying which name is missing (the functions look into the bitcode they link).

_REDUCE_TYPES = {"short": tl.int16, "int": tl.int32, "long": tl.int64, "longlong": tl.int64, "float": tl.float32,
                 "double": tl.float64}
_REDUCE_OPS = ("sum", "max", "min", "prod")
_ROCSHMEM_ERROR: tl.constexpr = tl.constexpr(_table.ROCSHMEM_ERROR)
_bitcode_names: Dict[str, bytes] = {}


def _require(symbol: str) -> None:
    """Refuses, at compile time, a call the linked bitcode cannot resolve."""
    path = _last_bitcode
    if path is None:
        return  # compiled without options() (extern_libs given by hand): the link decides
    data = _bitcode_names.get(path)
    if data is None:
        with open(path, "rb") as f:
            data = f.read()
        _bitcode_names[path] = data
    if symbol.encode() not in data:
        raise error("rocshmem.triton", f"{symbol} is not in {path}: this bitcode lacks that C-linkage entry point "
                                       "(an older bitcode of this library, or upstream's, which has no alltoallmem_wg, "
                                       "broadcastmem_wg or signal_op); link this library's bitcode")


def _team(team: Any, s: Any) -> Any:
    """The team handle as the int32 the entry points take; a compile-time team other than 0 is
    refused (the C-linkage collectives know only the world team)."""
    v = team.value if isinstance(team, core.constexpr) else team
    if isinstance(v, int) and v != 0:
        raise error("rocshmem.triton", f"team {v}: the Triton team collectives take only the world team (0), as "
                                       "their C-linkage entry points do")
    return _i32(team, s)


@core.extern
def _team_handle(team, _semantic=None):
    """The team handle as an int32 (a compile-time team other than 0 refused)."""
    return _team(team, _semantic)


@core.extern
def _addr(x, _semantic=None):
    """A pointer, an address or a size as an int64."""
    return _i64(x, _semantic)


@core.extern
def _barrier_wg(_semantic=None):
    """``rocshmem_barrier_wg()``: the world team's barrier (upstream's C-linkage name)."""
    _require("rocshmem_barrier_wg")
    _call("rocshmem_barrier_wg", [], [], tl.int32, _semantic)


@triton.jit
def team_barrier_wg(team):
    """Barrier over ``team`` by the whole work-group: completes this PE's puts, then waits for
    every member. Only the world team (0) is a team here: it is ``rocshmem_barrier_wg()``, and
    another team returns ROCSHMEM_ERROR without waiting (as the C-linkage collectives do).
    Returns the status (int32, 0 = success)."""
    t = _team_handle(team)
    status = tl.where(t == 0, 0, _ROCSHMEM_ERROR)
    if status == 0:
        _barrier_wg()
    return status


@triton.jit
def fcollectmem_wg(team, dst, src, nbytes):
    """All-gather over ``team`` (0: the world team, the only one; another returns
    ROCSHMEM_ERROR): member i's ``nbytes`` of ``src`` land at ``dst + i * nbytes`` on every
    member (whole work-group). Each PE puts its block into every peer, starting with the next,
    then ``barrier_all_wg`` (the device library's algorithm): every member's destination must be
    ready before any member calls, as OpenSHMEM requires, and must not overlap the source
    (ROCSHMEM_ERROR, as the device library refuses it). Returns the status (int32, 0 = success)."""
    t = _team_handle(team)
    d = _addr(dst)
    s = _addr(src)
    nb = _addr(nbytes)
    me = my_pe()
    n = n_pes()
    overlap = (nb > 0) & (d < s + nb) & (s < d + nb * n)
    status = tl.where((t != 0) | overlap, _ROCSHMEM_ERROR, 0)
    if status == 0:
        slot = d + me.to(tl.int64) * nb
        for k in range(0, n):
            putmem_nbi_wg(slot, s, nb, (me + k) % n)
        barrier_all_wg()
    return status


@core.extern
def broadcastmem_wg(team, dst, src, nbytes, pe_root, _semantic=None):
    """``nbytes`` of ``src`` of team member ``pe_root`` into ``dst`` of every member (whole
    work-group; ``rocshmem_broadcastmem_wg(int team, void *dest, const void *source,
    size_t nbytes, int pe_root)``); returns the status (int32)."""
    _require("rocshmem_broadcastmem_wg")
    s = _semantic
    return _call("rocshmem_broadcastmem_wg", [_team(team, s), _i64(dst, s), _i64(src, s), _i64(nbytes, s),
                                              _i32(pe_root, s)],
                 [tl.int32, tl.int64, tl.int64, tl.int64, tl.int32], tl.int32, s)


@core.extern
def alltoallmem_wg(team, dst, src, nbytes, _semantic=None):
    """All-to-all over ``team``: ``nbytes`` per member (whole work-group;
    ``rocshmem_alltoallmem_wg(int team, void *dest, const void *source, size_t nbytes)``);
    returns the status (int32)."""
    _require("rocshmem_alltoallmem_wg")
    s = _semantic
    return _call("rocshmem_alltoallmem_wg", [_team(team, s), _i64(dst, s), _i64(src, s), _i64(nbytes, s)],
                 [tl.int32, tl.int64, tl.int64, tl.int64], tl.int32, s)


@core.extern
def signal_op(sig_addr, signal, sig_op, pe, _semantic=None):
    """Sets (SIGNAL_SET) or adds ``signal`` to (SIGNAL_ADD) the signal word ``sig_addr`` on PE
    ``pe`` (``rocshmem_signal_op(uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)``)."""
    _require("rocshmem_signal_op")
    s = _semantic
    _call("rocshmem_signal_op", [_i64(sig_addr, s), _u64(signal, s), _i32(sig_op, s), _i32(pe, s)],
          [tl.int64, tl.uint64, tl.int32, tl.int32], tl.int32, s)


def _make_reduce(c: str, op: str) -> Any:
    sym = f"rocshmem_{c}_{op}_reduce_wg"

    def f(team, dst, src, nreduce, _semantic=None):
        _require(sym)
        s = _semantic
        return _call(sym, [_team(team, s), _i64(dst, s), _i64(src, s), _i32(nreduce, s)],
                     [tl.int32, tl.int64, tl.int64, tl.int32], tl.int32, s)

    f.__name__ = f.__qualname__ = f"{c}_{op}_reduce_wg"
    f.__doc__ = f"``{sym}(int team, dest, source, int nreduce)``: the {op} of ``nreduce`` elements of ``src`` " \
        "over ``team`` (0: the world team, the only one) into ``dst`` on every member (whole work-group; returns " \
        "the status, int32)."
    return core.extern(f)


for _c in _REDUCE_TYPES:
    for _op in _REDUCE_OPS:
        _f = _make_reduce(_c, _op)
        globals()[_f.__name__] = _f
        _GENERATED.append(_f.__name__)

DEVICE_FUNCTIONS = ("my_pe", "n_pes", "putmem_wg", "getmem_wg", "putmem_nbi_wg", "putmem_signal_wg",
                    "uint64_wait_until", "signal_fetch", "barrier_all_wg", "sync_all_wg", "quiet", "fence",
                    "ptr", "signal_wait_until", "signal_set", "signal_add", "signal_op", "team_barrier_wg",
                    "broadcastmem_wg", "alltoallmem_wg", "fcollectmem_wg", *_GENERATED)
TEAM_COLLECTIVES = ("team_barrier_wg", "broadcastmem_wg", "alltoallmem_wg", "fcollectmem_wg",
                    *[f"{c}_{op}_reduce_wg" for c in _REDUCE_TYPES for op in _REDUCE_OPS])
"""The team collectives (team first, 0 = the world team; each returns the int32 status)."""
TEAM_ENTRY_POINTS = {"team_barrier_wg": ("rocshmem_barrier_wg",),
                     "broadcastmem_wg": ("rocshmem_broadcastmem_wg",),
                     "alltoallmem_wg": ("rocshmem_alltoallmem_wg",),
                     "fcollectmem_wg": ("rocshmem_n_pes", "rocshmem_my_pe", "rocshmem_putmem_nbi_wg",
                                        "rocshmem_barrier_all_wg"),
                     **{f"{c}_{op}_reduce_wg": (f"rocshmem_{c}_{op}_reduce_wg",)
                        for c in _REDUCE_TYPES for op in _REDUCE_OPS}}
"""The bitcode's C-linkage entry points each team collective calls."""

# ---------------------------------------------------------------------------------------------
# The bitcode


def current_target() -> Tuple[str, str]:
    """(backend, arch) of Triton's active GPU: ("cuda", "90") or ("hip", "gfx942")."""
    from triton.runtime import driver

    target = driver.active.get_current_target()
    if target.backend not in ("cuda", "hip"):
        raise error("rocshmem.triton", f"Triton's active backend is {target.backend!r}: rocshmem.triton supports "
                                       "NVIDIA (cuda) and AMD (hip) GPUs")
    return target.backend, str(target.arch).split(":")[0]


def bitcode_name(arch: Any) -> str:
    """The bitcode file of an arch: ``librocshmem_device_sm_90.bc`` for compute capability 90
    (or "sm_90"), ``librocshmem_device_gfx942.bc`` for "gfx942" (features such as ":sramecc+"
    dropped)."""
    a = str(arch).split(":")[0]
    if a.startswith("gfx"):
        return f"librocshmem_device_{a}.bc"
    return f"librocshmem_device_sm_{a[3:] if a.startswith('sm_') else int(a)}.bc"


def bitcode_dirs() -> List[str]:
    """Where the bitcode is looked for, in order: next to ``ROCSHMEM_LIBRARY``, the package,
    ``ROCSHMEM_LIB_DIR``, ``$ROCM_PATH/lib`` (default /opt/rocm/lib)."""
    dirs = []
    if os.environ.get("ROCSHMEM_LIBRARY"):
        dirs.append(os.path.dirname(os.path.abspath(os.environ["ROCSHMEM_LIBRARY"])))
    dirs.append(package_lib_dir())
    if os.environ.get("ROCSHMEM_LIB_DIR"):
        dirs.append(os.environ["ROCSHMEM_LIB_DIR"])
    dirs.append(os.path.join(os.environ.get("ROCM_PATH", "/opt/rocm"), "lib"))
    return dirs


def bitcode_path(arch: Any = None) -> str:
    """The device bitcode for ``arch`` (default: the current GPU's; an NVIDIA compute capability
    such as 90, or an AMD arch such as "gfx942"): ``ROCSHMEM_BITCODE`` if set, else
    :func:`bitcode_name` in :func:`bitcode_dirs`."""
    env = os.environ.get("ROCSHMEM_BITCODE")
    if env:
        if not os.path.isfile(env):
            raise error("rocshmem.triton", f"ROCSHMEM_BITCODE={env}: no such file")
        return os.path.abspath(env)
    if arch is None:
        arch = current_target()[1]
    name = bitcode_name(arch)
    dirs = bitcode_dirs()
    for d in dirs:
        p = os.path.join(d, name)
        if os.path.isfile(p):
            return p
    have = sorted({f for d in dirs if os.path.isdir(d) for f in os.listdir(d) if f.startswith("librocshmem_device_")
                   and f.endswith(".bc")})
    how = ("build the package with -C cmake.define.ROCSHMEM_AMD=AUTO (needs ROCm's clang), or set ROCSHMEM_LIB_DIR"
           if name.startswith("librocshmem_device_gfx") else
           "build the package with -C cmake.define.ROCSHMEM_CUDA_ARCHS=<arch> (needs clang/llvm >= 16)")
    raise error("rocshmem.triton", f"no {name} in {' or '.join(dirs)} (found: {have or 'none'}); {how}, or set "
                                   "ROCSHMEM_BITCODE")


_last_bitcode: Optional[str] = None
_options_cache: Dict[Any, Dict[str, Any]] = {}


def options(arch: Any = None, bitcode: Optional[str] = None) -> Dict[str, Any]:
    """The launch options that link rocSHMEM's bitcode into a kernel: pass them to every launch
    of a plain ``@triton.jit`` kernel that calls the functions above (``@rocshmem.triton.jit``
    kernels get them automatically). ``bitcode``: this file instead of :func:`bitcode_path`."""
    global _last_bitcode
    path = os.path.abspath(bitcode) if bitcode else bitcode_path(arch)
    _last_bitcode = path
    opts = _options_cache.get(path)
    if opts is None:
        amd = os.path.basename(path).startswith("librocshmem_device_gfx") or \
            (arch is not None and str(arch).startswith("gfx"))
        opts = {"extern_libs": {LIB_NAME_AMD if amd else LIB_NAME: path}}
        with open(path, "rb") as f:
            # clang's CUDA bitcode fixes the nvvm-reflect-ftz flag, which conflicts with the
            # value Triton sets; without Triton's, libdevice does not flush denormals.
            if b"nvvm-reflect-ftz" in f.read():
                opts["enable_reflect_ftz"] = False
        _options_cache[path] = opts
    return {k: (dict(v) if isinstance(v, dict) else v) for k, v in opts.items()}


class RocshmemJITFunction(JITFunction):
    """A Triton JITFunction whose every launch (and warmup) links rocSHMEM's bitcode."""

    def run(self, *args: Any, grid: Any, warmup: bool, **kwargs: Any) -> Any:
        for k, v in options().items():
            if k == "extern_libs" and kwargs.get(k):
                merged = dict(kwargs[k])
                merged.update(v)
                kwargs[k] = merged
            else:
                kwargs.setdefault(k, v)
        return super().run(*args, grid=grid, warmup=warmup, **kwargs)


def jit(fn: Any = None, **kwargs: Any) -> Any:
    """``triton.jit`` for kernels that call rocSHMEM: the same arguments (``do_not_specialize``,
    ...), and the bitcode linked at every launch."""

    def decorator(f: Any) -> Any:
        return RocshmemJITFunction(f, **kwargs)

    return decorator(fn) if fn is not None else decorator


# ---------------------------------------------------------------------------------------------
# Module init: Triton's kernel-load hook

# CU_STREAM_LEGACY: the legacy default stream, where torch and Triton launch by default on
# NVIDIA (NULL would mean the per-thread default stream to rocshmem_hipmodule_init there). On
# AMD the null stream (0) is HIP's legacy default stream already.
_CU_STREAM_LEGACY = 1
_GLOBALS = (b"ROCSHMEM_CTX_DEFAULT", b"rocshmemi_device_fast")
# The code object Triton loads, by backend: its file in the kernel's metadata group.
_BINARY_SUFFIX = {"cuda": ".cubin", "hip": ".hsaco"}

modules: List[Tuple[str, int]] = []
"""(kernel name, module) of every module initialised, in order (a CUmodule or a hipModule_t)."""
_modules_lock = threading.Lock()


def _default_stream() -> int:
    """The stream Triton launches on; the legacy default stream where that is 0 on NVIDIA."""
    from triton.runtime import driver

    backend = driver.active.get_current_target().backend
    stream = driver.active.get_current_stream(driver.active.get_current_device())
    if not stream and backend == "cuda":
        return _CU_STREAM_LEGACY
    return int(stream or 0)


def module_init(module: int, name: str = "?", stream: Optional[int] = None) -> None:
    """``rocshmem_hipmodule_init`` on a loaded module (a ``CUmodule``, or a ``hipModule_t`` on
    AMD): a stream-ordered copy of the library's device state into the module's globals, without
    synchronisation (fine during graph capture). ``stream``: by default the one Triton launches
    on."""
    if not _core.initialized():
        raise error("rocshmem.triton", f"Triton loaded kernel {name}, which calls rocSHMEM, before rocshmem.init: "
                                       "initialise first, then launch")
    if stream is None:
        stream = _default_stream()
    call("rocshmem_hipmodule_init", ctypes.c_void_p(module), ctypes.c_void_p(stream), fails=bool)
    with _modules_lock:
        if all(m != module for _, m in modules):
            modules.append((name, module))


def holds_rocshmem_globals(image: bytes) -> bool:
    """Whether a code object (cubin or hsaco) holds rocSHMEM's device globals, i.e. calls it."""
    return any(g in image for g in _GLOBALS)


def _on_kernel_load(module: Any, function: Any, name: str, metadata_group: Dict[str, str], hash: str,
                    **kwargs: Any) -> None:
    """Triton's kernel_load_end_hook: right after a module is loaded, on the launching thread."""
    if module is None:
        return
    binary = next((p for f, p in metadata_group.items() if f.endswith(tuple(_BINARY_SUFFIX.values()))), None)
    if binary is None:
        return
    with open(binary, "rb") as f:
        image = f.read()
    if holds_rocshmem_globals(image):
        module_init(int(module), name)


def _reinit_modules() -> None:
    """After a new init: modules loaded earlier hold the previous runtime's values."""
    with _modules_lock:
        known = list(modules)
    if not known:
        return
    stream = _default_stream()
    for name, module in known:
        call("rocshmem_hipmodule_init", ctypes.c_void_p(module), ctypes.c_void_p(stream), fails=bool)


def _install() -> None:
    from triton import knobs

    knobs.runtime.kernel_load_end_hook.add(_on_kernel_load)
    _core._after_init.append(_reinit_modules)


_install()

__all__ = ["CMP_EQ", "CMP_GE", "CMP_GT", "CMP_LE", "CMP_LT", "CMP_NE", "LIB_NAME", "LIB_NAME_AMD", "SIGNAL_ADD",
           "SIGNAL_SET",
           "RocshmemJITFunction", "bitcode_dirs", "bitcode_name", "bitcode_path", "current_target",
           "holds_rocshmem_globals", "jit", "module_init", "modules", "options", "TEAM_COLLECTIVES",
           "TEAM_ENTRY_POINTS",
           *DEVICE_FUNCTIONS]
