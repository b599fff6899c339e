"""The flat functions of upstream's extension module ``_rocshmem4py``, over this package's
library (ctypes, through :mod:`rocshmem`): the same names, arguments and results. Pointers,
team handles and stream handles are Python ints; team ``0`` is ``ROCSHMEM_TEAM_WORLD`` and
``-1`` ``ROCSHMEM_TEAM_INVALID``, as upstream's binding translates them. A failed call raises
:class:`rocshmem.RocshmemError` with the library's one-line message (upstream raises
``RuntimeError``, of which it is a subclass)."""

from __future__ import annotations

import ctypes
from typing import Any, Callable, Dict, List, Optional, Tuple

from rocshmem import _arrays, _core, _table
from rocshmem._lib import RocshmemError, call, error

_vp = ctypes.c_void_p

ROCSHMEM_SUCCESS = _table.ROCSHMEM_SUCCESS
ROCSHMEM_SIGNAL_SET = _table.ROCSHMEM_SIGNAL_SET
ROCSHMEM_SIGNAL_ADD = _table.ROCSHMEM_SIGNAL_ADD
ROCSHMEM_CMP_EQ, ROCSHMEM_CMP_NE = _table.ROCSHMEM_CMP_EQ, _table.ROCSHMEM_CMP_NE
ROCSHMEM_CMP_GT, ROCSHMEM_CMP_GE = _table.ROCSHMEM_CMP_GT, _table.ROCSHMEM_CMP_GE
ROCSHMEM_CMP_LT, ROCSHMEM_CMP_LE = _table.ROCSHMEM_CMP_LT, _table.ROCSHMEM_CMP_LE


def _team(team: int) -> int:
    """A Python team handle as the library's: 0 -> the world team, -1 -> NULL (invalid)."""
    if isinstance(team, bool) or not isinstance(team, int):
        raise TypeError(f"a team handle is an int (ROCSHMEM_TEAM_WORLD, or from rocshmem_team_split_strided), "
                        f"not {type(team).__name__}")
    if team == 0:
        return _core.TEAM_WORLD.handle
    if team == -1:
        return 0
    return team


def _ptr(p: Any) -> int:
    return int(p)


# -- init --------------------------------------------------------------------------------------

def rocshmem_init() -> None:
    """``rocshmem_init()``: under rocshmem-run, mpirun, or alone (one PE)."""
    _core.init()


def rocshmem_finalize() -> None:
    _core.finalize()


def rocshmem_get_uniqueid() -> bytes:
    """A unique id (bytes) for :func:`rocshmem_init_attr`."""
    return _core.get_uniqueid()


def rocshmem_init_attr(rank: int, nranks: int, uid: bytes) -> None:
    """Unique-id init: ``rocshmem_set_attr_uniqueid_args`` + ``rocshmem_init_attr``."""
    _core.init(uid=bytes(uid), rank=int(rank), nranks=int(nranks))


def rocshmem_hipmodule_init(module: int, stream: int = 0) -> int:
    """``rocshmem_hipmodule_init`` on a loaded GPU module (a ``hipModule_t`` or ``CUmodule``)."""
    return int(call("rocshmem_hipmodule_init", _vp(module), _vp(stream)))


def rocshmem_query_thread() -> int:
    provided = ctypes.c_int(0)
    call("rocshmem_query_thread", ctypes.byref(provided), argtypes=[ctypes.POINTER(ctypes.c_int)])
    return provided.value


def rocshmem_global_exit(status: int) -> None:
    call("rocshmem_global_exit", int(status), argtypes=[ctypes.c_int])


def rocshmem_dump_stats() -> None:
    call("rocshmem_dump_stats")


def rocshmem_reset_stats() -> None:
    call("rocshmem_reset_stats")


def rocshmem_get_device_ctx() -> int:
    return int(call("rocshmem_get_device_ctx", restype=ctypes.c_void_p) or 0)


