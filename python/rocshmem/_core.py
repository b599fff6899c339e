"""The host API: init forms, symmetric arrays, RMA, atomics, synchronisation, collectives,
teams and streams. Every function checks what Python can check, then calls the library,
whose own checks (and one-line messages) decide the rest."""

from __future__ import annotations

import ctypes
import itertools
import math
import os
import threading
import weakref
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from . import _arrays, _table
from ._arrays import Buf, DeviceArray, DType, buf_of, check_not_freed, dtype_of
from ._lib import Ctx, InitAttr, RocshmemError, UniqueId, call, error, fn, has, lib

Shape = Union[int, Sequence[int]]
ArrayLike = Any
StreamLike = Any

# Hooks run after every successful init (the Triton module registry re-initialises its modules).
_after_init: List[Callable[[], None]] = []
# Hooks run after finalize (caches of symmetric memory forget it).
_after_finalize: List[Callable[[], None]] = []
# Whether the last symmetric allocation was GPU memory (None: none made yet).
_last_on_gpu: Optional[bool] = None
_torch_inits = itertools.count()

# ---------------------------------------------------------------------------------------------
# Init and finalize


def get_uniqueid() -> bytes:
    """A new unique id (128 bytes) for :func:`init` with ``uid=``: make it on one process, send the
    bytes to every PE over any channel. The process that made it hosts the job's rendezvous
    until every PE has finalised, so it must itself be one of the PEs."""
    uid = UniqueId()
    call("rocshmem_get_uniqueid", ctypes.byref(uid), fails=bool)
    return bytes(uid.internal)


def init(uid: Optional[bytes] = None, rank: Optional[int] = None, nranks: Optional[int] = None) -> None:
    """Initialises rocSHMEM in this process.

    - ``init()``: under ``rocshmem-run -n N`` or an MPI launcher (``mpirun``: MPI_COMM_WORLD);
      started alone, the process is a single PE.
    - ``init(uid=..., rank=r, nranks=n)``: unique-id init from any launcher; ``uid`` is the
      bytes of :func:`get_uniqueid` made on one of the PEs.

    On GPUs the library uses the device current on this thread (make it current first, e.g.
    ``torch.cuda.set_device(i)`` and one CUDA operation). Raises RocshmemError on failure
    (also when already initialised)."""
    if uid is None and rank is None and nranks is None:
        provided = ctypes.c_int(-1)
        call("rocshmem_init_thread", _table.ROCSHMEM_THREAD_MULTIPLE, ctypes.byref(provided), None, fails=bool)
    else:
        if uid is None or rank is None or nranks is None:
            raise error("rocshmem.init", "unique-id init needs all of uid=, rank= and nranks= "
                                         "(or none of them, under rocshmem-run or mpirun)")
        raw = bytes(uid)
        if len(raw) != _table.ROCSHMEM_UNIQUE_ID_BYTES:
            raise error("rocshmem.init", f"uid has {len(raw)} bytes; a unique id from rocshmem.get_uniqueid() "
                                         f"has {_table.ROCSHMEM_UNIQUE_ID_BYTES}")
        if not isinstance(rank, int) or not isinstance(nranks, int):
            raise TypeError("rocshmem.init: rank and nranks must be int")
        u = UniqueId()
        ctypes.memmove(u.internal, raw, len(raw))
        attr = InitAttr()
        call("rocshmem_set_attr_uniqueid_args", rank, nranks, ctypes.byref(u), ctypes.byref(attr), fails=bool)
        call("rocshmem_init_attr", _table.ROCSHMEM_INIT_WITH_UNIQUEID, ctypes.byref(attr), fails=bool)
    for hook in list(_after_init):
        hook()


def init_from_torch(group: Any = None) -> None:
    """Initialises rocSHMEM over a torch.distributed process group (default: the world): rank 0
    of the group makes a unique id and publishes it in torch.distributed's store, every member
    reads it and calls ``init(uid=, rank=, nranks=)`` with its rank in the group. Call it on
    every member of the group, after ``torch.distributed.init_process_group`` (and, on GPUs,
    ``torch.cuda.set_device``)."""
    try:
        import torch
        import torch.distributed as dist
    except ImportError as e:
        raise error("rocshmem.init_from_torch", f"torch is not importable ({e})") from None
    if not dist.is_available() or not dist.is_initialized():
        raise error("rocshmem.init_from_torch",
                    "torch.distributed is not initialised: call torch.distributed.init_process_group first")
    g = group if group is not None else dist.group.WORLD
    rank, nranks = dist.get_rank(g), dist.get_world_size(g)
    if rank < 0:
        raise error("rocshmem.init_from_torch", "this process is not a member of the group")
    store = dist.distributed_c10d._get_default_store()
    ranks = dist.get_process_group_ranks(g)
    # Every member calls this in the same order, so the counter names the same key everywhere.
    key = f"rocshmem/uniqueid/{next(_torch_inits)}/{','.join(map(str, ranks))}"
    if rank == 0:
        store.set(key, get_uniqueid())
    uid = bytes(store.get(key))
    if torch.cuda.is_available():
        # The library takes the device current on this thread: make torch's current device's
        # context exist (torch creates it lazily).
        torch.empty(1, device=f"cuda:{torch.cuda.current_device()}")
    init(uid=uid, rank=rank, nranks=nranks)


