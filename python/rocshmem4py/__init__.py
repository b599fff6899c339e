"""rocshmem4py: upstream rocSHMEM's Python API, over this project's library.

A program written for upstream's ``rocshmem4py`` runs unchanged with this package installed:
the same module names (``rocshmem4py``, ``rocshmem4py.interop.torch``, and the flat extension
module ``_rocshmem4py``), functions, arguments, results and constants, under ``torchrun``,
``mpirun`` and ``rocshmem-run``. Underneath is the ``rocshmem`` package (ctypes over
``librocshmem.so``), so the host platform works too: there symmetric memory is host memory,
buffers expose ``__array_interface__`` instead of ``__cuda_array_interface__``, and the torch
helpers make CPU tensors. What differs from upstream, name by name: docs/python.md of the
project ("rocshmem4py").
"""

from __future__ import annotations

import ctypes
import os
import socket
from typing import Any, Dict, List, Optional, Set, Tuple

import rocshmem
from rocshmem import _arrays, _core

from . import _raw
from ._raw import *  # noqa: F401,F403 - the flat functions and constants, as upstream re-exports them
from ._raw import (
    AMO_NAMES,
    ROCSHMEM_SUCCESS,
    TeamConfig,
    hip_device_synchronize,
    rocshmem_barrier_all,
    rocshmem_finalize,
    rocshmem_get_uniqueid,
    rocshmem_init_attr,
    rocshmem_my_pe,
    rocshmem_n_pes,
    rocshmem_ptr,
    rocshmem_team_n_pes,
)

__version__ = rocshmem.__version__

ROCSHMEM_TEAM_WORLD = 0
ROCSHMEM_TEAM_INVALID = -1
_SPECIAL_TEAM_HANDLES = {ROCSHMEM_TEAM_INVALID, ROCSHMEM_TEAM_WORLD}

# ---------------------------------------------------------------------------------------------
# Teams: splits are tracked, so that finalize_with_torch / finalize_with_mpi destroy the ones a
# program forgot (collectively, in the same order on every PE).

_live_teams: Set[int] = set()


def rocshmem_team_split_strided(parent: int, start: int, stride: int, size: int,
                                config: Optional[TeamConfig] = None, mask: int = 0) -> Tuple[int, int]:
    """Splits ``parent`` into the PEs ``start + k*stride`` (``k < size``); returns
    ``(status, team)``, with ``team`` = ``ROCSHMEM_TEAM_INVALID`` (-1) on PEs outside it."""
    status, team = _raw.rocshmem_team_split_strided(parent, start, stride, size, config, mask)
    if team == 0:
        return status, ROCSHMEM_TEAM_INVALID
    if status == ROCSHMEM_SUCCESS and team not in _SPECIAL_TEAM_HANDLES:
        _live_teams.add(team)
    return status, team


def rocshmem_team_destroy(team: int) -> None:
    """Destroys a team made by :func:`rocshmem_team_split_strided` (the sentinels: no-op)."""
    if team in _SPECIAL_TEAM_HANDLES:
        return
    _raw.rocshmem_team_destroy(team)
    _live_teams.discard(team)


def _drain_live_teams() -> None:
    for team in sorted(_live_teams):
        _raw.rocshmem_team_destroy(team)
    _live_teams.clear()


# ---------------------------------------------------------------------------------------------
# Symmetric memory without a framework

def set_hip_device_from_env() -> None:
    """Makes GPU ``LOCAL_RANK`` (or ``OMPI_COMM_WORLD_LOCAL_RANK``) current before a raw
    ``rocshmem_init()`` (HIP, or CUDA on NVIDIA). Nothing to do on the host platform."""
    local_rank = os.environ.get("LOCAL_RANK") or os.environ.get("OMPI_COMM_WORLD_LOCAL_RANK")
    if local_rank is None:
        return
    for name in ("libamdhip64.so", "libamdhip64.so.6"):
        try:
            ctypes.CDLL(name).hipSetDevice(int(local_rank))
            return
        except OSError:
            continue
    try:
        import torch

        if torch.cuda.is_available():
            torch.cuda.set_device(int(local_rank) % torch.cuda.device_count())
    except ImportError:
        pass


_set_hip_device_from_env = set_hip_device_from_env