def hip_device_synchronize() -> None:
    """Waits for the current GPU (``hipDeviceSynchronize``; ``cuCtxSynchronize`` on NVIDIA). On
    the host platform there is no device, and nothing to wait for."""
    if _core._last_on_gpu is False:
        return  # symmetric memory is host memory: the host platform
    hip = _arrays.loaded_hip()
    if hip is not None:
        rc = hip.hipDeviceSynchronize()
        if rc in (100, 101):  # hipErrorNoDevice, hipErrorInvalidDevice: HIP is loaded, but no AMD GPU is in use
            return
        if rc != 0:
            raise error("hip_device_synchronize", f"hipDeviceSynchronize failed (HIP error {rc})")
        return
    cuda = _arrays._loaded("libcuda.so.1")
    if cuda is not None:
        ctx = ctypes.c_void_p(0)
        if cuda.cuCtxGetCurrent(ctypes.byref(ctx)) == 0 and ctx.value:
            rc = cuda.cuCtxSynchronize()
            if rc != 0:
                raise error("hip_device_synchronize", f"cuCtxSynchronize failed (CUDA error {rc})")


# -- PEs and teams -----------------------------------------------------------------------------

def rocshmem_my_pe() -> int:
    return _core.my_pe()


def rocshmem_n_pes() -> int:
    return _core.n_pes()


def rocshmem_team_my_pe(team: int) -> int:
    return int(call("rocshmem_team_my_pe", _vp(_team(team))))


def rocshmem_team_n_pes(team: int) -> int:
    return int(call("rocshmem_team_n_pes", _vp(_team(team))))


def rocshmem_team_world() -> int:
    """The runtime's ``ROCSHMEM_TEAM_WORLD`` handle (application code passes the sentinel 0)."""
    return _core.TEAM_WORLD.handle


class TeamConfig(ctypes.Structure):
    """``rocshmem_team_config_t`` for :func:`rocshmem_team_split_strided` (``num_contexts``)."""

    _fields_ = [("num_contexts", ctypes.c_int)]


def rocshmem_team_split_strided(parent: int, start: int, stride: int, size: int,
                                config: Optional[TeamConfig] = None, mask: int = 0) -> Tuple[int, int]:
    """Splits ``parent``; returns ``(status, new_team)``, ``new_team`` 0 on PEs outside it (the
    raw binding; ``rocshmem4py.rocshmem_team_split_strided`` returns -1 there)."""
    new = ctypes.c_void_p(0)
    cfg = ctypes.byref(config) if config is not None else None
    status = call("rocshmem_team_split_strided", _vp(_team(parent)), int(start), int(stride), int(size), cfg,
                  int(mask), ctypes.byref(new))
    return int(status), int(new.value or 0)


def rocshmem_team_destroy(team: int) -> None:
    """Destroys a team; the sentinels 0 and -1 are ignored, as upstream's binding does."""
    if team in (0, -1):
        return
    call("rocshmem_team_destroy", _vp(team))


def rocshmem_team_translate_pe(src_team: int, src_pe: int, dest_team: int) -> int:
    return int(call("rocshmem_team_translate_pe", _vp(_team(src_team)), int(src_pe), _vp(_team(dest_team))))


# -- memory ------------------------------------------------------------------------------------

def rocshmem_malloc(size: int) -> int:
    """Symmetric memory (collective); raises if the library returns NULL."""
    return int(call("rocshmem_malloc", int(size), fails=lambda p: not p))


def rocshmem_calloc(count: int, size: int) -> int:
    return int(call("rocshmem_calloc", int(count), int(size), restype=ctypes.c_void_p,
                    argtypes=[ctypes.c_size_t, ctypes.c_size_t], fails=lambda p: not p))


def rocshmem_align(alignment: int, size: int) -> int:
    return int(call("rocshmem_align", int(alignment), int(size), fails=lambda p: not p))


def rocshmem_free(ptr: int) -> None:
    call("rocshmem_free", _vp(_ptr(ptr)))
    a = _arrays.live_allocation_containing(_ptr(ptr))
    if a is not None and a.ptr == _ptr(ptr):
        a.kill()