def finalize() -> None:
    """Completes outstanding work, synchronises all PEs and releases the symmetric heap: every
    array from :func:`array` is gone (using one afterwards is an error, or a crash for numpy
    element access, as in C). Raises before init."""
    call("rocshmem_finalize")
    _arrays.forget_all()
    for hook in list(_after_finalize):
        hook()


def _arrays_on_gpu() -> bool:
    """Whether symmetric memory is GPU memory here (from the allocations made so far; before
    any, whether torch sees a GPU)."""
    if _last_on_gpu is not None:
        return _last_on_gpu
    try:
        import torch

        return bool(torch.cuda.is_available())
    except ImportError:
        return False


def initialized() -> bool:
    """Whether rocSHMEM is initialised in this process."""
    return bool(fn("rocshmemi_initialized")())


def my_pe() -> int:
    """This PE's number (0 .. n_pes()-1)."""
    return int(call("rocshmem_my_pe"))


def n_pes() -> int:
    """The number of PEs."""
    return int(call("rocshmem_n_pes"))


def info() -> dict:
    """The library's name, version and path (works before init)."""
    name = ctypes.create_string_buffer(_table.ROCSHMEM_MAX_NAME_LEN)
    call("rocshmem_info_get_name", name)
    v = [ctypes.c_int(0) for _ in range(3)]
    call("rocshmem_vendor_get_version_info", *[ctypes.byref(x) for x in v])
    from ._lib import library_path

    return {"name": name.value.decode(), "version": ".".join(str(x.value) for x in v),
            "library": os.path.abspath(library_path())}


# ---------------------------------------------------------------------------------------------
# Symmetric memory


def _shape(shape: Shape) -> Tuple[int, ...]:
    if isinstance(shape, int):
        shape = (shape,)
    out = tuple(int(n) for n in shape)
    if any(n < 0 for n in out):
        raise ValueError(f"shape {out} has a negative dimension")
    return out


_SIZE_MAX = (1 << (8 * ctypes.sizeof(ctypes.c_size_t))) - 1


def _malloc(call_name: str, shape: Tuple[int, ...], dt: DType) -> Tuple[int, Optional[Tuple[int, int]],
                                                                        _arrays.Allocation]:
    nbytes = math.prod(shape) * dt.itemsize
    if nbytes > _SIZE_MAX:
        # ctypes would wrap it in size_t (and the library then see a small or zero size).
        raise OverflowError(f"{call_name}: shape {shape} of {dt.name} is {nbytes} bytes, more than a size_t holds "
                            f"({_SIZE_MAX}): no symmetric heap is that large")
    if nbytes <= 0:
        raise error(call_name, "a symmetric array needs at least one element (rocshmem_malloc(0) returns NULL)")
    ptr = call("rocshmem_calloc", 1, nbytes, restype=ctypes.c_void_p, argtypes=[ctypes.c_size_t, ctypes.c_size_t],
               fails=lambda p: not p)
    device = _arrays.device_of(ptr)
    global _last_on_gpu
    _last_on_gpu = device is not None
    return ptr, device, _arrays.register(ptr, nbytes, device)


def array(shape: Shape, dtype: Any = "float32") -> Any:
    """A symmetric array of zeros (collective: every PE, same shape and dtype).

    Host platform: a numpy array over this PE's part of the symmetric heap. GPUs: a
    :class:`DeviceArray` in GPU memory (DLPack and ``__cuda_array_interface__``). Free it with
    :func:`free` (collective) before :func:`finalize`; after that the package refuses it in
    every call, and numpy refuses writes to it (the array is made read-only)."""
    shp = _shape(shape)
    dt = dtype_of(dtype)
    ptr, device, alloc = _malloc("rocshmem.array", shp, dt)
    if device is not None:
        return DeviceArray(ptr, shp, dt, device, allocation=alloc)
    try:
        import numpy
    except ImportError:
        call("rocshmem_free", ctypes.c_void_p(ptr))
        alloc.kill()
        raise error("rocshmem.array", "numpy is needed for host-platform arrays (pip install numpy), "
                                      "or use rocshmem.tensor with torch") from None
    block = _arrays._HostBlock(ptr, alloc.nbytes, alloc)
    npdt = numpy.dtype(dt.typestr) if dt.kind != "bf" else numpy.dtype("V2")
    a = numpy.asarray(block).view(npdt).reshape(shp)
    alloc.roots.append(weakref.ref(a))
    return a


def tensor(shape: Shape, dtype: Any = "float32") -> Any:
    """A torch tensor over symmetric memory (collective), zeros: on the GPU of this PE on GPU
    platforms, on the CPU on the host platform. The tensor does not own the memory: free it
    with :func:`free` after the last use, before :func:`finalize`; after that the package
    refuses it (and its views) in every call. Keeping a reference past free or finalize is
    safe as long as its elements are not touched (torch cannot be told the memory is gone)."""
    try:
        import torch  # noqa: F401
        from torch.utils.dlpack import from_dlpack
    except ImportError as e:
        raise error("rocshmem.tensor", f"torch is not importable ({e})") from None
    shp = _shape(shape)
    dt = dtype_of(dtype)
    ptr, device, alloc = _malloc("rocshmem.tensor", shp, dt)
    # torch's "cuda" device is the AMD GPU on ROCm builds (DLPack device type kDLROCM there).
    if device is not None and torch.cuda.is_available() and device[1] != torch.cuda.current_device():
        raise error("rocshmem.tensor", f"symmetric memory is on GPU {device[1]} but torch's current device is "
                                       f"cuda:{torch.cuda.current_device()}: make the device current before init")
    t = from_dlpack(_TensorSource(ptr, shp, dt, device or (_arrays.KDL_CPU, 0)))
    if t.data_ptr() != ptr:
        raise error("rocshmem.tensor", f"torch did not map {ptr:#x} in place (got {t.data_ptr():#x})")
    _arrays.tag_torch(t, alloc)
    return t


