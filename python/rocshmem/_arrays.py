"""Symmetric memory as arrays: the allocation registry, DLPack export, the GPU array type, and
how the calls find pointer, size and element type of what they are given."""

from __future__ import annotations

import ctypes
import itertools
import math
import os
import threading
import weakref
from typing import Any, Dict, List, Optional, Tuple

from . import _table
from ._lib import error

# ---------------------------------------------------------------------------------------------
# Element types: numpy-style type strings <-> the library's TYPENAMEs (codegen/table.rs).

# The fixed-width TYPENAME of each (kind, bytes); bfloat16 has its own code.
_BY_KIND = {("i", 1): "int8", ("i", 2): "int16", ("i", 4): "int32", ("i", 8): "int64",
            ("u", 1): "uint8", ("u", 2): "uint16", ("u", 4): "uint32", ("u", 8): "uint64",
            ("f", 2): "half", ("f", 4): "float", ("f", 8): "double", ("b", 1): "uint8"}
for _name in set(_BY_KIND.values()):
    assert _name in _table.TYPES, f"{_name} is not a TYPENAME of the library's table"

# DLPack type codes (kDLInt, kDLUInt, kDLFloat, kDLBfloat, kDLBool).
_DL_CODE = {"i": 0, "u": 1, "f": 2, "bf": 4, "b": 6}


class DType:
    """An element type: numpy's kind letter and size, and the library's TYPENAME."""

    __slots__ = ("kind", "itemsize", "typename", "name")

    def __init__(self, kind: str, itemsize: int, name: str):
        self.kind, self.itemsize, self.name = kind, itemsize, name
        self.typename = "bfloat16" if kind == "bf" else _BY_KIND.get((kind, itemsize))

    @property
    def typestr(self) -> str:
        """The array-interface type string (bfloat16 as 2 raw bytes: 'V2')."""
        if self.kind == "bf":
            return "<V2"
        return ("|" if self.itemsize == 1 else "<") + self.kind + str(self.itemsize)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DType) and (self.kind, self.itemsize) == (other.kind, other.itemsize)

    def __hash__(self) -> int:
        return hash((self.kind, self.itemsize))

    def __repr__(self) -> str:
        return f"rocshmem.DType({self.name})"


_NAMED = {"int8": ("i", 1), "int16": ("i", 2), "int32": ("i", 4), "int64": ("i", 8), "uint8": ("u", 1),
          "uint16": ("u", 2), "uint32": ("u", 4), "uint64": ("u", 8), "float16": ("f", 2), "half": ("f", 2),
          "float32": ("f", 4), "float": ("f", 4), "float64": ("f", 8), "double": ("f", 8), "bool": ("b", 1),
          "bfloat16": ("bf", 2)}


def dtype_of(spec: Any) -> DType:
    """A DType from a numpy dtype, a torch dtype, a type name or a Python type."""
    if isinstance(spec, DType):
        return spec
    if spec is int:
        spec = "int64"
    elif spec is float:
        spec = "float64"
    elif spec is bool:
        spec = "bool"
    text = str(spec)
    if text.startswith("torch."):
        text = text[len("torch."):]
    if text in _NAMED:
        k, n = _NAMED[text]
        return DType(k, n, "float16" if text == "half" else text)
    kind: Optional[str] = getattr(spec, "kind", None)
    size: Optional[int] = getattr(spec, "itemsize", None)
    if kind is None:
        try:
            import numpy  # noqa: PLC0415 - optional

            d = numpy.dtype(spec)
            kind, size = d.kind, d.itemsize
        except Exception:  # noqa: BLE001 - any failure means "not a dtype"
            kind = None
    if kind in ("i", "u", "f", "b") and size is not None and (kind, size) in _BY_KIND:
        name = "bool" if kind == "b" else {"i": "int", "u": "uint", "f": "float"}[kind] + str(int(size) * 8)
        return DType(kind, int(size), name)
    raise TypeError(f"{spec!r} is not an element type rocSHMEM moves: use one of {sorted(_NAMED)}")