def rocshmem_ptr(dest: int, pe: int) -> int:
    """The address of ``dest`` of PE ``pe`` that this process can load from and store to, 0 if
    there is none."""
    return int(call("rocshmem_ptr", _vp(_ptr(dest)), int(pe)) or 0)


def rocshmem_buffer_register(ptr: int, size: int) -> int:
    return int(call("rocshmem_buffer_register", _vp(_ptr(ptr)), int(size), restype=ctypes.c_int,
                    argtypes=[ctypes.c_void_p, ctypes.c_size_t]))


def rocshmem_buffer_unregister(ptr: int) -> int:
    return int(call("rocshmem_buffer_unregister", _vp(_ptr(ptr)), restype=ctypes.c_int, argtypes=[ctypes.c_void_p]))


def rocshmem_buffer_unregister_all() -> None:
    call("rocshmem_buffer_unregister_all", restype=None, argtypes=[])


# -- RMA ---------------------------------------------------------------------------------------

def rocshmem_putmem(dest: int, source: int, nelems: int, pe: int) -> None:
    call("rocshmem_putmem", _vp(_ptr(dest)), _vp(_ptr(source)), int(nelems), int(pe))


def rocshmem_getmem(dest: int, source: int, nelems: int, pe: int) -> None:
    call("rocshmem_getmem", _vp(_ptr(dest)), _vp(_ptr(source)), int(nelems), int(pe))


def rocshmem_putmem_nbi(dest: int, source: int, nelems: int, pe: int) -> None:
    call("rocshmem_putmem_nbi", _vp(_ptr(dest)), _vp(_ptr(source)), int(nelems), int(pe))


def rocshmem_getmem_nbi(dest: int, source: int, nelems: int, pe: int) -> None:
    call("rocshmem_getmem_nbi", _vp(_ptr(dest)), _vp(_ptr(source)), int(nelems), int(pe))


def rocshmem_putmem_on_stream(dest: int, source: int, nelems: int, pe: int, stream: int) -> None:
    call("rocshmem_putmem_on_stream", _vp(_ptr(dest)), _vp(_ptr(source)), int(nelems), int(pe), _vp(stream))


def rocshmem_getmem_on_stream(dest: int, source: int, nelems: int, pe: int, stream: int) -> None:
    call("rocshmem_getmem_on_stream", _vp(_ptr(dest)), _vp(_ptr(source)), int(nelems), int(pe), _vp(stream))


def rocshmem_putmem_signal_on_stream(dest: int, source: int, nelems: int, sig_addr: int, signal: int, sig_op: int,
                                     pe: int, stream: int) -> None:
    call("rocshmem_putmem_signal_on_stream", _vp(_ptr(dest)), _vp(_ptr(source)), int(nelems), _vp(_ptr(sig_addr)),
         ctypes.c_uint64(signal), int(sig_op), int(pe), _vp(stream))


def rocshmem_signal_wait_until_on_stream(sig_addr: int, cmp: int, cmp_value: int, stream: int) -> None:
    call("rocshmem_signal_wait_until_on_stream", _vp(_ptr(sig_addr)), int(cmp), ctypes.c_uint64(cmp_value),
         _vp(stream))


# -- ordering, barriers, collectives -----------------------------------------------------------

def rocshmem_barrier_all() -> None:
    call("rocshmem_barrier_all")


def rocshmem_barrier(team: int) -> None:
    call("rocshmem_barrier", _vp(_team(team)))


def rocshmem_barrier_all_on_stream(stream: int) -> None:
    call("rocshmem_barrier_all_on_stream", _vp(stream))


def rocshmem_barrier_on_stream(team: int, stream: int) -> None:
    call("rocshmem_barrier_on_stream", _vp(_team(team)), _vp(stream))


def rocshmem_sync_all() -> None:
    call("rocshmem_sync_all")


def rocshmem_team_sync(team: int) -> None:
    call("rocshmem_team_sync", _vp(_team(team)))


def rocshmem_sync_all_on_stream(stream: int) -> None:
    call("rocshmem_sync_all_on_stream", _vp(stream))