class _TensorSource:
    """What torch.from_dlpack reads for :func:`tensor` (any device)."""

    def __init__(self, ptr: int, shape: Tuple[int, ...], dt: DType, device: Tuple[int, int]):
        self.ptr, self.shape, self.dt, self.device = ptr, shape, dt, device

    def __dlpack_device__(self) -> Tuple[int, int]:
        return self.device

    def __dlpack__(self, stream: Any = None, **kwargs: Any) -> Any:
        return _arrays.dlpack_capsule(self, self.ptr, self.shape, _arrays._c_strides(self.shape), self.dt,
                                      self.device)


def free(a: ArrayLike) -> None:
    """Frees an array from :func:`array` or :func:`tensor` (collective: every PE frees the same
    array). Give the whole array, as it was returned (or a view of all of it). Afterwards the
    array and its views are refused by every call of the package (even where a new array now
    sits at the same address), and numpy refuses writes to the array :func:`array` returned."""
    b = buf_of(a, "rocshmem.free", "the array")
    own = _arrays.allocation_of(a)
    if own is not None and not own.live:
        raise error("rocshmem.free", _arrays._freed_message("the array", b.ptr, b.nbytes, own))
    check_not_freed("rocshmem.free", "the array", b.ptr, b.nbytes, a)
    alloc = own if own is not None else _arrays.live_allocation_containing(b.ptr)
    if alloc is None:
        raise error("rocshmem.free", f"{b.ptr:#x} is not in an array from rocshmem.array/tensor")
    if b.ptr != alloc.ptr or b.nbytes != alloc.nbytes:
        raise error("rocshmem.free", f"give the whole array ({alloc.nbytes} bytes), not a part of "
                                     f"{b.nbytes} bytes")
    call("rocshmem_free", ctypes.c_void_p(b.ptr))
    alloc.kill()


# ---------------------------------------------------------------------------------------------
# Arguments


def _pe(call_name: str, pe: Any) -> int:
    if isinstance(pe, bool) or not isinstance(pe, int):
        try:
            import numbers

            if isinstance(pe, numbers.Integral):
                return int(pe)
        except ImportError:
            pass
        raise TypeError(f"{call_name}: pe must be an int, not {type(pe).__name__}")
    return pe


def _operand(call_name: str, what: str, obj: Any, writable: bool = False) -> Buf:
    b = buf_of(obj, call_name, what)
    check_not_freed(call_name, what, b.ptr, b.nbytes, obj)
    if not b.contiguous:
        raise ValueError(f"{call_name}: {what} is not contiguous: rocSHMEM moves contiguous memory "
                         "(copy it, or give a contiguous slice)")
    if writable:
        ro = getattr(obj, "flags", None)
        if ro is not None and hasattr(ro, "writeable") and not ro.writeable:
            raise ValueError(f"{call_name}: {what} is read-only")
        if isinstance(obj, (bytes, memoryview)) and memoryview(obj).readonly:
            raise ValueError(f"{call_name}: {what} is read-only")
    return b


def _same(call_name: str, dst: Buf, src: Buf, by_type: bool = True) -> None:
    if dst.nbytes != src.nbytes:
        raise ValueError(f"{call_name}: dst has {dst.nbytes} bytes and src {src.nbytes}: give arrays (or slices) "
                         "of the same size")
    if by_type and dst.dtype is not None and src.dtype is not None and dst.dtype != src.dtype:
        raise ValueError(f"{call_name}: dst is {dst.dtype.name} and src {src.dtype.name}: rocSHMEM copies bytes, "
                         "so view one as the other's type if that is what you mean")


def stream_handle(stream: StreamLike) -> int:
    """The native handle of a stream: a :class:`HostStream`, a torch or CuPy stream, an object
    with ``__cuda_stream__``, or an int handle."""
    if isinstance(stream, HostStream):
        return stream.handle
    if isinstance(stream, int) and not isinstance(stream, bool):
        return stream
    proto = getattr(stream, "__cuda_stream__", None)
    if proto is not None:
        return int(proto()[1])
    for attr in ("cuda_stream", "ptr", "handle"):
        h = getattr(stream, attr, None)
        if isinstance(h, int):
            return h
    raise TypeError(f"stream: {type(stream).__name__} is not a stream (rocshmem.HostStream, torch.cuda.Stream, "
                    "a CuPy stream, an object with __cuda_stream__, or an int handle)")


def _vp(p: int) -> ctypes.c_void_p:
    return ctypes.c_void_p(p)


# ---------------------------------------------------------------------------------------------
# RMA


def _rma(kind: str, dst: ArrayLike, src: ArrayLike, pe: int, stream: StreamLike, nbi: bool) -> None:
    name = f"rocshmem.{kind}{'_nbi' if nbi else ''}"
    pe = _pe(name, pe)
    d = _operand(name, "dst", dst, writable=True)
    s = _operand(name, "src", src)
    _same(name, d, s)
    if stream is not None:
        call(f"rocshmem_{kind}mem_on_stream", _vp(d.ptr), _vp(s.ptr), d.nbytes, pe, _vp(stream_handle(stream)))
        if isinstance(stream, HostStream):
            stream._keep(src, dst)
    else:
        call(f"rocshmem_{kind}mem{'_nbi' if nbi else ''}", _vp(d.ptr), _vp(s.ptr), d.nbytes, pe)


