"""rocSHMEM for Triton kernels and PyTorch programs on NVIDIA GPUs, with no package to build.

Device side: functions for ``@triton.jit`` kernels. Triton resolves them from the device bitcode
``librocshmem_device_sm_XX.bc`` given to the launch as an extern library::

    import rocshmem_triton as rt

    @triton.jit
    def kernel(dst, src, sig, nbytes, pe):
        rt.barrier_all_wg()
        rt.putmem_signal_wg(dst, src, nbytes, sig, 1, rt.SIGNAL_SET, pe)

    kernel[(1,)](dst, src, sig, n, pe, **options)      # options: Rocshmem.enable_triton(...)

Host side: ``librocshmem.so`` through ctypes (class ``Rocshmem``): unique-id init, symmetric
memory as torch tensors, and ``rocshmem_hipmodule_init`` on every module Triton loads with our
bitcode (a kernel-load hook), before the module's first launch.

Rules for the device functions (docs/pytorch-triton.md says why):
- A Triton program is one CUDA block, and a scalar call runs on every thread of it. So data
  movement and barriers use the work-group (``_wg``) forms, which every thread of the block
  calls together; per-thread functions that only read (my_pe, signal_fetch, wait_until) are
  fine. Launch with a 1-D grid of programs; each program is its own work-group.
- Pointers are passed as 64-bit integers (a Triton pointer is converted here); the C functions
  return nothing but are declared to Triton as returning int32, a value nobody reads. LLVM then
  calls the real function: both are the shapes it rewrites exactly (integer <-> pointer of the
  same size, a void callee whose result is unused).
"""

import ctypes
import os

import triton.language as tl
from triton.language import core

# Constants of include/rocshmem/rocshmem.h.
SIGNAL_SET = 0
SIGNAL_ADD = 1
CMP_EQ = 0
CMP_NE = 1
CMP_GT = 2
CMP_GE = 3
CMP_LT = 4
CMP_LE = 5

LIB_NAME = "librocshmem_device"
"""The key of our bitcode in Triton's ``extern_libs`` option (any name but 'libdevice')."""

# ---------------------------------------------------------------------------------------------
# Device functions. Argument types are the C ones: pointers and size_t as int64, uint64_t as
# uint64, int as int32; the result of a void function is a dummy int32 that is never returned.


def _i64(x, s):
    """A pointer (Triton pointer or integer address) or a size, as int64."""
    return core.cast(s.to_tensor(x), tl.int64, _semantic=s)


def _u64(x, s):
    return core.cast(s.to_tensor(x), tl.uint64, _semantic=s)


def _i32(x, s):
    return core.cast(s.to_tensor(x), tl.int32, _semantic=s)


def _call(symbol, args, types, ret, s):
    return core.extern_elementwise("", "", args, {tuple(types): (symbol, ret)}, is_pure=False, _semantic=s)


@core.extern
def my_pe(_semantic=None):
    """This PE's number (int32)."""
    return _call("rocshmem_my_pe", [], [], tl.int32, _semantic)


@core.extern
def n_pes(_semantic=None):
    """The number of PEs (int32)."""
    return _call("rocshmem_n_pes", [], [], tl.int32, _semantic)


@core.extern
def putmem_wg(dst, src, nbytes, pe, _semantic=None):
    """Copies nbytes from local src to symmetric dst on PE pe (whole block; complete on return)."""
    s = _semantic
    _call("rocshmem_putmem_wg", [_i64(dst, s), _i64(src, s), _i64(nbytes, s), _i32(pe, s)],
          [tl.int64, tl.int64, tl.int64, tl.int32], tl.int32, s)


@core.extern
def getmem_wg(dst, src, nbytes, pe, _semantic=None):
    """Copies nbytes from symmetric src on PE pe to local dst (whole block)."""
    s = _semantic
    _call("rocshmem_getmem_wg", [_i64(dst, s), _i64(src, s), _i64(nbytes, s), _i32(pe, s)],
          [tl.int64, tl.int64, tl.int64, tl.int32], tl.int32, s)


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


# ---------------------------------------------------------------------------------------------
# Host side.

UNIQUE_ID_BYTES = 128
INIT_WITH_UNIQUEID = 1
# CU_STREAM_LEGACY: the legacy default stream, where torch and Triton launch by default. A NULL
# stream would mean the per-thread default stream to rocshmem_hipmodule_init.
_CU_STREAM_LEGACY = 1


class _InitAttr(ctypes.Structure):
    """rocshmem_init_attr_t (144 bytes)."""
    _fields_ = [("rank", ctypes.c_int32), ("nranks", ctypes.c_int32),
                ("uid", ctypes.c_uint8 * UNIQUE_ID_BYTES), ("mpi_comm", ctypes.c_void_p)]


assert ctypes.sizeof(_InitAttr) == 144


class RocshmemError(RuntimeError):
    pass


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    # deleter stays NULL (allowed by DLPack): the structures live as long as the process.
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