# ---------------------------------------------------------------------------------------------
# Allocations: every rocshmem_malloc the package made, to free by array and to refuse use
# after free. An object the package handed out is tied to its Allocation by identity (not by
# address: after a free, the next allocation may sit at the same address, and a stale object
# must not write into it): a DeviceArray holds it, a numpy array's base is a _HostBlock that
# holds it, a torch tensor's storage carries it. Each Allocation has its own generation number.

class Allocation:
    __slots__ = ("ptr", "nbytes", "live", "device", "generation", "roots", "__weakref__")

    def __init__(self, ptr: int, nbytes: int, device: Optional[Tuple[int, int]], generation: int):
        self.ptr, self.nbytes, self.live, self.device = ptr, nbytes, True, device
        self.generation = generation
        self.roots: List[Any] = []  # weak references to the numpy arrays handed out (made read-only at free)

    def kill(self) -> None:
        """The memory is gone (free or finalize): the arrays handed out refuse numpy writes."""
        self.live = False
        for r in self.roots:
            a = r()
            if a is not None:
                try:
                    a.flags.writeable = False
                except (AttributeError, ValueError):
                    pass
        self.roots = []

    def __repr__(self) -> str:
        return (f"Allocation({self.ptr:#x}, {self.nbytes} bytes, generation {self.generation}, "
                f"{'live' if self.live else 'freed'})")


_alloc_lock = threading.Lock()
_allocations: List[Allocation] = []
_generations = itertools.count(1)


def register(ptr: int, nbytes: int, device: Optional[Tuple[int, int]]) -> Allocation:
    a = Allocation(ptr, nbytes, device, next(_generations))
    with _alloc_lock:
        # A block freed earlier at the same place is forgotten here: its range is in use again
        # (objects over it still hold their own, dead Allocation).
        _allocations[:] = [b for b in _allocations if b.live or not _overlaps(b, ptr, max(nbytes, 1))]
        _allocations.append(a)
    return a


def _overlaps(a: Allocation, ptr: int, n: int) -> bool:
    return ptr < a.ptr + max(a.nbytes, 1) and a.ptr < ptr + n


def live_allocation_containing(ptr: int) -> Optional[Allocation]:
    """The live allocation that holds address ptr."""
    with _alloc_lock:
        for a in _allocations:
            if a.live and _overlaps(a, ptr, 1):
                return a
    return None


class _HostBlock:
    """The owner numpy sees of an array over host symmetric memory (its ``base``): the memory's
    address and size, and the Allocation the array belongs to."""

    __slots__ = ("__array_interface__", "allocation", "__weakref__")

    def __init__(self, ptr: int, nbytes: int, allocation: Allocation):
        self.__array_interface__ = {"shape": (nbytes,), "typestr": "|u1", "data": (ptr, False), "version": 3}
        self.allocation = allocation


_TORCH_ATTR = "_rocshmem_allocation"


def tag_torch(t: Any, allocation: Allocation) -> None:
    """Ties a torch tensor made over symmetric memory (and every view of it: they share the
    storage) to its Allocation."""
    setattr(t.untyped_storage(), _TORCH_ATTR, allocation)


def allocation_of(obj: Any) -> Optional[Allocation]:
    """The Allocation an object handed out by the package belongs to (by identity), or None for
    other objects."""
    a = getattr(obj, "_allocation", None)
    if isinstance(a, Allocation):
        return a
    if type(obj).__module__.startswith("torch") and hasattr(obj, "untyped_storage"):
        try:
            a = getattr(obj.untyped_storage(), _TORCH_ATTR, None)
        except Exception:  # noqa: BLE001 - not a plain tensor (fake, meta, sparse): no tag
            a = None
        return a if isinstance(a, Allocation) else None
    base = getattr(obj, "base", None)
    for _ in range(64):  # numpy collapses view chains, so this is short
        if base is None:
            return None
        if isinstance(base, _HostBlock):
            return base.allocation
        base = getattr(base, "base", None)
    return None


def _freed_message(what: str, ptr: int, nbytes: int, a: Allocation) -> str:
    return (f"{what} ({ptr:#x}, {nbytes} bytes) is an array over symmetric memory that was freed "
            f"(rocshmem.free or rocshmem.finalize; allocation generation {a.generation}): allocate it again "
            "with rocshmem.array")


