"""The MPI engine under torch.distributed's process groups (through mpi4py).

Why this shape:
- MPI is initialised with MPI_THREAD_MULTIPLE (MPICH grants it) because two
  kinds of threads call it: each process group owns ONE communication
  thread that runs its collectives in the order they were issued (sync ops
  are submitted and waited for, so every rank's group sees one sequence and
  DDP's async all-reduces overlap backward), while point-to-point requests
  (isend/irecv) are posted from the caller and tested when waited for, so a
  pending recv never blocks a collective queued behind it.
- Tensors reach MPI as numpy views of their own memory (zero copy; bfloat16
  as raw uint16); a non-contiguous tensor is packed into a contiguous copy
  and unpacked afterwards. mpi4py releases the GIL around every blocking
  MPI call it makes (its calls are `with nogil`), so Python threads and the
  autograd engine run while MPI works.
- MPI has no float16/bfloat16 arithmetic: those reductions upcast to float32,
  reduce, and round back (exactly gloo's result for 2 ranks, and no worse
  for more).
"""
import ctypes
import os
import threading

import numpy as np

import cthtorch

_MPI = None
_init_lock = threading.Lock()


def mpi():
    """mpi4py's MPI module, initialised on first use (thread level MULTIPLE)."""
    global _MPI
    if _MPI is None:
        with _init_lock:
            if _MPI is None:
                import mpi4py
                mpi4py.rc.initialize = False   # we choose the thread level
                mpi4py.rc.finalize = False     # and when (whether) to finalize
                from mpi4py import MPI
                if not MPI.Is_initialized():
                    MPI.Init_thread(MPI.THREAD_MULTIPLE)
                if MPI.Query_thread() < MPI.THREAD_MULTIPLE:
                    raise RuntimeError("cthtorch.distributed needs an MPI library that provides MPI_THREAD_MULTIPLE "
                                       "(got level %d)" % MPI.Query_thread())
                _MPI = MPI
    return _MPI


def available():
    import importlib.util
    return importlib.util.find_spec("mpi4py") is not None


def launched_by_mpi():
    """This process was started by an MPI launcher (mpiexec, srun, ...)."""
    return any(k in os.environ for k in ("PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_FD",
                                          "HYDI_CONTROL_FD", "PMI_PORT"))


# ---------------------------------------------------------------- buffers

_NP_DTYPES = None


def _itemsize(dtype):
    return cthtorch.empty(0, dtype=dtype).element_size()


def as_array(t):
    """A 1-d numpy view of contiguous tensor t's memory (no copy)."""
    t = t.detach()
    if t.dtype is cthtorch.bfloat16:
        n = t.numel()
        if n == 0:
            return np.empty(0, np.uint16)
        # keep t alive as long as the view: numpy holds the ctypes array, the
        # ctypes array holds t through _owner
        buf = (ctypes.c_uint16 * n).from_address(t.data_ptr())
        buf._owner = t
        return np.ctypeslib.as_array(buf)
    return t.numpy().reshape(-1)


def as_bytes(t):
    return as_array(t).view(np.uint8)


class Packed:
    """t's contents in contiguous memory: t itself when it is contiguous,
    else a packed copy that unpack() writes back into t."""

    def __init__(self, t, load=True):
        self.t = t
        self.direct = t.is_contiguous()
        self.buf = t if self.direct else (t.detach().contiguous() if load else cthtorch.empty(t.shape, dtype=t.dtype))

    def unpack(self):
        if not self.direct:
            with cthtorch.no_grad():
                self.t.copy_(self.buf)


def wrap_mpi_error(e):
    return RuntimeError("MPI error: %s" % (e.Get_error_string() if hasattr(e, "Get_error_string") else e))