assert ctypes.sizeof(_DLManagedTensor) == 64
_DLPACK_NAME = b"dltensor"
_dlpack_keep = []  # the exported structures (a few per program), never freed
_PyCapsule_New = ctypes.pythonapi.PyCapsule_New
_PyCapsule_New.restype = ctypes.py_object
_PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class DLPackBuffer:
    """nbytes of memory at ptr as a 1-D uint8 DLPack tensor (torch.from_dlpack, numpy.from_dlpack)."""
    CPU, CUDA = 1, 2  # kDLCPU, kDLCUDA

    def __init__(self, ptr, nbytes, device_type, device_id):
        self.ptr, self.nbytes, self.device = ptr, nbytes, (device_type, device_id)

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, stream=None, **kwargs):
        # Nothing is pending on the memory, so there is nothing to order with `stream`.
        shape = (ctypes.c_int64 * 1)(self.nbytes)
        m = _DLManagedTensor()
        m.dl_tensor = _DLTensor(self.ptr, _DLDevice(*self.device), 1, _DLDataType(1, 8, 1), shape, None, 0)
        _dlpack_keep.append((m, shape))
        return _PyCapsule_New(ctypes.addressof(m), _DLPACK_NAME, None)


def cuda_device_of(ptr):
    """The CUDA device ordinal of device memory at ptr (cuPointerGetAttribute)."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError as e:
        raise RocshmemError(f"no CUDA driver ({e})") from None
    ordinal = ctypes.c_int(-1)
    rc = cuda.cuPointerGetAttribute(ctypes.byref(ordinal), 9, ctypes.c_uint64(ptr))  # DEVICE_ORDINAL
    if rc != 0:
        raise RocshmemError(f"{ptr:#x} is not CUDA device memory (cuPointerGetAttribute: error {rc}): "
                            "is librocshmem running on the NVIDIA platform (CUDA runtime found)?")
    return ordinal.value


class Rocshmem:
    """librocshmem.so, loaded with ctypes (one per process)."""

    def __init__(self, path):
        if not os.path.isfile(path):
            raise RocshmemError(f"{path}: no such file (the rocSHMEM core library, librocshmem.so)")
        self.lib = ctypes.CDLL(os.path.abspath(path))
        c_int, c_size_t, c_void_p = ctypes.c_int, ctypes.c_size_t, ctypes.c_void_p
        uid_p = ctypes.POINTER(ctypes.c_uint8 * UNIQUE_ID_BYTES)
        for name, res, args in [
            ("rocshmem_init", None, []),
            ("rocshmem_init_attr", c_int, [ctypes.c_uint32, ctypes.POINTER(_InitAttr)]),
            ("rocshmem_get_uniqueid", c_int, [uid_p]),
            ("rocshmem_set_attr_uniqueid_args", c_int, [c_int, c_int, uid_p, ctypes.POINTER(_InitAttr)]),
            ("rocshmem_finalize", None, []),
            ("rocshmem_my_pe", c_int, []),
            ("rocshmem_n_pes", c_int, []),
            ("rocshmem_malloc", c_void_p, [c_size_t]),
            ("rocshmem_free", None, [c_void_p]),
            ("rocshmem_barrier_all", None, []),
            ("rocshmem_hipmodule_init", c_int, [c_void_p, c_void_p]),
            ("rocshmem_info_get_name", None, [ctypes.c_char_p]),
        ]:
            fn = getattr(self.lib, name)
            fn.restype, fn.argtypes = res, args
        self.bitcode = None
        self.modules = []  # (kernel name, CUmodule) of every module initialised
        self._hook = None

    # -- init ---------------------------------------------------------------------------------
    def get_uniqueid(self):
        """A new unique id (128 bytes), to pass to every PE; this process hosts the rendezvous
        until every PE has finalised, so it must be one of the PEs."""
        uid = (ctypes.c_uint8 * UNIQUE_ID_BYTES)()
        rc = self.lib.rocshmem_get_uniqueid(ctypes.byref(uid))
        if rc != 0:
            raise RocshmemError(f"rocshmem_get_uniqueid returned {rc}")
        return bytes(uid)

    def init_uniqueid(self, rank, nranks, uid):
        """rocshmem_init_attr(ROCSHMEM_INIT_WITH_UNIQUEID): this process is PE `rank` of `nranks`.
        On NVIDIA the library uses the device current on this thread (torch.cuda.set_device and
        any CUDA call first)."""
        if len(uid) != UNIQUE_ID_BYTES:
            raise RocshmemError(f"a unique id has {UNIQUE_ID_BYTES} bytes, not {len(uid)}")
        raw = (ctypes.c_uint8 * UNIQUE_ID_BYTES).from_buffer_copy(uid)
        attr = _InitAttr()
        rc = self.lib.rocshmem_set_attr_uniqueid_args(rank, nranks, ctypes.byref(raw), ctypes.byref(attr))
        if rc != 0:
            raise RocshmemError(f"rocshmem_set_attr_uniqueid_args({rank}, {nranks}) returned {rc}")
        rc = self.lib.rocshmem_init_attr(INIT_WITH_UNIQUEID, ctypes.byref(attr))
        if rc != 0:
            raise RocshmemError(f"rocshmem_init_attr (unique id, rank {rank} of {nranks}) returned {rc}")

    def init(self):
        """rocshmem_init: under rocshmem-run or an MPI launcher (exits the process on failure)."""
        self.lib.rocshmem_init()

    def finalize(self):
        if self._hook is not None:
            from triton import knobs
            knobs.runtime.kernel_load_end_hook.remove(self._hook)
            self._hook = None
        self.lib.rocshmem_finalize()

    def my_pe(self):
        return self.lib.rocshmem_my_pe()

    def n_pes(self):
        return self.lib.rocshmem_n_pes()

    def barrier_all(self):
        """Host barrier: call it outside graph capture (it waits on the host)."""
        self.lib.rocshmem_barrier_all()

    def name(self):
        buf = ctypes.create_string_buffer(64)
        self.lib.rocshmem_info_get_name(buf)
        return buf.value.decode()

    # -- symmetric memory ---------------------------------------------------------------------
    def malloc(self, nbytes):
        """rocshmem_malloc (collective: every PE, same size). A device address on NVIDIA."""
        ptr = self.lib.rocshmem_malloc(nbytes)
        if not ptr:
            raise RocshmemError(f"rocshmem_malloc({nbytes}) returned NULL (ROCSHMEM_HEAP_SIZE too small?)")
        return ptr

    def free(self, ptr):
        self.lib.rocshmem_free(ptr)

    def tensor(self, ptr, nbytes, dtype=None):
        """A torch tensor over nbytes of symmetric memory at ptr, without a copy (through DLPack, so
        numpy is not needed). The tensor does not own the memory: free it only after the tensors
        over it are gone."""
        import torch
        from torch.utils.dlpack import from_dlpack

        device = cuda_device_of(ptr)
        if device != torch.cuda.current_device():
            raise RocshmemError(f"symmetric memory is on cuda:{device}, but this process uses "
                                f"cuda:{torch.cuda.current_device()}: make the device current before init")
        t = from_dlpack(DLPackBuffer(ptr, nbytes, DLPackBuffer.CUDA, device))
        if t.data_ptr() != ptr:
            raise RocshmemError(f"torch did not map {ptr:#x} in place (got {t.data_ptr():#x})")
        return t if dtype is None else t.view(dtype)

    # -- Triton -------------------------------------------------------------------------------
    def enable_triton(self, bitcode):
        """Installs the module-init hook and returns the launch options that link our bitcode:
        pass them to every launch of a kernel that calls the functions above."""
        from triton import knobs

        if not os.path.isfile(bitcode):
            raise RocshmemError(f"{bitcode}: no such file (the device bitcode, librocshmem_device_sm_XX.bc)")
        self.bitcode = os.path.abspath(bitcode)
        options = {"extern_libs": {LIB_NAME: self.bitcode}}
        with open(self.bitcode, "rb") as f:
            # Bitcode whose module flags fix nvvm-reflect-ftz (clang's CUDA default) conflicts
            # with the value Triton sets; without Triton's, libdevice does not flush denormals.
            if b"nvvm-reflect-ftz" in f.read():
                options["enable_reflect_ftz"] = False
        if self._hook is None:
            self._hook = self._on_kernel_load
            knobs.runtime.kernel_load_end_hook.add(self._hook)
        return options

    def _on_kernel_load(self, module, function, name, metadata_group, hash, **kwargs):
        """Triton's kernel_load_end_hook: right after Triton loads a module (before its first
        launch), on the launching thread. Initialises the modules that hold our device globals:
        kernels that call a rocSHMEM function (Triton links the bitcode only into those, even when
        the launch passes it)."""
        binary = next((p for f, p in metadata_group.items() if f.endswith(".cubin")), None)
        if binary is None:
            return
        with open(binary, "rb") as f:
            image = f.read()
        if b"ROCSHMEM_CTX_DEFAULT" in image or b"rocshmemi_device_fast" in image:
            self.module_init(module, name)

    def module_init(self, module, name="?", stream=None):
        """rocshmem_hipmodule_init on a CUmodule: stream-ordered, no synchronisation (also fine while
        a graph is being captured). stream: a CUstream handle; by default the one Triton launches
        on (torch's current stream)."""
        if stream is None:
            from triton.runtime import driver

            stream = driver.active.get_current_stream(driver.active.get_current_device()) or _CU_STREAM_LEGACY
        rc = self.lib.rocshmem_hipmodule_init(ctypes.c_void_p(module), ctypes.c_void_p(stream))
        if rc != 0:
            raise RocshmemError(f"rocshmem_hipmodule_init on the module of Triton kernel {name} returned {rc} "
                                "(the library printed why on stderr)")
        self.modules.append((name, module))