def check_not_freed(call: str, what: str, ptr: int, nbytes: int, obj: Any = None) -> None:
    """Refuses an array whose allocation was freed (or whose runtime was finalised): by the
    object's own allocation when the package made it, else by address."""
    own = allocation_of(obj) if obj is not None else None
    if own is not None:
        if not own.live:
            raise error(call, _freed_message(what, ptr, nbytes, own))
        return
    with _alloc_lock:
        for a in _allocations:
            if _overlaps(a, ptr, max(nbytes, 1)):
                if a.live:
                    return
                dead = a
                break
        else:
            return
    raise error(call, _freed_message(what, ptr, nbytes, dead))


def forget_all() -> None:
    """At finalize: every allocation is gone with the heap. The host memory of the arrays that
    were still live gets zero pages in its place (where nothing else was mapped there since),
    so that numpy or torch touching an array kept past finalize reads zeros instead of
    crashing the interpreter (printing one, or a debugger showing it, is such a touch)."""
    with _alloc_lock:
        ranges = [(a.ptr, a.nbytes) for a in _allocations if a.live and a.device is None]
        for a in _allocations:
            a.kill()
    for ptr, nbytes in ranges:
        _fill_hole(ptr, nbytes)


_MAP_PRIVATE, _MAP_ANONYMOUS, _MAP_NORESERVE, _MAP_FIXED_NOREPLACE = 0x02, 0x20, 0x4000, 0x100000
_PROT_READ_WRITE = 0x1 | 0x2


def _fill_hole(ptr: int, nbytes: int) -> None:
    """Maps private zero pages over [ptr, ptr + nbytes) where that range is unmapped (never
    over anything mapped: MAP_FIXED_NOREPLACE)."""
    try:
        page = os.sysconf("SC_PAGE_SIZE")
        mmap, munmap = _libc.mmap, _libc.munmap
        mmap.restype, mmap.argtypes = ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                                                        ctypes.c_int, ctypes.c_int, ctypes.c_long]
        munmap.restype, munmap.argtypes = ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t]
    except (AttributeError, OSError, ValueError):
        return
    start = ptr - ptr % page
    end = -(-(ptr + max(nbytes, 1)) // page) * page
    flags = _MAP_PRIVATE | _MAP_ANONYMOUS | _MAP_NORESERVE | _MAP_FIXED_NOREPLACE
    failed = ctypes.c_void_p(-1).value

    def map_at(p: int, n: int) -> bool:
        got = mmap(p, n, _PROT_READ_WRITE, flags, -1, 0)
        if got in (None, failed):
            return False
        if got != p:
            munmap(got, n)  # an old kernel took the address as a hint only
            return False
        return True

    if not map_at(start, end - start):
        for p in range(start, end, page):  # parts of the range are still mapped: the rest page by page
            map_at(p, page)


# ---------------------------------------------------------------------------------------------
# Where memory lives: host, or which GPU. Only a CUDA driver that the process already loaded
# (librocshmem does on the NVIDIA platform) is asked; nothing is loaded here.

_CU_POINTER_ATTRIBUTE_MEMORY_TYPE, _CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 2, 9
_CU_MEMORYTYPE_DEVICE = 2
KDL_CPU, KDL_CUDA, KDL_ROCM = 1, 2, 10


def _loaded(name: str) -> Optional[ctypes.CDLL]:
    try:
        return ctypes.CDLL(name, mode=os.RTLD_NOLOAD | os.RTLD_LOCAL)
    except OSError:
        return None


def loaded_hip() -> Optional[ctypes.CDLL]:
    """libamdhip64, if this process loaded it (the library does on the AMD platform)."""
    return _loaded("libamdhip64.so") or _loaded("libamdhip64.so.7") or _loaded("libamdhip64.so.6") or \
        _loaded("libamdhip64.so.5")


def _hip_device_of(hip: ctypes.CDLL, ptr: int) -> Optional[int]:
    """The ordinal of the AMD GPU whose memory holds ptr, or None (host or unknown memory)."""
    version = ctypes.c_int(0)
    hip.hipRuntimeGetVersion(ctypes.byref(version))
    # hipPointerAttribute_t starts with the memory type and the device ordinal (two ints); the
    # memory type of device memory is 2 since ROCm 6 (as CUDA's), 1 before.
    device_type = 2 if version.value >= 60000000 else 1
    attrs = (ctypes.c_int * 32)()
    if hip.hipPointerGetAttributes(attrs, ctypes.c_void_p(ptr)) != 0:
        return None
    return int(attrs[1]) if attrs[0] == device_type else None


def device_of(ptr: int) -> Optional[Tuple[int, int]]:
    """(kDLCUDA, ordinal) for CUDA device memory, (kDLROCM, ordinal) for AMD GPU memory (HIP),
    None for host memory. Only GPU runtimes that the process already loaded are asked
    (librocshmem loads the one of its platform); nothing is loaded here."""
    cuda = _loaded("libcuda.so.1")
    if cuda is not None:
        kind = ctypes.c_uint(0)
        if cuda.cuPointerGetAttribute(ctypes.byref(kind), _CU_POINTER_ATTRIBUTE_MEMORY_TYPE, ctypes.c_uint64(ptr)) == 0 \
                and kind.value == _CU_MEMORYTYPE_DEVICE:
            ordinal = ctypes.c_int(-1)
            cuda.cuPointerGetAttribute(ctypes.byref(ordinal), _CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                       ctypes.c_uint64(ptr))
            return (KDL_CUDA, ordinal.value)
    hip = loaded_hip()
    if hip is not None:
        ordinal_or_none = _hip_device_of(hip, ptr)
        if ordinal_or_none is not None:
            return (KDL_ROCM, ordinal_or_none)
    return None


# ---------------------------------------------------------------------------------------------
# DLPack export (version 0.x DLManagedTensor), with a deleter that releases the exporter.

class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32), ("dtype", _DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    pass


_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(_DLManagedTensor))
_DLManagedTensor._fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _DELETER)]
assert ctypes.sizeof(_DLManagedTensor) == 64

