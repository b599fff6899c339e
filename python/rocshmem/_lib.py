"""Loading librocshmem and calling it: the one place that touches ctypes function objects.

The bundled library (``rocshmem/lib/librocshmem.so``) is loaded on first use, or the one named by
``ROCSHMEM_LIBRARY``. Every call goes through :func:`call`, which turns an error the library
reported on this thread (``rocshmem_last_error``) into :class:`RocshmemError` carrying the
library's one-line message.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
from typing import Any, Callable, Dict, Optional, Sequence

from . import _table

__all__ = ["RocshmemError", "library_path", "lib", "call", "fn", "package_lib_dir"]

c_int, c_size_t, c_void_p, c_uint32 = ctypes.c_int, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_uint32


class RocshmemError(RuntimeError):
    """A rocSHMEM call failed. ``str(e)`` is the library's one-line message
    (``rocshmem: PE <n>: error: <call>: <what to change>``) or, for a check made in Python
    before calling the library, a message in the same form."""


# Shown as rocshmem.RocshmemError (the public name) in tracebacks and reprs.
RocshmemError.__module__ = "rocshmem"


class UniqueId(ctypes.Structure):
    _fields_ = [("internal", ctypes.c_uint8 * _table.ROCSHMEM_UNIQUE_ID_BYTES)]


class InitAttr(ctypes.Structure):
    """rocshmem_init_attr_t."""

    _fields_ = [("rank", ctypes.c_int32), ("nranks", ctypes.c_int32), ("uid", UniqueId), ("mpi_comm", c_void_p)]


class Ctx(ctypes.Structure):
    """rocshmem_ctx_t (16 bytes, passed by value)."""

    _fields_ = [("ctx_opaque", c_void_p), ("team_opaque", c_void_p)]


# The untyped calls the package uses: name -> (result, argument types). The ctest
# python_signatures checks them (and those written out at calls) against rocshmem.h.
_SIGNATURES: Dict[str, Any] = {
    "rocshmem_last_error": (ctypes.c_char_p, []),
    "rocshmemi_initialized": (ctypes.c_bool, []),
    "rocshmem_init_thread": (c_int, [c_int, ctypes.POINTER(c_int), c_void_p]),
    "rocshmem_init_attr": (c_int, [c_uint32, ctypes.POINTER(InitAttr)]),
    "rocshmem_get_uniqueid": (c_int, [ctypes.POINTER(UniqueId)]),
    "rocshmem_set_attr_uniqueid_args": (c_int, [c_int, c_int, ctypes.POINTER(UniqueId), ctypes.POINTER(InitAttr)]),
    "rocshmem_finalize": (None, []),
    "rocshmem_my_pe": (c_int, []),
    "rocshmem_n_pes": (c_int, []),
    "rocshmem_info_get_name": (None, [ctypes.c_char_p]),
    "rocshmem_vendor_get_version_info": (None, [ctypes.POINTER(c_int)] * 3),
    "rocshmem_malloc": (c_void_p, [c_size_t]),
    "rocshmem_align": (c_void_p, [c_size_t, c_size_t]),
    "rocshmem_free": (None, [c_void_p]),
    "rocshmem_ptr": (c_void_p, [c_void_p, c_int]),
    "rocshmem_putmem": (None, [c_void_p, c_void_p, c_size_t, c_int]),
    "rocshmem_getmem": (None, [c_void_p, c_void_p, c_size_t, c_int]),
    "rocshmem_putmem_nbi": (None, [c_void_p, c_void_p, c_size_t, c_int]),
    "rocshmem_getmem_nbi": (None, [c_void_p, c_void_p, c_size_t, c_int]),
    "rocshmem_putmem_on_stream": (None, [c_void_p, c_void_p, c_size_t, c_int, c_void_p]),
    "rocshmem_getmem_on_stream": (None, [c_void_p, c_void_p, c_size_t, c_int, c_void_p]),
    "rocshmem_putmem_signal_on_stream": (
        None, [c_void_p, c_void_p, c_size_t, c_void_p, ctypes.c_uint64, c_int, c_int, c_void_p]),
    "rocshmem_signal_wait_until_on_stream": (None, [c_void_p, c_int, ctypes.c_uint64, c_void_p]),
    "rocshmem_signal_set_on_stream": (None, [c_void_p, ctypes.c_uint64, c_int, c_void_p]),
    "rocshmem_signal_add_on_stream": (None, [c_void_p, ctypes.c_uint64, c_int, c_void_p]),
    "rocshmem_quiet_on_stream": (None, [c_void_p]),
    "rocshmem_barrier_all_on_stream": (None, [c_void_p]),
    "rocshmem_barrier_on_stream": (None, [c_void_p, c_void_p]),
    "rocshmem_sync_all_on_stream": (None, [c_void_p]),
    "rocshmem_team_sync_on_stream": (None, [c_void_p, c_void_p]),
    "rocshmem_broadcastmem_on_stream": (None, [c_void_p, c_void_p, c_void_p, c_size_t, c_int, c_void_p]),
    "rocshmem_alltoallmem_on_stream": (None, [c_void_p, c_void_p, c_void_p, c_size_t, c_void_p]),
    "rocshmem_host_stream_create": (c_int, [ctypes.POINTER(c_void_p)]),
    "rocshmem_host_stream_synchronize": (c_int, [c_void_p]),
    "rocshmem_host_stream_destroy": (c_int, [c_void_p]),
    "rocshmem_barrier_all": (None, []),
    "rocshmem_barrier": (None, [c_void_p]),
    "rocshmem_sync_all": (None, []),
    "rocshmem_team_sync": (None, [c_void_p]),
    "rocshmem_quiet": (None, []),
    "rocshmem_fence": (None, []),
    "rocshmem_team_split_strided": (c_int, [c_void_p, c_int, c_int, c_int, c_void_p, ctypes.c_long,
                                            ctypes.POINTER(c_void_p)]),
    "rocshmem_team_split_2d": (c_int, [c_void_p, c_int, c_void_p, ctypes.c_long, ctypes.POINTER(c_void_p),
                                       c_void_p, ctypes.c_long, ctypes.POINTER(c_void_p)]),
    "rocshmem_team_destroy": (None, [c_void_p]),
    "rocshmem_team_translate_pe": (c_int, [c_void_p, c_int, c_void_p]),
    "rocshmem_team_n_pes": (c_int, [c_void_p]),
    "rocshmem_team_my_pe": (c_int, [c_void_p]),
    "rocshmem_hipmodule_init": (c_int, [c_void_p, c_void_p]),
}

_lock = threading.Lock()
_lib: Optional[ctypes.CDLL] = None
_fns: Dict[str, Any] = {}
_thread = threading.local()


def package_lib_dir() -> str:
    """The folder of the libraries bundled with the package (``rocshmem/lib``)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib")