def put(dst: ArrayLike, src: ArrayLike, pe: int, stream: StreamLike = None) -> None:
    """Copies local ``src`` into symmetric ``dst`` on PE ``pe`` (whole arrays or contiguous
    slices of the same size and type). Without ``stream`` it is complete on return (``src`` may
    be reused; ``dst`` on ``pe`` is written when a barrier or quiet says so to others). With
    ``stream=`` it is enqueued (``rocshmem_putmem_on_stream``) and returns at once."""
    _rma("put", dst, src, pe, stream, False)


def get(dst: ArrayLike, src: ArrayLike, pe: int, stream: StreamLike = None) -> None:
    """Copies symmetric ``src`` on PE ``pe`` into local ``dst``; complete on return, or enqueued
    on ``stream``."""
    _rma("get", dst, src, pe, stream, False)


def put_nbi(dst: ArrayLike, src: ArrayLike, pe: int) -> None:
    """Non-blocking :func:`put`: complete after :func:`quiet` (do not change ``src`` before)."""
    _rma("put", dst, src, pe, None, True)


def get_nbi(dst: ArrayLike, src: ArrayLike, pe: int) -> None:
    """Non-blocking :func:`get`: ``dst`` holds the data after :func:`quiet`."""
    _rma("get", dst, src, pe, None, True)


# ---------------------------------------------------------------------------------------------
# Atomics and point-to-point waits

_CTYPES: Dict[str, Any] = {"int8": ctypes.c_int8, "int16": ctypes.c_int16, "int32": ctypes.c_int32, "int64": ctypes.c_int64,
           "uint8": ctypes.c_uint8, "uint16": ctypes.c_uint16, "uint32": ctypes.c_uint32,
           "uint64": ctypes.c_uint64, "float": ctypes.c_float, "double": ctypes.c_double}


def _element(call_name: str, arr: ArrayLike, index: Any) -> Tuple[int, str]:
    """Address and TYPENAME of arr[index] (index: int or tuple, numpy-style, negative allowed)."""
    b = _operand(call_name, "arr", arr)
    if b.dtype is None or b.dtype.typename not in _CTYPES:
        raise TypeError(f"{call_name}: arr has element type {b.dtype.name if b.dtype else '?'}; "
                        "atomics and waits take integer, float32 or float64 arrays")
    shape = getattr(arr, "shape", (b.count,))
    idx = index if isinstance(index, tuple) else (index,)
    if len(idx) != len(shape):
        raise IndexError(f"{call_name}: index {index!r} does not name one element of an array of shape {tuple(shape)}")
    flat = 0
    for i, n in zip(idx, shape):
        i = int(i)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"{call_name}: index {index!r} is out of bounds for shape {tuple(shape)}")
        flat = flat * n + i
    return b.ptr + flat * b.dtype.itemsize, b.dtype.typename


def _scalar(call_name: str, typename: str, value: Any) -> Any:
    ct = _CTYPES[typename]
    if typename in ("float", "double"):
        return ct(float(value))
    v = int(value)
    bits = ctypes.sizeof(ct) * 8
    lo, hi = (0, 2 ** bits - 1) if typename.startswith("u") else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    if not lo <= v <= hi:
        raise OverflowError(f"{call_name}: {value} does not fit in {typename}")
    return ct(v)


def _amo(op: str, arr: ArrayLike, index: Any, pe: int, *values: Any, fetch: bool) -> Any:
    call_name = f"rocshmem.atomic_{op}"
    pe = _pe(call_name, pe)
    addr, t = _element(call_name, arr, index)
    cname = f"rocshmem_{t}_atomic_{op}"
    if not has(cname):
        raise TypeError(f"{call_name}: the library has no {t} form of atomic_{op} ({cname})")
    ct = _CTYPES[t]
    args = [_scalar(call_name, t, v) for v in values]
    r = call(cname, _vp(addr), *args, pe, restype=ct if fetch else None,
             argtypes=[ctypes.c_void_p] + [ct] * len(args) + [ctypes.c_int])
    if fetch:
        return r.value if hasattr(r, "value") else r
    return None


def atomic_fetch_add(arr: ArrayLike, index: Any, value: Any, pe: int) -> Any:
    """Atomically adds ``value`` to ``arr[index]`` on PE ``pe``; returns the value before."""
    return _amo("fetch_add", arr, index, pe, value, fetch=True)


def atomic_add(arr: ArrayLike, index: Any, value: Any, pe: int) -> None:
    """Atomically adds ``value`` to ``arr[index]`` on PE ``pe``."""
    _amo("add", arr, index, pe, value, fetch=False)


def atomic_fetch_inc(arr: ArrayLike, index: Any, pe: int) -> Any:
    """Atomically adds 1 to ``arr[index]`` on PE ``pe``; returns the value before."""
    return _amo("fetch_inc", arr, index, pe, fetch=True)


def atomic_inc(arr: ArrayLike, index: Any, pe: int) -> None:
    """Atomically adds 1 to ``arr[index]`` on PE ``pe``."""
    _amo("inc", arr, index, pe, fetch=False)


def atomic_fetch(arr: ArrayLike, index: Any, pe: int) -> Any:
    """Atomically reads ``arr[index]`` on PE ``pe``."""
    return _amo("fetch", arr, index, pe, fetch=True)


