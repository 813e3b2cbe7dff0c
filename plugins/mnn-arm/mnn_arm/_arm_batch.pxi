# Batched MatMul (csrc/matmul_batch.c): the state of ops_matmul.py's batched case.
# Included by _arm.pyx (after the path tables and _epilogue).

cdef extern from "ops.h" nogil:
    ctypedef struct arm_bmatmul_state:
        arm_op op
        const arm_fkernels* k
        int64_t M, N, K, batch
        const int64_t* a_off
        const int64_t* b_off
        void* a_work
        void* b_work
        arm_epilogue epi
    int arm_bmatmul_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept


def bmatmul(str path, int64_t M, int64_t N, int64_t K, a_off, b_off, int act, float act_alpha, float act_beta):
    """Y[t] = A[a_off[t]] @ B[b_off[t]] for every output batch t (offsets in elements)."""
    if len(a_off) != len(b_off):
        raise ValueError("arm batched MatMul: one A and one B offset per output batch")
    cdef Execution ex = _execution(f"arm.MatMul.batched [{path}]", sizeof(arm_bmatmul_state), arm_bmatmul_run)
    cdef arm_bmatmul_state* s = <arm_bmatmul_state*>ex.state
    s.k = _ftable(path)
    s.M, s.N, s.K, s.batch = M, N, K, len(a_off)
    _epilogue(&s.epi, act, act_alpha, act_beta)
    s.a_off = <const int64_t*>ex.hold(_copy_array(a_off, np.int64))
    s.b_off = <const int64_t*>ex.hold(_copy_array(b_off, np.int64))
    s.a_work = ex.hold(Buffer(arm_packed_a_elems(s.k.mr, M, K) * s.k.elem_bytes))
    s.b_work = ex.hold(Buffer(arm_packed_a_elems(s.k.nr, N, K) * s.k.elem_bytes))
    return ex