def library_path() -> str:
    """The librocshmem this process uses: ``ROCSHMEM_LIBRARY`` when set, else the bundled one."""
    env = os.environ.get("ROCSHMEM_LIBRARY")
    if env:
        return env
    return os.path.join(package_lib_dir(), "librocshmem.so")


def lib() -> ctypes.CDLL:
    """librocshmem, loaded on first use."""
    global _lib
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is None:
            path = library_path()
            where = "ROCSHMEM_LIBRARY" if os.environ.get("ROCSHMEM_LIBRARY") else "the package"
            if not os.path.isfile(path):
                raise RocshmemError(
                    f"rocshmem: PE ?: error: loading the library: {path} (from {where}) does not exist; "
                    "set ROCSHMEM_LIBRARY to a librocshmem.so, or reinstall the package")
            try:
                loaded = ctypes.CDLL(os.path.abspath(path))
            except OSError as e:
                raise RocshmemError(f"rocshmem: PE ?: error: loading the library: {path} (from {where}): {e}") from None
            if not hasattr(loaded, "rocshmem_last_error"):
                raise RocshmemError(
                    f"rocshmem: PE ?: error: loading the library: {path} (from {where}) has no rocshmem_last_error: "
                    "it is not this project's librocshmem, or an older one; use the library of this package's version")
            _lib = loaded
    return _lib


def fn(name: str, restype: Any = None, argtypes: Optional[Sequence[Any]] = None) -> Any:
    """The C function `name` with its signature (from the table above, or as given for the
    typed families), cached. A name the library does not export raises AttributeError."""
    f = _fns.get(name)
    if f is not None:
        return f
    f = getattr(lib(), name)
    if name in _SIGNATURES:
        restype, argtypes = _SIGNATURES[name]
    f.restype = restype
    f.argtypes = list(argtypes or [])
    _fns[name] = f
    return f


def has(name: str) -> bool:
    """Whether the library exports `name`."""
    return hasattr(lib(), name)


def take_error() -> Optional[str]:
    """The library's last error on this thread since the previous look, or None."""
    msg = fn("rocshmem_last_error")()
    return msg.decode(errors="replace") if msg else None


def _errors_to_caller() -> None:
    """This thread's library errors come back as exceptions only, not also on stderr: each is
    shown once (the library prints a line it was to hand over but that nobody took, should the
    process end first)."""
    if getattr(_thread, "errors_to_caller", False):
        return
    _thread.errors_to_caller = True
    if has("rocshmemi_errors_to_caller"):
        f = fn("rocshmemi_errors_to_caller", c_int, [c_int])
        f(1)


def call(name: str, *args: Any, restype: Any = None, argtypes: Optional[Sequence[Any]] = None,
         fails: Optional[Callable[[Any], bool]] = None) -> Any:
    """Calls C function `name`; raises RocshmemError if the library reported an error during
    the call (or `fails(result)` says the result is a failure)."""
    f = fn(name, restype, argtypes)
    _errors_to_caller()
    stale = take_error()  # an error of a call made outside this function (ctypes used directly)
    if stale is not None:
        sys.stderr.write(stale + "\n")
    result = f(*args)
    msg = take_error()
    if msg is not None:
        raise RocshmemError(msg)
    if fails is not None and fails(result):
        raise RocshmemError(f"rocshmem: PE ?: error: {name}: failed (returned {result!r}) without a message")
    return result


def error(call_name: str, what: str) -> RocshmemError:
    """A RocshmemError in the library's format, for checks made in Python."""
    pe = -1
    if _lib is not None:
        try:
            if fn("rocshmemi_initialized")():
                pe = fn("rocshmem_my_pe")()
        except Exception:  # noqa: BLE001 - only the prefix depends on it
            pe = -1
    return RocshmemError(f"rocshmem: PE {pe if pe >= 0 else '?'}: error: {call_name}: {what}")