# The DLManagedTensor, its shape and its strides live in one block from libc's malloc, and the
# deleter is libc's free itself: the consumer (torch, numpy) releases it without running any
# Python. A Python deleter would be called when the consumer's tensor dies, which for a tensor
# still referenced at interpreter exit is after the package's module (and the callback's code)
# is gone: a crash at exit. The memory is the library's, so there is nothing else to release.
_libc = ctypes.CDLL(None)
_libc_malloc = _libc.malloc
_libc_malloc.restype = ctypes.c_void_p
_libc_malloc.argtypes = [ctypes.c_size_t]
_libc_free = _libc.free
_libc_free.restype = None
_libc_free.argtypes = [ctypes.c_void_p]
_free_deleter = _DELETER(ctypes.cast(_libc_free, ctypes.c_void_p).value or 0)

_CAPSULE_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_PyCapsule_New = ctypes.pythonapi.PyCapsule_New
_PyCapsule_New.restype = ctypes.py_object
_PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, _CAPSULE_DESTRUCTOR]
_PyCapsule_IsValid = ctypes.pythonapi.PyCapsule_IsValid
_PyCapsule_IsValid.restype = ctypes.c_int
_PyCapsule_IsValid.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_PyCapsule_GetPointer = ctypes.pythonapi.PyCapsule_GetPointer
_PyCapsule_GetPointer.restype = ctypes.c_void_p
_PyCapsule_GetPointer.argtypes = [ctypes.c_void_p, ctypes.c_char_p]


# The destructor gets the capsule as a bare address (c_void_p), never as py_object: it runs
# while the capsule is being deallocated (reference count 0), and a py_object argument would
# take and drop a reference to it, deallocating it a second time (a crash in every consumer).
# What it uses is bound as defaults, so it works while the interpreter tears modules down.
def _capsule_gone(capsule: int, _valid: Any = _PyCapsule_IsValid, _get: Any = _PyCapsule_GetPointer,
                  _free: Any = _libc_free) -> None:
    # Never consumed (still named "dltensor"): the producer releases it.
    if _valid(capsule, b"dltensor"):
        _free(_get(capsule, b"dltensor"))


