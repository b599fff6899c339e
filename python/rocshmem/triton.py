"""rocSHMEM device functions for Triton kernels (NVIDIA GPUs).

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
- finds the device bitcode ``librocshmem_device_sm_XX.bc`` for the GPU (bundled in the package,
  next to ``ROCSHMEM_LIBRARY`` when that is set, or ``ROCSHMEM_BITCODE``) and gives it to
  Triton as an extern library (``@rt.jit`` kernels get it at every launch; plain
  ``@triton.jit`` kernels take ``**rt.options()`` at launch);
- registers, at import, a Triton kernel-load hook that calls ``rocshmem_hipmodule_init`` on
  every module holding rocSHMEM's device globals, right after Triton loads it and before its
  first launch, on the stream Triton launches on (so also inside ``torch.cuda.graph`` capture,
  provided the kernel was launched once before the capture, as any Triton kernel must be);
  modules loaded before a re-init are initialised again by ``rocshmem.init``.

Rules (docs/pytorch-triton.md says why): a Triton program is one CUDA block and a scalar call
runs on every thread, so data movement and barriers use the work-group (``_wg``) forms;
per-thread reads (my_pe, signal_fetch, wait_until) are fine. Pointers are passed as 64-bit
integers (a Triton pointer is converted here).
"""

from __future__ import annotations

import ctypes
import os
import threading
from typing import Any, Dict, List, Optional, Tuple

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
"""The key of the bitcode in Triton's ``extern_libs`` option."""

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


DEVICE_FUNCTIONS = ("my_pe", "n_pes", "putmem_wg", "getmem_wg", "putmem_nbi_wg", "putmem_signal_wg",
                    "uint64_wait_until", "signal_fetch", "barrier_all_wg", "sync_all_wg", "quiet", "fence")

# ---------------------------------------------------------------------------------------------
# The bitcode


def _current_arch() -> int:
    from triton.runtime import driver

    target = driver.active.get_current_target()
    if target.backend != "cuda":
        raise error("rocshmem.triton", f"Triton's active backend is {target.backend!r}: rocshmem.triton supports "
                                       "NVIDIA GPUs (cuda) only; AMD is not done")
    return int(target.arch)


def bitcode_path(arch: Optional[int] = None) -> str:
    """The device bitcode for compute capability ``arch`` (default: the current GPU's):
    ``ROCSHMEM_BITCODE`` if set, else ``librocshmem_device_sm_<arch>.bc`` next to
    ``ROCSHMEM_LIBRARY`` (when set) or in the package."""
    env = os.environ.get("ROCSHMEM_BITCODE")
    if env:
        if not os.path.isfile(env):
            raise error("rocshmem.triton", f"ROCSHMEM_BITCODE={env}: no such file")
        return os.path.abspath(env)
    arch = _current_arch() if arch is None else int(arch)
    name = f"librocshmem_device_sm_{arch}.bc"
    dirs = []
    if os.environ.get("ROCSHMEM_LIBRARY"):
        dirs.append(os.path.dirname(os.path.abspath(os.environ["ROCSHMEM_LIBRARY"])))
    dirs.append(package_lib_dir())
    for d in dirs:
        p = os.path.join(d, name)
        if os.path.isfile(p):
            return p
    have = sorted({f for d in dirs if os.path.isdir(d) for f in os.listdir(d) if f.startswith("librocshmem_device_sm_")})
    raise error("rocshmem.triton", f"no {name} in {' or '.join(dirs)} (found: {have or 'none'}); build the package "
                                   f"with -C cmake.define.ROCSHMEM_CUDA_ARCHS={arch} (needs clang/llvm >= 16), or set "
                                   "ROCSHMEM_BITCODE")


_options_cache: Dict[Any, Dict[str, Any]] = {}


def options(arch: Optional[int] = None, bitcode: Optional[str] = None) -> Dict[str, Any]:
    """The launch options that link rocSHMEM's bitcode into a kernel: pass them to every launch
    of a plain ``@triton.jit`` kernel that calls the functions above (``@rocshmem.triton.jit``
    kernels get them automatically). ``bitcode``: this file instead of :func:`bitcode_path`."""
    path = os.path.abspath(bitcode) if bitcode else bitcode_path(arch)
    opts = _options_cache.get(path)
    if opts is None:
        opts = {"extern_libs": {LIB_NAME: path}}
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

# CU_STREAM_LEGACY: the legacy default stream, where torch and Triton launch by default (NULL
# would mean the per-thread default stream to rocshmem_hipmodule_init).
_CU_STREAM_LEGACY = 1
_GLOBALS = (b"ROCSHMEM_CTX_DEFAULT", b"rocshmemi_device_fast")

modules: List[Tuple[str, int]] = []
"""(kernel name, CUmodule) of every module initialised, in order."""
_modules_lock = threading.Lock()


def module_init(module: int, name: str = "?", stream: Optional[int] = None) -> None:
    """``rocshmem_hipmodule_init`` on a CUmodule: a stream-ordered copy of the library's device
    state into the module's globals, without synchronisation (fine during graph capture).
    ``stream``: a CUstream handle; by default the one Triton launches on."""
    if not _core.initialized():
        raise error("rocshmem.triton", f"Triton loaded kernel {name}, which calls rocSHMEM, before rocshmem.init: "
                                       "initialise first, then launch")
    if stream is None:
        from triton.runtime import driver

        stream = driver.active.get_current_stream(driver.active.get_current_device()) or _CU_STREAM_LEGACY
    call("rocshmem_hipmodule_init", ctypes.c_void_p(module), ctypes.c_void_p(stream), fails=bool)
    with _modules_lock:
        if all(m != module for _, m in modules):
            modules.append((name, module))


def _on_kernel_load(module: Any, function: Any, name: str, metadata_group: Dict[str, str], hash: str,
                    **kwargs: Any) -> None:
    """Triton's kernel_load_end_hook: right after a module is loaded, on the launching thread."""
    if module is None:
        return
    binary = next((p for f, p in metadata_group.items() if f.endswith(".cubin")), None)
    if binary is None:
        return
    with open(binary, "rb") as f:
        image = f.read()
    if any(g in image for g in _GLOBALS):
        module_init(int(module), name)


def _reinit_modules() -> None:
    """After a new init: modules loaded earlier hold the previous runtime's values."""
    with _modules_lock:
        known = list(modules)
    for name, module in known:
        call("rocshmem_hipmodule_init", ctypes.c_void_p(module), ctypes.c_void_p(_CU_STREAM_LEGACY), fails=bool)


def _install() -> None:
    from triton import knobs

    knobs.runtime.kernel_load_end_hook.add(_on_kernel_load)
    _core._after_init.append(_reinit_modules)


_install()

__all__ = ["CMP_EQ", "CMP_GE", "CMP_GT", "CMP_LE", "CMP_LT", "CMP_NE", "LIB_NAME", "SIGNAL_ADD", "SIGNAL_SET",
           "RocshmemJITFunction", "bitcode_path", "jit", "module_init", "modules", "options", *DEVICE_FUNCTIONS]
