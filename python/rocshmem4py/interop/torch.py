"""PyTorch helpers of rocshmem4py (upstream's ``rocshmem4py.interop.torch``): symmetric
tensors, put/get, barrier, alltoall and broadcast, heap bases. GPU tensors on GPUs; on the host
platform (no GPU) CPU tensors, and ``stream=None`` means "complete on return" (a CPU tensor has
no stream); a :class:`rocshmem.HostStream` may be given instead. Requires torch.

As upstream: :func:`create_tensor` is collective, and the memory is freed by
:func:`free_tensor` (collective, explicit) or when the last reference to the tensor goes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Sequence

import rocshmem
import rocshmem4py
from rocshmem import _arrays, _core

if TYPE_CHECKING:
    import torch


def _torch() -> Any:
    try:
        import torch
    except ImportError:
        raise ImportError("PyTorch is required for rocshmem4py.interop.torch.") from None
    return torch


def _over(buf: "rocshmem4py.SymmetricBuffer", shape: Sequence[int], dtype: Any) -> "torch.Tensor":
    """A tensor of `shape`/`dtype` over buf's memory, tied to buf's allocation."""
    torch = _torch()
    dt = _arrays.dtype_of(dtype)
    device = buf._device or (_arrays.KDL_CPU, 0)
    t = torch.utils.dlpack.from_dlpack(_core._TensorSource(buf.ptr, tuple(int(n) for n in shape), dt, device))
    if buf._allocation is not None:
        _arrays.tag_torch(t, buf._allocation)
    return t


def create_tensor(shape: Sequence[int], dtype: "torch.dtype") -> "torch.Tensor":
    """Collective: a symmetric tensor of ``shape`` and ``dtype`` (zeros), GPU memory on GPUs and
    a CPU tensor on the host platform; ``tensor._symm_buf`` is its :class:`SymmetricBuffer`."""
    torch = _torch()
    nbytes = torch.Size(shape).numel() * dtype.itemsize
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    buf = rocshmem4py.rocshmem_create_buffer(nbytes)
    t = _over(buf, shape, dtype)
    t._symm_buf = buf
    setattr(t, "__symm_tensor__", True)
    return t


def get_peer_tensor(tensor: "torch.Tensor", peer: int) -> "torch.Tensor":
    """A tensor over ``peer``'s copy of a symmetric tensor, for direct loads and stores
    (``rocshmem_ptr``; RuntimeError where the peer's memory is not reachable that way)."""
    if not getattr(tensor, "__symm_tensor__", False):
        raise ValueError("tensor is not a symmetric tensor (missing __symm_tensor__ attribute). "
                         "Use create_tensor() to allocate it.")
    if peer == rocshmem4py.rocshmem_my_pe():
        return tensor
    ptr = rocshmem4py.rocshmem_ptr(tensor.data_ptr(), peer)
    if ptr == 0:
        raise RuntimeError(f"rocshmem_ptr returned NULL for peer {peer}: its memory is not reachable by loads and "
                           "stores from this PE; use rocshmem_getmem to copy it")
    buf = rocshmem4py.SymmetricBuffer(tensor.nbytes, ptr=ptr, own_data=False)
    t = _over(buf, tuple(tensor.shape), tensor.dtype)
    t._symm_buf = buf
    return t


def free_tensor(tensor: "torch.Tensor") -> None:
    """Frees the memory of a tensor from :func:`create_tensor` (collective). The tensor must
    not be used afterwards (this package's calls refuse it)."""
    buf = getattr(tensor, "_symm_buf", None)
    if buf is None:
        raise ValueError("tensor is not backed by rocSHMEM symmetric memory. Was it allocated with create_tensor()?")
    buf.free()
    tensor._symm_buf = None


def _stream(stream: Any, *tensors: "torch.Tensor") -> Optional[Any]:
    """The stream to enqueue on: the one given, torch's current one for GPU tensors, None
    (complete on return) for CPU tensors."""
    if stream is not None:
        return stream
    if any(getattr(t, "is_cuda", False) for t in tensors):
        return _torch().cuda.current_stream()
    return None


def _nbytes_equal(dst: "torch.Tensor", src: "torch.Tensor") -> None:
    if dst.nbytes != src.nbytes:
        raise ValueError(f"dst.nbytes ({dst.nbytes}) must match src.nbytes ({src.nbytes})")


def put(dst: "torch.Tensor", src: "torch.Tensor", peer: int, stream: Any = None) -> None:
    """Copies local ``src`` into symmetric ``dst`` on ``peer``: stream-ordered on ``stream``
    (default torch's current stream) for GPU tensors, complete on return for CPU tensors."""
    _nbytes_equal(dst, src)
    rocshmem.put(dst.view(-1).view(_torch().uint8), src.reshape(-1).view(_torch().uint8), peer,
                 stream=_stream(stream, dst, src))


def get(dst: "torch.Tensor", src: "torch.Tensor", peer: int, stream: Any = None) -> None:
    """Copies symmetric ``src`` of ``peer`` into local ``dst`` (as :func:`put`)."""
    _nbytes_equal(dst, src)
    rocshmem.get(dst.view(-1).view(_torch().uint8), src.reshape(-1).view(_torch().uint8), peer,
                 stream=_stream(stream, dst, src))


def barrier_all(stream: Any = None) -> None:
    """A barrier over every PE: on ``stream`` (default torch's current stream) where there is a
    GPU, complete on return on the host platform."""
    torch = _torch()
    if stream is None and torch.cuda.is_available():
        stream = torch.cuda.current_stream()
    rocshmem.barrier_all(stream=stream)


def get_heap_bases(tensor: "torch.Tensor") -> "torch.Tensor":
    """An int64 tensor (on the tensor's device) of ``rocshmem_ptr(tensor, pe)`` for every PE
    (0 where a PE's memory is not reachable by loads and stores)."""
    if not getattr(tensor, "__symm_tensor__", False):
        raise ValueError("tensor is not a symmetric tensor (missing __symm_tensor__ attribute). "
                         "Use create_tensor() to allocate it.")
    bases = rocshmem4py.rocshmem_get_heap_bases(tensor.data_ptr())
    return _torch().tensor(bases, dtype=_torch().int64, device=tensor.device)


def _team(team: int) -> rocshmem.Team:
    if team == rocshmem4py.ROCSHMEM_TEAM_WORLD:
        return rocshmem.TEAM_WORLD
    if team == rocshmem4py.ROCSHMEM_TEAM_INVALID:
        raise ValueError("team is ROCSHMEM_TEAM_INVALID (this PE is not a member)")
    return rocshmem.Team(team, f"team {team:#x}")


def alltoall(team: int, dst: "torch.Tensor", src: "torch.Tensor", stream: Any = None) -> None:
    """All-to-all over ``team`` (a handle; ``ROCSHMEM_TEAM_WORLD`` = 0): ``src`` holds one block
    per member, block ``j`` goes to block ``me`` of ``dst`` on member ``j``."""
    _nbytes_equal(dst, src)
    team_size = rocshmem4py.rocshmem_team_n_pes(team)
    if team_size <= 0:
        raise ValueError(f"team has invalid size: {team_size}")
    if src.nbytes % team_size != 0:
        raise ValueError(f"src.nbytes ({src.nbytes}) must be divisible by team size ({team_size})")
    rocshmem.alltoall(dst.view(-1).view(_torch().uint8), src.view(-1).view(_torch().uint8),
                      _team(team), stream=_stream(stream, dst, src))


def broadcast(team: int, dst: "torch.Tensor", src: "torch.Tensor", pe_root: int, stream: Any = None) -> None:
    """Broadcast over ``team``: ``src`` of member ``pe_root`` (numbered in the team) into ``dst``
    of every member."""
    _nbytes_equal(dst, src)
    rocshmem.broadcast(dst.view(-1).view(_torch().uint8), src.view(-1).view(_torch().uint8), pe_root,
                       _team(team), stream=_stream(stream, dst, src))