def atomic_set(arr: ArrayLike, index: Any, value: Any, pe: int) -> None:
    """Atomically writes ``value`` to ``arr[index]`` on PE ``pe``."""
    _amo("set", arr, index, pe, value, fetch=False)


def atomic_swap(arr: ArrayLike, index: Any, value: Any, pe: int) -> Any:
    """Atomically writes ``value`` to ``arr[index]`` on PE ``pe``; returns the value before."""
    return _amo("swap", arr, index, pe, value, fetch=True)


def atomic_compare_swap(arr: ArrayLike, index: Any, cond: Any, value: Any, pe: int) -> Any:
    """Writes ``value`` to ``arr[index]`` on PE ``pe`` if it equals ``cond``; returns the value
    before (equal to ``cond`` if the swap happened)."""
    return _amo("compare_swap", arr, index, pe, cond, value, fetch=True)


def atomic_fetch_and(arr: ArrayLike, index: Any, value: Any, pe: int) -> Any:
    """Atomic bitwise AND on PE ``pe``; returns the value before (unsigned and fixed-width types)."""
    return _amo("fetch_and", arr, index, pe, value, fetch=True)


def atomic_fetch_or(arr: ArrayLike, index: Any, value: Any, pe: int) -> Any:
    """Atomic bitwise OR on PE ``pe``; returns the value before."""
    return _amo("fetch_or", arr, index, pe, value, fetch=True)


def atomic_fetch_xor(arr: ArrayLike, index: Any, value: Any, pe: int) -> Any:
    """Atomic bitwise XOR on PE ``pe``; returns the value before."""
    return _amo("fetch_xor", arr, index, pe, value, fetch=True)


_CMPS = {"eq": _table.ROCSHMEM_CMP_EQ, "ne": _table.ROCSHMEM_CMP_NE, "gt": _table.ROCSHMEM_CMP_GT,
         "ge": _table.ROCSHMEM_CMP_GE, "lt": _table.ROCSHMEM_CMP_LT, "le": _table.ROCSHMEM_CMP_LE}


def _cmp(call_name: str, cmp: Any) -> int:
    if isinstance(cmp, str):
        if cmp.lower() not in _CMPS:
            raise ValueError(f"{call_name}: cmp {cmp!r} is not one of {sorted(_CMPS)}")
        return _CMPS[cmp.lower()]
    return int(cmp)  # a CMP_* constant; the library checks it


def wait_until(arr: ArrayLike, index: Any, cmp: Any, value: Any) -> None:
    """Waits until this PE's ``arr[index]`` compares ``cmp`` ("eq", "ne", "gt", "ge", "lt", "le"
    or a CMP_* constant) to ``value`` (written by other PEs' puts or atomics)."""
    addr, t = _element("rocshmem.wait_until", arr, index)
    c = _cmp("rocshmem.wait_until", cmp)
    ct = _CTYPES[t]
    call(f"rocshmem_{t}_wait_until", _vp(addr), c, _scalar("rocshmem.wait_until", t, value),
         argtypes=[ctypes.c_void_p, ctypes.c_int, ct])


def test(arr: ArrayLike, index: Any, cmp: Any, value: Any) -> bool:
    """Whether this PE's ``arr[index]`` compares ``cmp`` to ``value`` now."""
    addr, t = _element("rocshmem.test", arr, index)
    c = _cmp("rocshmem.test", cmp)
    ct = _CTYPES[t]
    return bool(call(f"rocshmem_{t}_test", _vp(addr), c, _scalar("rocshmem.test", t, value),
                     restype=ctypes.c_int, argtypes=[ctypes.c_void_p, ctypes.c_int, ct]))


# ---------------------------------------------------------------------------------------------
# Signals (stream-ordered only, as in the C API)

SIGNAL_SET, SIGNAL_ADD = _table.ROCSHMEM_SIGNAL_SET, _table.ROCSHMEM_SIGNAL_ADD


def _signal(call_name: str, sig: ArrayLike) -> int:
    b = _operand(call_name, "signal", sig)
    if b.nbytes < 8 or (b.dtype is not None and b.dtype.itemsize != 8):
        raise ValueError(f"{call_name}: the signal is a 64-bit word: give a (u)int64 array (its first element)")
    return b.ptr


def put_signal(dst: ArrayLike, src: ArrayLike, signal: ArrayLike, value: int, pe: int, *, op: Any = "set",
               stream: StreamLike) -> None:
    """Enqueues on ``stream`` a put of ``src`` into ``dst`` on PE ``pe``, then sets (``op="set"``)
    or adds to (``"add"``) the 64-bit ``signal`` word on ``pe``, after the data."""
    name = "rocshmem.put_signal"
    pe = _pe(name, pe)
    d, s = _operand(name, "dst", dst, writable=True), _operand(name, "src", src)
    _same(name, d, s)
    sig_op = {"set": SIGNAL_SET, "add": SIGNAL_ADD}.get(op, op) if isinstance(op, str) else int(op)
    if isinstance(sig_op, str):
        raise ValueError(f"{name}: op {op!r} is not 'set' or 'add'")
    call("rocshmem_putmem_signal_on_stream", _vp(d.ptr), _vp(s.ptr), d.nbytes, _vp(_signal(name, signal)),
         ctypes.c_uint64(value), sig_op, pe, _vp(stream_handle(stream)))
    if isinstance(stream, HostStream):
        stream._keep(src, dst, signal)