class SymmetricBuffer:
    """``nbytes`` of symmetric memory (``rocshmem_malloc``; collective), freed by :meth:`free`
    or when the buffer is collected (as upstream: every PE must drop it at the same point, so
    call :meth:`free` explicitly). GPU memory exposes ``__cuda_array_interface__`` (bytes,
    ``<i1``), host memory (the host platform) ``__array_interface__``. ``ptr=`` with
    ``own_data=False`` wraps memory owned elsewhere (a peer's, from ``rocshmem_ptr``)."""

    def __init__(self, size: int, *, ptr: Optional[int] = None, dtype: Any = None, own_data: bool = True):
        self.size = self.nbytes = int(size)
        self.own_data = own_data
        self._freed = False
        self._allocation: Optional[_arrays.Allocation] = None
        if ptr is not None:
            self.ptr = int(ptr)
            self._device = _arrays.device_of(self.ptr)
        else:
            hip_device_synchronize()
            p, device, alloc = _core._malloc("rocshmem4py.SymmetricBuffer", (self.nbytes,),
                                             _arrays.dtype_of("uint8"))
            self.ptr, self._device, self._allocation = p, device, alloc
        if dtype is None:
            try:
                import torch

                dtype = torch.uint8
            except ImportError:
                pass
        self.dtype = dtype

    def _iface(self) -> Dict[str, Any]:
        if self._freed:
            raise _arrays.error("rocshmem4py.SymmetricBuffer", f"buffer {self.ptr:#x} was freed")
        return {"data": (self.ptr, False), "shape": (self.nbytes,), "typestr": "<i1", "strides": None, "version": 3}

    @property
    def __cuda_array_interface__(self) -> Dict[str, Any]:
        if self._device is None:
            raise AttributeError("this SymmetricBuffer is host memory (the host platform): it has "
                                 "__array_interface__, not __cuda_array_interface__")
        return self._iface()

    @property
    def __array_interface__(self) -> Dict[str, Any]:
        if self._device is not None:
            raise AttributeError("this SymmetricBuffer is GPU memory: it has __cuda_array_interface__")
        return self._iface()

    def __del__(self) -> None:
        try:
            if self.own_data and not self._freed and rocshmem.initialized():
                self.free()
        except Exception:  # noqa: BLE001 - never raise from a destructor
            pass

    def free(self) -> None:
        """Frees the memory (collective; a second call does nothing)."""
        if self._freed:
            return
        self._freed = True
        if not self.own_data:
            return
        hip_device_synchronize()
        if self._allocation is not None and not self._allocation.live:
            return  # gone with rocshmem_finalize
        _raw.call("rocshmem_free", ctypes.c_void_p(self.ptr))
        if self._allocation is not None:
            self._allocation.kill()

    def get_remote_ptr(self, pe: int) -> int:
        return rocshmem_ptr(self.ptr, pe)

    def put(self, source_ptr: int, nelems: int, pe: int) -> None:
        _raw.rocshmem_putmem(self.ptr, source_ptr, nelems, pe)

    def get(self, source_ptr: int, nelems: int, pe: int) -> None:
        _raw.rocshmem_getmem(self.ptr, source_ptr, nelems, pe)

    def __int__(self) -> int:
        return self.ptr

    def __repr__(self) -> str:
        status = "freed" if self._freed else f"size={self.size}"
        return f"SymmetricBuffer(ptr=0x{self.ptr:x}, {status})"


def rocshmem_create_buffer(nbytes: int) -> SymmetricBuffer:
    """Collective: ``nbytes`` of symmetric memory as a :class:`SymmetricBuffer`."""
    return SymmetricBuffer(nbytes)


def rocshmem_get_peer_ptr_table(ptr: int) -> List[int]:
    """``rocshmem_ptr(ptr, pe)`` for every PE (0 where a PE's memory cannot be loaded from)."""
    return [rocshmem_ptr(ptr, pe) for pe in range(rocshmem_n_pes())]


def rocshmem_get_heap_bases(ptr: int) -> List[int]:
    """The same as :func:`rocshmem_get_peer_ptr_table` (upstream's older name)."""
    return rocshmem_get_peer_ptr_table(ptr)


def rocshmem_get_peer_buffer(buf: SymmetricBuffer, peer: int) -> SymmetricBuffer:
    """A non-owning buffer over ``peer``'s copy of ``buf`` (``rocshmem_ptr``); RuntimeError
    where the peer's memory cannot be loaded from."""
    if peer == rocshmem_my_pe():
        return buf
    ptr = rocshmem_ptr(buf.ptr, peer)
    if ptr == 0:
        raise RuntimeError(f"rocshmem_ptr returned NULL for peer {peer}: its memory is not reachable by loads and "
                           "stores from this PE; copy it with rocshmem_getmem instead")
    return SymmetricBuffer(buf.nbytes, ptr=ptr, own_data=False)