_capsule_destructor = _CAPSULE_DESTRUCTOR(_capsule_gone)
# A capsule may outlive this module's globals at exit: the callback's code must never be freed.
ctypes.pythonapi.Py_IncRef.argtypes = [ctypes.py_object]
ctypes.pythonapi.Py_IncRef(_capsule_destructor)

outstanding = 0
"""DLPack tensors made (for tests: each is a small malloc block the consumer frees)."""


def dlpack_capsule(owner: Any, ptr: int, shape: Tuple[int, ...], strides_elems: Tuple[int, ...], dtype: DType,
                   device: Tuple[int, int]) -> Any:
    """A "dltensor" capsule over memory at ptr (`owner` is not kept: the memory is the library's;
    the package's own checks find the allocation through the consumer's object)."""
    global outstanding
    nd = len(shape)
    n = max(nd, 1)
    size = ctypes.sizeof(_DLManagedTensor) + 2 * 8 * n
    block = _libc_malloc(size)
    if not block:
        raise MemoryError("rocshmem: DLPack export: malloc failed")
    m = _DLManagedTensor.from_address(block)
    c_shape = (ctypes.c_int64 * n).from_address(block + ctypes.sizeof(_DLManagedTensor))
    c_strides = (ctypes.c_int64 * n).from_address(block + ctypes.sizeof(_DLManagedTensor) + 8 * n)
    for i in range(nd):
        c_shape[i], c_strides[i] = shape[i], strides_elems[i]
    code = _DL_CODE[dtype.kind]
    bits = 8 if dtype.kind == "b" else dtype.itemsize * 8
    m.dl_tensor = _DLTensor(ptr, _DLDevice(*device), nd, _DLDataType(code, bits, 1),
                            ctypes.cast(c_shape, ctypes.POINTER(ctypes.c_int64)),
                            ctypes.cast(c_strides, ctypes.POINTER(ctypes.c_int64)), 0)
    m.manager_ctx = None
    m.deleter = _free_deleter
    outstanding += 1
    return _PyCapsule_New(block, b"dltensor", _capsule_destructor)


# ---------------------------------------------------------------------------------------------
# Arrays in GPU memory.

def _c_strides(shape: Tuple[int, ...]) -> Tuple[int, ...]:
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc *= n
    return tuple(reversed(out))