def signal_wait_until(signal: ArrayLike, cmp: Any, value: int, *, stream: StreamLike) -> None:
    """Enqueues on ``stream`` a wait until this PE's ``signal`` word compares ``cmp`` to ``value``;
    later work on the stream runs after it."""
    name = "rocshmem.signal_wait_until"
    call("rocshmem_signal_wait_until_on_stream", _vp(_signal(name, signal)), _cmp(name, cmp),
         ctypes.c_uint64(value), _vp(stream_handle(stream)))


def signal_set(signal: ArrayLike, value: int, pe: int, *, stream: StreamLike) -> None:
    """Enqueues on ``stream`` an atomic store of ``value`` to ``signal`` on PE ``pe``."""
    call("rocshmem_signal_set_on_stream", _vp(_signal("rocshmem.signal_set", signal)), ctypes.c_uint64(value),
         _pe("rocshmem.signal_set", pe), _vp(stream_handle(stream)))


def signal_add(signal: ArrayLike, value: int, pe: int, *, stream: StreamLike) -> None:
    """Enqueues on ``stream`` an atomic add of ``value`` to ``signal`` on PE ``pe``."""
    call("rocshmem_signal_add_on_stream", _vp(_signal("rocshmem.signal_add", signal)), ctypes.c_uint64(value),
         _pe("rocshmem.signal_add", pe), _vp(stream_handle(stream)))


# ---------------------------------------------------------------------------------------------
# Ordering and barriers


def quiet(stream: StreamLike = None) -> None:
    """Completes every put, get and atomic this PE issued (enqueued on ``stream`` if given)."""
    if stream is None:
        call("rocshmem_quiet")
    else:
        call("rocshmem_quiet_on_stream", _vp(stream_handle(stream)))


def fence() -> None:
    """Orders this PE's puts to each PE (delivered in the order issued)."""
    call("rocshmem_fence")


def barrier_all(stream: StreamLike = None) -> None:
    """Completes this PE's operations, then waits for every PE (enqueued on ``stream`` if given)."""
    if stream is None:
        call("rocshmem_barrier_all")
    else:
        call("rocshmem_barrier_all_on_stream", _vp(stream_handle(stream)))


def sync_all(stream: StreamLike = None) -> None:
    """Waits for every PE, without completing operations (enqueued on ``stream`` if given)."""
    if stream is None:
        call("rocshmem_sync_all")
    else:
        call("rocshmem_sync_all_on_stream", _vp(stream_handle(stream)))


# ---------------------------------------------------------------------------------------------
# Teams


class Team:
    """A team of PEs (``rocshmem_team_t``). ``TEAM_WORLD`` and ``TEAM_SHARED`` always exist;
    :meth:`split_strided` and :meth:`split_2d` make others (collective over the parent)."""

    def __init__(self, handle: int, name: str = "team"):
        self._handle = handle
        self.name = name

    @property
    def handle(self) -> int:
        """The C handle (an address; 0 is ROCSHMEM_TEAM_INVALID)."""
        if not self._handle:
            raise error(f"rocshmem.Team({self.name})", "the team was destroyed")
        return self._handle

    def __repr__(self) -> str:
        return f"rocshmem.Team({self.name})"

    def my_pe(self) -> int:
        """This PE's number in the team."""
        return int(call("rocshmem_team_my_pe", _vp(self.handle)))

    def n_pes(self) -> int:
        """The number of PEs in the team."""
        return int(call("rocshmem_team_n_pes", _vp(self.handle)))

    def translate_pe(self, pe: int, dest: "Team") -> int:
        """PE ``pe`` of this team numbered in team ``dest`` (-1 if it is not a member)."""
        return int(call("rocshmem_team_translate_pe", _vp(self.handle), _pe("Team.translate_pe", pe),
                        _vp(dest.handle)))

    def split_strided(self, start: int, stride: int, size: int) -> Optional["Team"]:
        """The team of this team's PEs ``start + k*stride`` for ``k < size`` (collective over this
        team); None on PEs that are not members."""
        new = ctypes.c_void_p(0)
        call("rocshmem_team_split_strided", _vp(self.handle), int(start), int(stride), int(size), None, 0,
             ctypes.byref(new), fails=bool)
        return Team(new.value, f"{self.name}[{start}::{stride}][:{size}]") if new.value else None

    def split_2d(self, xrange: int) -> Tuple[Optional["Team"], Optional["Team"]]:
        """This team as a grid ``xrange`` wide: (this PE's row, this PE's column) (collective)."""
        x, y = ctypes.c_void_p(0), ctypes.c_void_p(0)
        call("rocshmem_team_split_2d", _vp(self.handle), int(xrange), None, 0, ctypes.byref(x), None, 0,
             ctypes.byref(y), fails=bool)
        return (Team(x.value, f"{self.name}.x") if x.value else None,
                Team(y.value, f"{self.name}.y") if y.value else None)

    def barrier(self, stream: StreamLike = None) -> None:
        """Completes this PE's operations and waits for every member (enqueued on ``stream``)."""
        if stream is None:
            call("rocshmem_barrier", _vp(self.handle))
        else:
            call("rocshmem_barrier_on_stream", _vp(self.handle), _vp(stream_handle(stream)))

    def sync(self, stream: StreamLike = None) -> None:
        """Waits for every member (enqueued on ``stream``)."""
        if stream is None:
            call("rocshmem_team_sync", _vp(self.handle))
        else:
            call("rocshmem_team_sync_on_stream", _vp(self.handle), _vp(stream_handle(stream)))

    def destroy(self) -> None:
        """Destroys the team (collective over its members)."""
        call("rocshmem_team_destroy", _vp(self.handle))
        self._handle = 0