# ---------------------------------------------------------------------------------------------
# Init and finalize

_rocshmem_initialized = False


def _launcher_rank_size() -> Optional[Tuple[int, int, int]]:
    """(rank, size, local rank) from rocshmem-run or an MPI launcher, or None."""
    env = os.environ
    for r, n, lr in (("ROCSHMEM_RUN_RANK", "ROCSHMEM_RUN_NRANKS", "ROCSHMEM_RUN_RANK"),
                     ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"),
                     ("PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID")):
        if r in env and n in env:
            return int(env[r]), int(env[n]), int(env.get(lr, env[r]))
    return None


def init_rocshmem_by_uniqueid(group: Any = None) -> None:
    """Initialises rocSHMEM over a torch.distributed group: its rank 0 makes the unique id,
    the group shares it, every member calls ``rocshmem_init_attr``."""
    import torch.distributed as dist

    rank, nranks = dist.get_rank(group), dist.get_world_size(group)
    obj: List[Any] = [rocshmem_get_uniqueid() if rank == 0 else None]
    src = 0 if group is None else dist.get_global_rank(group, 0)
    dist.broadcast_object_list(obj, src=src, group=group)
    rocshmem_init_attr(rank, nranks, obj[0])
    dist.barrier(group=group)


def _torch_rendezvous_over_rocshmem(backend: str) -> None:
    """Under rocshmem-run or mpirun with no MASTER_PORT: rocSHMEM is initialised through the
    launcher, then PE 0 picks a free port and tells the others (a broadcast), and
    torch.distributed starts on it; no fixed port that two jobs on one node would share."""
    import torch
    import torch.distributed as dist

    _core.init()
    me, n = _core.my_pe(), _core.n_pes()
    # torch tensors over the heap: CPU tensors on the host platform, CUDA tensors where the heap
    # is GPU memory (a DeviceArray there takes no item assignment); written and read through torch.
    cell = _core.tensor(64, torch.uint8)
    src = _core.tensor(64, torch.uint8)
    if me == 0:
        host = os.environ.get("MASTER_ADDR") or os.environ.get("ROCSHMEM_MASTER_ADDR")
        if host is None:
            host = "127.0.0.1" if "ROCSHMEM_RUN_RANK" in os.environ else socket.gethostbyname(socket.getfqdn())
        with socket.socket() as s:
            s.bind(("", 0))
            port = s.getsockname()[1]
        text = f"{host} {port}".encode()
        src[:len(text)] = torch.tensor(list(text), dtype=torch.uint8)
        if src.is_cuda:
            torch.cuda.synchronize()  # the copy is on torch's stream; the broadcast reads src now
    _core.broadcast(cell, src, 0)
    host, port_text = bytes(cell.cpu().tolist()).rstrip(b"\0").decode().split()
    _core.free(src)
    _core.free(cell)
    dist.init_process_group(backend=backend, init_method=f"tcp://{host}:{port_text}", rank=me, world_size=n)