def rocshmem_team_sync_on_stream(team: int, stream: int) -> None:
    call("rocshmem_team_sync_on_stream", _vp(_team(team)), _vp(stream))


def rocshmem_fence() -> None:
    call("rocshmem_fence")


def rocshmem_quiet() -> None:
    call("rocshmem_quiet")


def rocshmem_alltoallmem_on_stream(team: int, dest: int, source: int, bytes_per_pe: int, stream: int) -> None:
    call("rocshmem_alltoallmem_on_stream", _vp(_team(team)), _vp(_ptr(dest)), _vp(_ptr(source)), int(bytes_per_pe),
         _vp(stream))


def rocshmem_broadcastmem_on_stream(team: int, dest: int, source: int, nbytes: int, pe_root: int,
                                    stream: int) -> None:
    call("rocshmem_broadcastmem_on_stream", _vp(_team(team)), _vp(_ptr(dest)), _vp(_ptr(source)), int(nbytes),
         int(pe_root), _vp(stream))


# -- the host atomics: upstream's matrix (its binding's choice of types and operations) --------

_C = {"int": ctypes.c_int, "long": ctypes.c_long, "longlong": ctypes.c_longlong, "uint32": ctypes.c_uint32,
      "uint64": ctypes.c_uint64, "size": ctypes.c_size_t, "ptrdiff": ctypes.c_ssize_t, "float": ctypes.c_float,
      "double": ctypes.c_double}
_ALL = ("int", "long", "uint32", "uint64", "size", "ptrdiff")
# operation -> (types, number of value arguments, returns the old value)
AMO_MATRIX: Dict[str, Tuple[Tuple[str, ...], int, bool]] = {
    "fetch": (_ALL + ("float", "double"), 0, True),
    "set": (_ALL + ("longlong", "float", "double"), 1, False),
    "compare_swap": (_ALL, 2, True),
    "swap": (_ALL + ("float", "double"), 1, True),
    "fetch_add": (_ALL, 1, True),
    "add": (_ALL + ("longlong",), 1, False),
    "fetch_inc": (_ALL, 0, True),
    "inc": (_ALL + ("longlong",), 0, False),
    "fetch_and": (("uint32", "uint64"), 1, True),
    "and": (("uint32", "uint64"), 1, False),
    "fetch_or": (("uint32", "uint64"), 1, True),
    "or": (("uint32", "uint64"), 1, False),
    "fetch_xor": (("uint32", "uint64"), 1, True),
    "xor": (("uint32", "uint64"), 1, False),
}


def _amo(t: str, op: str, nvals: int, fetch: bool) -> Callable[..., Any]:
    name = f"rocshmem_{t}_atomic_{op}"
    ct = _C[t]

    def f(dest: int, *args: Any) -> Any:
        if len(args) != nvals + 1:
            raise TypeError(f"{name}() takes dest, {'cond, ' if nvals == 2 else ''}"
                            f"{'value, ' if nvals else ''}pe ({nvals + 2} arguments)")
        vals = [ct(v) for v in args[:nvals]]
        r = call(name, _vp(_ptr(dest)), *vals, int(args[nvals]), restype=ct if fetch else None,
                 argtypes=[ctypes.c_void_p] + [ct] * nvals + [ctypes.c_int])
        return (r.value if hasattr(r, "value") else r) if fetch else None

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"``{name}``({'dest, cond, value, pe' if nvals == 2 else 'dest, value, pe' if nvals else 'dest, pe'})"
    return f


AMO_NAMES: List[str] = []
for _op, (_types, _n, _fetch) in AMO_MATRIX.items():
    for _t in _types:
        _f = _amo(_t, _op, _n, _fetch)
        globals()[_f.__name__] = _f
        AMO_NAMES.append(_f.__name__)
AMO_NAMES.sort()

__all__ = sorted(n for n in globals() if n.startswith(("rocshmem_", "ROCSHMEM_"))) + [
    "TeamConfig", "hip_device_synchronize", "RocshmemError"]