class DeviceArray:
    """Symmetric memory on a GPU, as an n-dimensional array: hand it to torch
    (``torch.from_dlpack(a)`` or :func:`rocshmem.tensor`), CuPy (``cupy.asarray(a)``), Numba or
    Triton through DLPack (``__dlpack__``) or ``__cuda_array_interface__``. Basic slicing
    (``a[2:10]``, ``a[1]``) gives views; ``copy_to_host()`` / ``copy_from_host()`` copy through
    the CUDA driver (for tests and small data; use torch or CuPy for real work)."""

    def __init__(self, ptr: int, shape: Tuple[int, ...], dtype: DType, device: Tuple[int, int],
                 strides: Optional[Tuple[int, ...]] = None, base: Optional["DeviceArray"] = None,
                 allocation: Optional[Allocation] = None):
        self.ptr = ptr
        self.shape = tuple(int(n) for n in shape)
        self.dtype = dtype
        self.device = device
        self.strides_elems = strides if strides is not None else _c_strides(self.shape)
        self.base = base
        self._allocation: Optional[Allocation] = \
            allocation if allocation is not None else (base._allocation if base is not None else None)

    # -- shape ---------------------------------------------------------------------------------
    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def strides(self) -> Tuple[int, ...]:
        """Strides in bytes, as numpy gives them."""
        return tuple(s * self.dtype.itemsize for s in self.strides_elems)

    def is_contiguous(self) -> bool:
        return self.size <= 1 or all(
            s == c for n, s, c in zip(self.shape, self.strides_elems, _c_strides(self.shape)) if n != 1)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def __repr__(self) -> str:
        kind = "rocm" if self.device[0] == KDL_ROCM else "cuda"
        return (f"rocshmem.DeviceArray(shape={self.shape}, dtype={self.dtype.name}, "
                f"device={kind}:{self.device[1]}, ptr={self.ptr:#x})")

    def __getitem__(self, key: Any) -> "DeviceArray":
        if not isinstance(key, tuple):
            key = (key,)
        if any(k is Ellipsis or k is None for k in key) or len(key) > self.ndim:
            raise IndexError("DeviceArray takes integers and slices, at most one per dimension")
        ptr, shape, strides = self.ptr, [], []
        for d, n in enumerate(self.shape):
            s = self.strides_elems[d]
            k = key[d] if d < len(key) else slice(None)
            if isinstance(k, slice):
                start, stop, step = k.indices(n)
                count = len(range(start, stop, step))
                ptr += start * s * self.dtype.itemsize
                shape.append(count)
                strides.append(s * step)
            else:
                i = int(k)
                if i < 0:
                    i += n
                if not 0 <= i < n:
                    raise IndexError(f"index {int(k)} is out of bounds for dimension {d} of size {n}")
                ptr += i * s * self.dtype.itemsize
        return DeviceArray(ptr, tuple(shape), self.dtype, self.device, tuple(strides), base=self)

    def view(self, dtype: Any) -> "DeviceArray":
        """The same bytes as another element type (contiguous arrays; the last dimension scales)."""
        d = dtype_of(dtype)
        if not self.is_contiguous() or self.ndim == 0 or (self.shape[-1] * self.itemsize) % d.itemsize:
            raise ValueError("view: the array must be contiguous and its last dimension a whole number of the new type")
        shape = self.shape[:-1] + (self.shape[-1] * self.itemsize // d.itemsize,)
        return DeviceArray(self.ptr, shape, d, self.device, base=self)

    def reshape(self, *shape: Any) -> "DeviceArray":
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        shape = tuple(int(n) for n in shape)
        if math.prod(shape) != self.size or not self.is_contiguous():
            raise ValueError(f"cannot reshape {self.shape} into {shape}")
        return DeviceArray(self.ptr, shape, self.dtype, self.device, base=self)

    # -- interchange ---------------------------------------------------------------------------
    @property
    def __cuda_array_interface__(self) -> Dict[str, Any]:
        return {"shape": self.shape, "typestr": self.dtype.typestr, "data": (self.ptr, False), "version": 3,
                "strides": None if self.is_contiguous() else self.strides, "stream": None}

    def __dlpack_device__(self) -> Tuple[int, int]:
        return self.device

    def __dlpack__(self, stream: Any = None, **kwargs: Any) -> Any:
        # Nothing of rocSHMEM is pending on the memory, so there is nothing to order with `stream`.
        return dlpack_capsule(self, self.ptr, self.shape, self.strides_elems, self.dtype, self.device)

    # -- copies (CUDA driver, or HIP) -----------------------------------------------------------
    def _copy(self, what: str, dst: int, src: int, to_host: bool) -> None:
        if not self.is_contiguous():
            raise error(f"rocshmem.DeviceArray.{what}", "copies need a contiguous array")
        if self.device[0] == KDL_ROCM:
            hip = loaded_hip()
            if hip is None:
                raise error(f"rocshmem.DeviceArray.{what}", "copies need HIP loaded (libamdhip64)")
            rc = hip.hipMemcpy(ctypes.c_void_p(dst), ctypes.c_void_p(src), ctypes.c_size_t(self.nbytes),
                               2 if to_host else 1)  # hipMemcpyDeviceToHost / HostToDevice
            if rc != 0:
                raise error(f"rocshmem.DeviceArray.{what}", f"hipMemcpy failed (HIP error {rc})")
            return
        cuda = _loaded("libcuda.so.1")
        if cuda is None:
            raise error(f"rocshmem.DeviceArray.{what}", "copies need the CUDA driver loaded")
        if to_host:
            rc = cuda.cuMemcpyDtoH_v2(ctypes.c_void_p(dst), ctypes.c_uint64(src), ctypes.c_size_t(self.nbytes))
        else:
            rc = cuda.cuMemcpyHtoD_v2(ctypes.c_uint64(dst), ctypes.c_void_p(src), ctypes.c_size_t(self.nbytes))
        if rc != 0:
            raise error(f"rocshmem.DeviceArray.{what}", f"cuMemcpy failed (CUDA error {rc})")

    def copy_to_host(self) -> Any:
        """A numpy copy (synchronous: cuMemcpyDtoH, or hipMemcpy on AMD)."""
        import numpy  # noqa: PLC0415 - optional

        out = numpy.empty(self.shape, dtype=numpy.dtype(self.dtype.typestr))
        self._copy("copy_to_host", out.ctypes.data, self.ptr, True)
        return out

    def copy_from_host(self, src: Any) -> None:
        """Copies a host buffer of the same size in (synchronous)."""
        mv = memoryview(src).cast("B")
        if mv.nbytes != self.nbytes:
            raise ValueError(f"copy_from_host: {mv.nbytes} bytes into an array of {self.nbytes}")
        buf = (ctypes.c_char * mv.nbytes).from_buffer_copy(mv)
        self._copy("copy_from_host", self.ptr, ctypes.addressof(buf), False)


# ---------------------------------------------------------------------------------------------
# What a call is given: (address, bytes, element type, contiguous).

class Buf:
    __slots__ = ("ptr", "nbytes", "dtype", "count", "contiguous", "obj")

    def __init__(self, ptr: int, nbytes: int, dtype: Optional[DType], count: int, contiguous: bool, obj: Any):
        self.ptr, self.nbytes, self.dtype, self.count, self.contiguous, self.obj = \
            ptr, nbytes, dtype, count, contiguous, obj


def _from_interface(obj: Any, iface: Dict[str, Any]) -> Buf:
    shape = tuple(iface["shape"])
    count = math.prod(shape)
    typestr = iface["typestr"]
    if typestr[1:] == "V2":
        dt: Optional[DType] = DType("bf", 2, "bfloat16")
    else:
        try:
            dt = dtype_of(typestr[1:])
        except TypeError:
            dt = None
    item = dt.itemsize if dt else int(typestr[2:] or 1)
    strides = iface.get("strides")
    contiguous = strides is None or count <= 1 or tuple(strides) == tuple(
        s * item for s in _c_strides(shape))
    return Buf(int(iface["data"][0]), count * item, dt, count, contiguous, obj)


def buf_of(obj: Any, call: str, what: str) -> Buf:
    """Address, size and element type of an array-like: DeviceArray, numpy array, torch tensor,
    anything with __cuda_array_interface__ or __array_interface__, or a writable buffer."""
    if isinstance(obj, DeviceArray):
        return Buf(obj.ptr, obj.nbytes, obj.dtype, obj.size, obj.is_contiguous(), obj)
    mod = type(obj).__module__
    if mod.startswith("torch") and hasattr(obj, "data_ptr"):
        dt = dtype_of(obj.dtype)
        return Buf(obj.data_ptr(), obj.numel() * obj.element_size(), dt, obj.numel(), obj.is_contiguous(), obj)
    iface = getattr(obj, "__cuda_array_interface__", None) or getattr(obj, "__array_interface__", None)
    if iface is not None:
        return _from_interface(obj, iface)
    try:
        mv = memoryview(obj)
    except TypeError:
        raise TypeError(f"{call}: {what} is a {type(obj).__name__}, not an array (numpy array, torch tensor, "
                        "rocshmem array or buffer)") from None
    if not mv.c_contiguous:
        return Buf(0, mv.nbytes, None, 0, False, obj)
    if mv.readonly:  # bytes and the like: a private copy, kept alive by the Buf (sources only)
        obj = mv = memoryview(bytearray(mv))
    holder = (ctypes.c_char * max(mv.nbytes, 1)).from_buffer(mv.cast("B"))
    return Buf(ctypes.addressof(holder), mv.nbytes, DType("u", 1, "uint8"), mv.nbytes, True, (obj, holder))