class _PredefinedTeam(Team):
    """TEAM_WORLD / TEAM_SHARED: the handle is read from the library at each use (it exists
    only between init and finalize)."""

    def __init__(self, symbol: str, name: str):
        super().__init__(0, name)
        self._symbol = symbol

    @property
    def handle(self) -> int:
        h = ctypes.c_void_p.in_dll(lib(), self._symbol).value
        if not h:
            raise error(f"rocshmem.{self.name}", "called before rocshmem.init (or after finalize)")
        return h

    def destroy(self) -> None:
        raise error(f"rocshmem.{self.name}.destroy", "the predefined teams cannot be destroyed")


TEAM_WORLD = _PredefinedTeam("ROCSHMEM_HOST_TEAM_WORLD", "TEAM_WORLD")
TEAM_SHARED = _PredefinedTeam("ROCSHMEM_HOST_TEAM_SHARED", "TEAM_SHARED")


def _team(team: Optional[Team]) -> Team:
    if team is None:
        return TEAM_WORLD
    if not isinstance(team, Team):
        raise TypeError(f"team must be a rocshmem.Team, not {type(team).__name__}")
    return team


def _ctx() -> Ctx:
    return Ctx.in_dll(lib(), "ROCSHMEM_HOST_CTX_DEFAULT")


# ---------------------------------------------------------------------------------------------
# Collectives

_OPS = ("sum", "min", "max", "prod", "and", "or", "xor")


def reduce(dst: ArrayLike, src: ArrayLike, op: str = "sum", team: Optional[Team] = None,
           stream: StreamLike = None) -> None:
    """Reduces ``src`` over the team's PEs element by element into ``dst`` on every member
    (collective; symmetric arrays of the same shape and type; ``op``: sum, min, max, prod, and,
    or, xor). Enqueued on ``stream`` if given."""
    name = "rocshmem.reduce"
    if op not in _OPS:
        raise ValueError(f"{name}: op {op!r} is not one of {_OPS}")
    d, s = _operand(name, "dst", dst, writable=True), _operand(name, "src", src)
    _same(name, d, s)
    t = d.dtype.typename if d.dtype else None
    on = "_on_stream" if stream is not None else ""
    cname = f"rocshmem_ctx_{t}_{op}_reduce{on}"
    if t is None or not has(cname):
        raise TypeError(f"{name}: op {op!r} has no {d.dtype.name if d.dtype else '?'} form ({cname} does not exist)")
    args: List[Any] = [_ctx(), _vp(_team(team).handle), _vp(d.ptr), _vp(s.ptr), d.count]
    types: List[Any] = [Ctx, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int]
    if stream is not None:
        args.append(_vp(stream_handle(stream)))
        types.append(ctypes.c_void_p)
    call(cname, *args, restype=ctypes.c_int, argtypes=types, fails=bool)


def broadcast(dst: ArrayLike, src: ArrayLike, root: int, team: Optional[Team] = None,
              stream: StreamLike = None) -> None:
    """Copies ``src`` of team member ``root`` into ``dst`` on every member (collective; symmetric
    arrays of the same size; ``dst`` on the root is written too). Enqueued on ``stream`` if
    given (``rocshmem_broadcastmem_on_stream``)."""
    name = "rocshmem.broadcast"
    root = _pe(name, root)
    d, s = _operand(name, "dst", dst, writable=True), _operand(name, "src", src)
    _same(name, d, s)
    tm = _team(team)
    if stream is not None:
        call("rocshmem_broadcastmem_on_stream", _vp(tm.handle), _vp(d.ptr), _vp(s.ptr), d.nbytes, root,
             _vp(stream_handle(stream)))
        return
    t = d.dtype.typename if d.dtype else "uint8"
    cname = f"rocshmem_ctx_{t}_broadcast"
    call(cname, _ctx(), _vp(tm.handle), _vp(d.ptr), _vp(s.ptr), d.count, root,
         argtypes=[Ctx, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_int])


def _blocking_stream(call_name: str, objs: Sequence[Any]) -> Tuple[Any, Callable[[], None]]:
    """A stream for a stream-only C call made as a blocking call: on the host platform a
    temporary HostStream, on GPUs torch's current stream (then synchronised)."""
    if not any(isinstance(o, DeviceArray) or getattr(o, "is_cuda", False) for o in objs):  # is_cuda: ROCm too
        s = HostStream()
        return s, s.destroy
    try:
        import torch
    except ImportError:
        raise error(call_name, "on GPU memory without torch, give stream= (a CUDA stream handle)") from None
    cs = torch.cuda.current_stream()
    return cs, cs.synchronize


