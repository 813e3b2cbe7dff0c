# The Cython glue of the data-movement ops (ops_movement.py, csrc/movement/): fills each op's C
# state at prepare and hands it to the core as an _x86.Execution. Nothing here runs per inference.
from libc.stdint cimport int32_t

from mnn_core.abi cimport mnn_tensor

from mnn_x86.family cimport Execution, _execution, attach_pool

attach_pool()

cdef extern from "movement/movement.h" nogil:
    ctypedef struct x86_copy_state:
        pass
    int x86_copy_run(void* state, const mnn_tensor* ins, int32_t n_in, mnn_tensor* outs, int32_t n_out) noexcept


def copy(str isa, int threads, str name):
    """The input copied to the output (Identity)."""
    return _execution(name, sizeof(x86_copy_state), x86_copy_run, isa, threads)