def init_with_torch(group: Any = None, backend: str = "cpu:gloo,cuda:nccl", init_method: Optional[str] = None) -> None:
    """Initialises torch.distributed (if the program has not) and rocSHMEM over it.

    - ``torchrun``: ``RANK``, ``WORLD_SIZE``, ``MASTER_ADDR``/``MASTER_PORT`` from it;
    - ``mpirun`` / ``rocshmem-run``: rank and size from the launcher; with ``MASTER_PORT`` (or
      ``ROCSHMEM_MASTER_PORT``) set, torch.distributed meets there, otherwise rocSHMEM starts
      through the launcher first and PE 0 hands out a free port;
    - a process group made by the program: used as it is (``group``: a subgroup).

    On GPUs the device ``LOCAL_RANK`` is made current first; without GPUs the backend is gloo."""
    global _rocshmem_initialized
    try:
        import torch
        import torch.distributed as dist
    except ImportError:
        raise ImportError("PyTorch is required for init_with_torch().") from None
    cuda = torch.cuda.is_available()
    launcher = _launcher_rank_size()
    local_rank = int(os.environ.get("LOCAL_RANK", launcher[2] if launcher else 0))
    if cuda:
        torch.cuda.set_device(local_rank % torch.cuda.device_count())
        torch.empty(1, device="cuda")  # the context the library takes as the current device's
    if not cuda:
        backend = "gloo"
    if not dist.is_initialized():
        port = os.environ.get("MASTER_PORT") or os.environ.get("ROCSHMEM_MASTER_PORT")
        if "RANK" not in os.environ and launcher is not None and port is None and init_method is None:
            _torch_rendezvous_over_rocshmem(backend)
            _rocshmem_initialized = True
            return
        if launcher is not None:
            os.environ.setdefault("RANK", str(launcher[0]))
            os.environ.setdefault("WORLD_SIZE", str(launcher[1]))
            os.environ.setdefault("LOCAL_RANK", str(launcher[2]))
        os.environ.setdefault("RANK", "0")
        os.environ.setdefault("WORLD_SIZE", "1")
        os.environ.setdefault("MASTER_ADDR", os.environ.get("ROCSHMEM_MASTER_ADDR", "127.0.0.1"))
        if port is not None:
            os.environ.setdefault("MASTER_PORT", port)
        elif os.environ["WORLD_SIZE"] == "1":
            with socket.socket() as s:
                s.bind(("", 0))
                os.environ["MASTER_PORT"] = str(s.getsockname()[1])
        else:
            os.environ.setdefault("MASTER_PORT", "29500")
        try:
            dist.init_process_group(backend=backend, init_method=init_method or "env://")
        except Exception as e:  # noqa: BLE001 - reworded, as upstream does
            raise RuntimeError(f"Failed to initialize torch.distributed: {e}\n"
                               "Ensure RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT are set.") from e
    init_rocshmem_by_uniqueid(group)
    _rocshmem_initialized = True


def init_with_mpi(mpi_comm: Any = None) -> None:
    """Initialises rocSHMEM over an mpi4py communicator (default ``MPI.COMM_WORLD``): its rank 0
    makes the unique id, ``comm.bcast`` shares it. Launch with an MPI launcher."""
    global _rocshmem_initialized
    try:
        from mpi4py import MPI
    except ImportError:
        raise ImportError("mpi4py is required for init_with_mpi().") from None
    comm = MPI.COMM_WORLD if mpi_comm is None else mpi_comm
    set_hip_device_from_env()
    rank, size = comm.Get_rank(), comm.Get_size()
    launcher_size = os.environ.get("WORLD_SIZE") or os.environ.get("OMPI_COMM_WORLD_SIZE")
    if mpi_comm is None and launcher_size is not None and int(launcher_size) != size:
        raise RuntimeError(f"MPI.COMM_WORLD has size {size} but the launcher reports WORLD_SIZE={launcher_size}: "
                           "not started by an MPI launcher? Use init_with_torch() under torchrun, or mpirun here.")
    uid = comm.bcast(rocshmem_get_uniqueid() if rank == 0 else None, root=0)
    rocshmem_init_attr(rank, size, uid)
    comm.Barrier()
    _rocshmem_initialized = True


def finalize_with_mpi() -> None:
    """Destroys the teams left, waits for the device and every PE, finalises rocSHMEM (MPI is
    the program's to finalise)."""
    global _rocshmem_initialized
    if not _rocshmem_initialized:
        return
    hip_device_synchronize()
    _drain_live_teams()
    rocshmem_barrier_all()
    rocshmem_finalize()
    _rocshmem_initialized = False


def finalize_with_torch() -> None:
    """Waits for the device, destroys the teams left, meets every PE (rocSHMEM's barrier and
    torch.distributed's), finalises rocSHMEM, then destroys the process group."""
    global _rocshmem_initialized
    if not _rocshmem_initialized:
        return
    try:
        import torch
        import torch.distributed as dist
    except ImportError:
        return
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    _drain_live_teams()
    rocshmem_barrier_all()
    if dist.is_initialized():
        dist.barrier()
    rocshmem_finalize()
    _rocshmem_initialized = False
    if dist.is_initialized():
        dist.destroy_process_group()


_HOST_API_BINDINGS = tuple(sorted(n for n in globals() if n.startswith(("rocshmem_", "ROCSHMEM_"))))
_AMO_NAMES = tuple(AMO_NAMES)

__all__ = [
    "__version__", *_HOST_API_BINDINGS, "TeamConfig", "SymmetricBuffer", "hip_device_synchronize",
    "init_rocshmem_by_uniqueid", "init_with_mpi", "init_with_torch", "finalize_with_mpi", "finalize_with_torch",
    "set_hip_device_from_env",
]