def alltoall(dst: ArrayLike, src: ArrayLike, team: Optional[Team] = None, *, stream: StreamLike = None) -> None:
    """All-to-all over the team (collective): block ``j`` of ``src`` (``src`` split into
    team-size equal blocks) goes to block ``me`` of ``dst`` on member ``j``. Enqueued on
    ``stream`` if given (``rocshmem_alltoallmem_on_stream``); without it complete on return
    (the same call on a stream the package waits for: a temporary HostStream on the host
    platform, torch's current stream on GPUs)."""
    name = "rocshmem.alltoall"
    d, s = _operand(name, "dst", dst, writable=True), _operand(name, "src", src)
    _same(name, d, s)
    tm = _team(team)
    n = tm.n_pes()
    if d.nbytes % n:
        raise ValueError(f"{name}: {d.nbytes} bytes do not split into {n} equal blocks")
    if stream is None:
        st, done = _blocking_stream(name, (dst, src))
        try:
            call("rocshmem_alltoallmem_on_stream", _vp(tm.handle), _vp(d.ptr), _vp(s.ptr), d.nbytes // n,
                 _vp(stream_handle(st)))
        finally:
            done()
        return
    call("rocshmem_alltoallmem_on_stream", _vp(tm.handle), _vp(d.ptr), _vp(s.ptr), d.nbytes // n,
         _vp(stream_handle(stream)))
    if isinstance(stream, HostStream):
        stream._keep(src, dst)


def fcollect(dst: ArrayLike, src: ArrayLike, team: Optional[Team] = None) -> None:
    """All-gather (``fcollect``) over the team (collective): ``dst`` on every member is the
    concatenation of every member's ``src`` in team order (``dst`` holds team-size times
    ``src``; both symmetric). Complete on return: each member puts its block to every member,
    then the team's barrier (the C API has no host fcollect)."""
    name = "rocshmem.fcollect"
    d, s = _operand(name, "dst", dst, writable=True), _operand(name, "src", src)
    tm = _team(team)
    n, me = tm.n_pes(), tm.my_pe()
    if d.nbytes != n * s.nbytes:
        raise ValueError(f"{name}: dst has {d.nbytes} bytes; it must hold the team's {n} blocks of {s.nbytes}")
    if d.dtype is not None and s.dtype is not None and d.dtype != s.dtype:
        raise ValueError(f"{name}: dst is {d.dtype.name} and src {s.dtype.name}")
    world = TEAM_WORLD
    call("rocshmem_barrier", _vp(tm.handle))  # nobody writes into a dst that is still being read
    for k in range(n):
        j = (me + k) % n  # start with the next member: not everyone writes to member 0 first
        pe = tm.translate_pe(j, world)
        call("rocshmem_putmem_nbi", _vp(d.ptr + me * s.nbytes), _vp(s.ptr), s.nbytes, pe)
    call("rocshmem_barrier", _vp(tm.handle))


def reduce_scatter(dst: ArrayLike, src: ArrayLike, op: str = "sum", team: Optional[Team] = None) -> None:
    """Reduce-scatter over the team (collective): ``src`` holds team-size blocks of ``dst``'s
    size; member ``k`` gets in ``dst`` the element-wise ``op`` over every member's block ``k``
    (``rocshmem_ctx_<T>_<op>_reduce_scatter``; ops as :func:`reduce`)."""
    name = "rocshmem.reduce_scatter"
    if op not in _OPS:
        raise ValueError(f"{name}: op {op!r} is not one of {_OPS}")
    d, s = _operand(name, "dst", dst, writable=True), _operand(name, "src", src)
    tm = _team(team)
    n = tm.n_pes()
    if s.nbytes != n * d.nbytes:
        raise ValueError(f"{name}: src has {s.nbytes} bytes; it must hold the team's {n} blocks of dst's {d.nbytes}")
    if d.dtype is None or s.dtype is None or d.dtype != s.dtype:
        raise ValueError(f"{name}: dst and src must have the same element type")
    t = d.dtype.typename
    cname = f"rocshmem_ctx_{t}_{op}_reduce_scatter"
    if t is None or not has(cname):
        raise TypeError(f"{name}: op {op!r} has no {d.dtype.name} form ({cname} does not exist)")
    call(cname, _ctx(), _vp(tm.handle), _vp(d.ptr), _vp(s.ptr), d.count, restype=ctypes.c_int,
         argtypes=[Ctx, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int], fails=bool)


# ---------------------------------------------------------------------------------------------
# Host-platform streams


class HostStream:
    """An ordered host queue of the host platform (``rocshmem_host_stream_create``): what the
    ``stream=`` forms take there. On GPU platforms use the GPU runtime's streams (torch,
    CuPy). Arrays given to calls on the stream are kept alive until :meth:`synchronize`."""

    def __init__(self) -> None:
        h = ctypes.c_void_p(0)
        call("rocshmem_host_stream_create", ctypes.byref(h), fails=bool)
        self.handle: int = h.value or 0
        self._held: List[Any] = []
        self._lock = threading.Lock()

    def _keep(self, *objs: Any) -> None:
        with self._lock:
            self._held.extend(objs)

    def synchronize(self) -> None:
        """Waits until everything enqueued has run; raises if an operation on it failed."""
        try:
            call("rocshmem_host_stream_synchronize", _vp(self.handle), fails=bool)
        finally:
            with self._lock:
                self._held.clear()

    def destroy(self) -> None:
        """Waits for the queue's work, then destroys it."""
        if self.handle:
            h, self.handle = self.handle, 0
            try:
                call("rocshmem_host_stream_destroy", _vp(h), fails=bool)
            finally:
                self._held.clear()

    def __enter__(self) -> "HostStream":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.destroy()

    def __repr__(self) -> str:
        return f"rocshmem.HostStream({self.handle:#x})"


def is_gpu_array(a: Any) -> bool:
    """Whether ``a`` is a :class:`DeviceArray` (symmetric memory in GPU memory)."""
    return isinstance(a, DeviceArray)


