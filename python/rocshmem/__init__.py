"""rocSHMEM from Python: OpenSHMEM-style communication between processes (PEs) over a symmetric
heap, on the host platform (numpy arrays) and on GPUs (GPU arrays, torch tensors, streams,
Triton device functions in ``rocshmem.triton``).

    import rocshmem
    rocshmem.init()                          # under rocshmem-run -n N or mpirun
    a = rocshmem.array(1024, "int64")        # symmetric: every PE allocates the same
    rocshmem.put(a, a, (rocshmem.my_pe() + 1) % rocshmem.n_pes())
    rocshmem.barrier_all()
    rocshmem.free(a)
    rocshmem.finalize()

The bindings call ``librocshmem.so`` through ctypes: the one bundled with the package, or the
one named by ``ROCSHMEM_LIBRARY``. A failed call raises :class:`RocshmemError` with the
library's one-line message. See docs/python.md of the project.
"""

from . import _table
from ._arrays import DeviceArray, DType, dtype_of
from ._core import (
    SIGNAL_ADD,
    SIGNAL_SET,
    TEAM_SHARED,
    TEAM_WORLD,
    HostStream,
    Team,
    alltoall,
    array,
    atomic_add,
    atomic_compare_swap,
    atomic_fetch,
    atomic_fetch_add,
    atomic_fetch_and,
    atomic_fetch_inc,
    atomic_fetch_or,
    atomic_fetch_xor,
    atomic_inc,
    atomic_set,
    atomic_swap,
    barrier_all,
    broadcast,
    fcollect,
    fence,
    finalize,
    free,
    get,
    get_nbi,
    get_uniqueid,
    info,
    init,
    init_from_torch,
    initialized,
    is_gpu_array,
    my_pe,
    n_pes,
    put,
    put_nbi,
    put_signal,
    quiet,
    reduce,
    reduce_scatter,
    signal_add,
    signal_set,
    signal_wait_until,
    stream_handle,
    sync_all,
    tensor,
    test,
    wait_until,
)
from ._lib import RocshmemError, library_path

__version__ = _table.VERSION

CMP_EQ, CMP_NE, CMP_GT = _table.ROCSHMEM_CMP_EQ, _table.ROCSHMEM_CMP_NE, _table.ROCSHMEM_CMP_GT
CMP_GE, CMP_LT, CMP_LE = _table.ROCSHMEM_CMP_GE, _table.ROCSHMEM_CMP_LT, _table.ROCSHMEM_CMP_LE

__all__ = [
    "CMP_EQ", "CMP_GE", "CMP_GT", "CMP_LE", "CMP_LT", "CMP_NE", "SIGNAL_ADD", "SIGNAL_SET", "TEAM_SHARED",
    "TEAM_WORLD", "DType", "DeviceArray", "HostStream", "RocshmemError", "Team", "alltoall", "array",
    "atomic_add", "atomic_compare_swap", "atomic_fetch", "atomic_fetch_add", "atomic_fetch_and", "atomic_fetch_inc",
    "atomic_fetch_or", "atomic_fetch_xor", "atomic_inc", "atomic_set", "atomic_swap", "barrier_all", "broadcast",
    "dtype_of", "fcollect", "fence", "finalize", "free", "get", "get_nbi", "get_uniqueid", "info", "init", "init_from_torch",
    "initialized", "is_gpu_array", "library_path", "my_pe", "n_pes", "put", "put_nbi", "put_signal", "quiet",
    "reduce", "reduce_scatter", "signal_add", "signal_set", "signal_wait_until", "stream_handle", "sync_all", "tensor", "test",
    "wait_until", "__version__",
]
