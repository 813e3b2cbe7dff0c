# The Cython glue of mnn-arm: turns the parameters mnn_arm/ops_*.py compute at
# prepare into C op states (csrc/ops.h), packs constant weights with the
# chosen path's kernels and hands each state to the core as an mnn_execution
# in a PyCapsule. Nothing here runs per inference.
from cpython.pycapsule cimport PyCapsule_New
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport calloc, free
from libc.string cimport memcpy, memset

from mnn_core.abi cimport MNN_ABI_VERSION, MNN_EXECUTION_CAPSULE, mnn_execution, mnn_run_fn, mnn_tensor

import numpy as np

cdef extern from "arm.h" nogil:
    ctypedef struct arm_epilogue:
        float alpha, beta
        const float* bias
        int64_t bias_rs, bias_cs
        int32_t act
        float act_alpha, act_beta
    ctypedef struct arm_conv_geom:
        int64_t C, H, W, OH, OW, kh, kw, sh, sw, dh, dw, pt, pl
    ctypedef struct arm_pool_geom:
        int64_t H, W, OH, OW, kh, kw, sh, sw, dh, dw, pt, pl
        int32_t kind, reserved
        const float* inv_rows
        const float* inv_cols
    ctypedef struct arm_fkernels:
        const char* name
        int32_t mr, nr, elem_bytes, io_bytes
        void (*pack_a)(const void* a, int64_t rs, int64_t cs, int64_t M, int64_t K, void* ap) noexcept nogil
        void (*pack_b)(const void* b, int64_t rs, int64_t cs, int64_t K, int64_t N, void* bp) noexcept nogil
    ctypedef struct arm_qkernels:
        const char* name
        int32_t mr, nr
    ctypedef struct arm_qepilogue:
        int64_t K
        const int32_t* da
        const int32_t* db
        int64_t da_rs, db_cs
        const int32_t* rowsum
        const int32_t* colsum
        const int32_t* bias
        int32_t out_kind
        const double* mult
        int64_t mult_rs, mult_cs
        double zy
        const int32_t* bias_col
    enum: ARM_Q_MR
    enum: ARM_Q_NR
    uint64_t arm_hwcap()
    int arm_path_runnable(int path)
    const arm_fkernels* arm_fkernels_for(int path)
    const arm_qkernels* arm_qkernels_for(int path)
    int64_t arm_depthwise_work_bytes(const arm_conv_geom* g)
    int64_t arm_conv_chunk_cols(const arm_fkernels* k, const arm_conv_geom* g)
    int64_t arm_packed_a_elems(int64_t mr, int64_t M, int64_t K)
    int64_t arm_pool_work_floats(const arm_pool_geom* g)
    int64_t arm_k4(int64_t K)
    void arm_f16_to_f32(const void* x, float* y, int64_t n)
    void arm_f32_to_f16(const float* x, void* y, int64_t n)
    void arm_q_pack_a(const void* a, int is_uint8, int64_t rs, int64_t cs, int64_t M, int64_t K, int8_t* ap,
                      int32_t* rowsum)
    void arm_q_pack_b(const void* b, int is_uint8, int64_t rs, int64_t cs, int64_t K, int64_t N, int8_t* bp,
                      int32_t* colsum)
    int64_t arm_qconv_chunk_cols(const arm_conv_geom* g)
    int64_t arm_q_depthwise_work_elems(const arm_conv_geom* g)
    int arm_wino_applies(const arm_conv_geom* g)
    int64_t arm_wino_weight_elems(const arm_fkernels* k, int64_t O, int64_t C)
    void arm_wino_pack_weights(const arm_fkernels* k, const float* w, int64_t O, int64_t C, float* packed, float* tmp)
    int64_t arm_wino_chunk_tiles(const arm_fkernels* k, const arm_conv_geom* g)
    int64_t arm_wino_work_bytes(const arm_fkernels* k, const arm_conv_geom* g, int64_t O, int64_t chunk)
    int64_t arm_wino_work_bytes_mt(const arm_fkernels* k, const arm_conv_geom* g, int64_t O, int64_t chunk, int slices)
    int64_t arm_wino_h_weight_bytes(const arm_conv_geom* g, int64_t O)
    void arm_wino_h_pack_weights(const arm_conv_geom* g, const float* w, int64_t O, void* packed, void* tmp)
    int64_t arm_wino_h_chunk_tiles(const arm_conv_geom* g)
    int64_t arm_wino_h_work_bytes_mt(const arm_conv_geom* g, int64_t O, int64_t chunk, int slices)

cdef extern from "fp16h_ops.h" nogil:
    int arm_norm_h_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int arm_softmax_h_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept

cdef extern from "parallel.h" nogil:
    int arm_pool_workers()

cdef extern from "ops.h" nogil:
    ctypedef struct arm_op:
        const char* error
        int32_t threads
    const char* arm_op_error(void* state) noexcept
    ctypedef struct arm_conv_state:
        arm_op op
        const arm_fkernels* k
        int32_t depthwise, bias_input
        int32_t winograd
        int64_t N, O, group, og
        arm_conv_geom g
        void* w
        int64_t w_group_bytes
        const float* bias
        arm_epilogue epi
        void* work
        int64_t chunk_cols
        int64_t work_bytes
        int32_t slices
    ctypedef struct arm_matmul_state:
        arm_op op
        const arm_fkernels* k
        int64_t M, N, K, batch, a_rs, a_cs, b_rs, b_cs
        const void* b_packed
        void* a_work
        void* b_work
        int32_t bias_input
        int32_t transposed
        int32_t write_ct
        void* c_work
        int64_t a_bs
        arm_epilogue epi
    ctypedef struct arm_binary_state:
        arm_op op
        int32_t binop, ndim, half
        int64_t dims[8]
        int64_t sa[8]
        int64_t sb[8]
    ctypedef struct arm_unary_state:
        arm_op op
        arm_epilogue epi
        int32_t half
    ctypedef struct arm_affine_state:
        arm_op op
        int64_t outer, C, inner
        const float* scale
        const float* shift
    ctypedef struct arm_norm_state:
        arm_op op
        int64_t rows, n, per_row
        float eps
        const float* scale
        const float* shift
        int32_t scale_input, shift_input
    ctypedef struct arm_reduce_state:
        arm_op op
        int64_t rows, n
        int32_t kind
        int32_t half
    ctypedef struct arm_softmax_state:
        arm_op op
        int64_t outer, axis, inner
        int32_t log
        float scale
    ctypedef struct arm_pool_state:
        arm_op op
        int64_t planes
        arm_pool_geom g
        float* work
        int64_t work_floats
        int32_t slices
        int32_t half
    ctypedef struct arm_concat_state:
        arm_op op
        int64_t outer, elem
        int32_t n
        const int64_t* block
    ctypedef struct arm_qconv_state:
        arm_op op
        const arm_qkernels* k
        int32_t depthwise, is_uint8, zx, out_bytes, bias_input
        int64_t N, O, group, og
        arm_conv_geom g
        const int8_t* w
        const int16_t* w16
        int64_t w_group_bytes
        arm_qepilogue epi
        int8_t* bwork
        int32_t* colsum
        int32_t* acc
        int16_t* dwork
        int64_t chunk_cols
        int32_t slices
        int64_t bwork_bytes, acc_elems, dwork_elems
        int32_t zx_input
        int32_t direct
        int64_t groups, plane
        int8_t* xq
        const int64_t* off
    enum: ARM_WIDEN_MAX_IN
    enum: ARM_WIDEN_MAX_OUT
    ctypedef struct arm_widen_state:
        arm_op op
        mnn_run_fn run
        void* inner
        int32_t n_in, n_out
        float* in_buf[16]
        float* out_buf[4]
    ctypedef struct arm_qmatmul_state:
        arm_op op
        const arm_qkernels* k
        int32_t a_uint8, out_bytes
        int64_t M, K, N
        const int8_t* bp
        arm_qepilogue epi
        int8_t* ap
        int32_t* rowsum
        int32_t* acc
        int32_t b_input, za_input, zb_input, b_uint8
    int arm_qmatmul_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int arm_widen_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int arm_conv_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int arm_matmul_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int arm_binary_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int arm_unary_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int arm_affine_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int arm_norm_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int arm_reduce_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int arm_softmax_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int arm_pool_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int arm_concat_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int arm_qconv_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept

#: path ids of csrc/arm.h (enum arm_path)
PATHS = {"fp32": 0, "fp16": 1, "int8": 2, "int8_dot": 3, "fp16h": 4}


def hwcap() -> int:
    return arm_hwcap()


def pool_workers() -> int:
    """Worker threads the kernels' pool has started (parallel.h); 0 until a region used more than one."""
    return arm_pool_workers()


def runnable(str path) -> bool:
    """Whether this CPU reports every instruction `path` uses (getauxval(AT_HWCAP))."""
    return bool(arm_path_runnable(PATHS[path]))


include "mnn_core/backend/execution.pxi"  # Buffer, _copy_array, ExecutionRecord, _start_execution


cdef class Execution(ExecutionRecord):
    """One prepared op: the record, the buffers its state points into (`hold`) and its thread count."""

    cdef void* hold(self, Buffer b):
        self.keep.append(b)
        return b.ptr

    def set_threads(self, int threads):
        """The session's thread count: kernels split their work over up to this many threads (those with
        per-thread scratch over no more than they were prepared for). Passed on to wrapped executions."""
        (<arm_op*>self.state).threads = max(1, threads)
        for kept in self.keep:
            if isinstance(kept, Execution):
                kept.set_threads(threads)

    @property
    def threads(self):
        return (<arm_op*>self.state).threads


cdef Execution _execution(str name, size_t size, mnn_run_fn fn):
    cdef Execution ex = Execution()
    _start_execution(ex, name.encode(), size, fn, arm_op_error, 0)
    return ex


cdef const arm_fkernels* _ftable(str path) except NULL:
    cdef const arm_fkernels* k = arm_fkernels_for(PATHS[path])
    if k == NULL:
        raise RuntimeError(f"arm: the {path} path is not runnable on this CPU")
    return k


cdef void _epilogue(arm_epilogue* e, int act, float a, float b, float alpha=1.0, float beta=1.0):
    e.alpha, e.beta, e.bias, e.bias_rs, e.bias_cs = alpha, beta, NULL, 0, 0
    e.act, e.act_alpha, e.act_beta = act, a, b


cdef void _geom(arm_conv_geom* g, dict p):
    g.C, g.H, g.W, g.OH, g.OW = p["C"], p["H"], p["W"], p["OH"], p["OW"]
    g.kh, g.kw, g.sh, g.sw = p["kh"], p["kw"], p["sh"], p["sw"]
    g.dh, g.dw, g.pt, g.pl = p["dh"], p["dw"], p["pt"], p["pl"]


cdef int64_t _round64(int64_t n):
    return (n + 63) // 64 * 64


def conv(str path, dict p, weight, bias, int bias_input):
    """Float Conv; p: N, O, group, depthwise, winograd, act, act_alpha, act_beta and one group's geometry;
    threads (default 1): scratch for that many threads, and chunks of output columns small enough that
    one image gives each thread one. winograd (3x3 stride 1 dilation 1, one group): F(2x2, 3x3) with
    weights transformed here (winograd.c on fp32, winograd_fp16.c on fp16 / fp16h)."""
    kind = "depthwise" if p["depthwise"] else ("winograd" if p.get("winograd") else "gemm")
    cdef Execution ex = _execution(f"arm.Conv.{kind} [{path}]", sizeof(arm_conv_state), arm_conv_run)
    cdef arm_conv_state* s = <arm_conv_state*>ex.state
    s.k = _ftable(path)
    _geom(&s.g, p)
    s.N, s.O, s.group = p["N"], p["O"], p["group"]
    s.og = s.O // s.group
    s.depthwise = p["depthwise"]
    s.bias_input = bias_input if bias is None else -1
    s.slices = max(1, int(p.get("threads", 1)))
    s.op.threads = s.slices
    _epilogue(&s.epi, p["act"], p["act_alpha"], p["act_beta"])
    if bias is not None:
        s.bias = <const float*>ex.hold(_copy_array(bias, np.float32))
    cdef int64_t Kg = s.g.C * s.g.kh * s.g.kw, gi, stride
    cdef const char* src
    cdef Buffer tmp
    if s.depthwise:
        s.w = ex.hold(_copy_array(weight, np.float32))
        s.work_bytes = _round64(arm_depthwise_work_bytes(&s.g))
        s.work = ex.hold(Buffer(s.work_bytes * s.slices))
    elif p.get("winograd") and path != "fp32":
        if path not in ("fp16", "fp16h") or s.group != 1 or not arm_wino_applies(&s.g):
            raise ValueError(f"arm: Winograd needs a float path and a 3x3 stride-1 dilation-1 ungrouped conv ({p})")
        s.winograd = 2
        s.w = ex.hold(Buffer(arm_wino_h_weight_bytes(&s.g, s.O)))
        wc = np.ascontiguousarray(weight, dtype=np.float32)
        tmp = Buffer(16 * s.O * s.g.C * 2)
        if wc.size:
            arm_wino_h_pack_weights(&s.g, <const float*><size_t>wc.ctypes.data, s.O, s.w, tmp.ptr)
        s.chunk_cols = _split_cols(arm_wino_h_chunk_tiles(&s.g), (s.g.OH + 1) // 2 * ((s.g.OW + 1) // 2),
                                   s.k.nr, s.slices)
        s.work = ex.hold(Buffer(arm_wino_h_work_bytes_mt(&s.g, s.O, s.chunk_cols, s.slices)))
    elif p.get("winograd"):
        if s.group != 1 or not arm_wino_applies(&s.g):
            raise ValueError(f"arm: Winograd needs a 3x3 stride-1 dilation-1 ungrouped conv ({p})")
        s.winograd = 1
        s.w = ex.hold(Buffer(arm_wino_weight_elems(s.k, s.O, s.g.C) * 4))
        wc = np.ascontiguousarray(weight, dtype=np.float32)
        tmp = Buffer(16 * s.O * s.g.C * 4)
        if wc.size:
            arm_wino_pack_weights(s.k, <const float*><size_t>wc.ctypes.data, s.O, s.g.C, <float*>s.w,
                                  <float*>tmp.ptr)
        s.chunk_cols = _split_cols(arm_wino_chunk_tiles(s.k, &s.g), (s.g.OH + 1) // 2 * ((s.g.OW + 1) // 2),
                                   s.k.nr, s.slices)
        s.work = ex.hold(Buffer(arm_wino_work_bytes_mt(s.k, &s.g, s.O, s.chunk_cols, s.slices)))
    else:
        stride = arm_packed_a_elems(s.k.mr, s.og, Kg) * s.k.elem_bytes
        s.w_group_bytes = stride
        s.w = ex.hold(Buffer(stride * s.group))
        # packed from the path's activation type: fp16 for fp16h (rounded to nearest, as the fp16 path's packing)
        wc = np.ascontiguousarray(weight, dtype=np.float16 if s.k.io_bytes == 2 else np.float32)
        src = <const char*><size_t>wc.ctypes.data
        if wc.size:
            for gi in range(s.group):
                s.k.pack_a(src + gi * s.og * Kg * s.k.io_bytes, Kg, 1, s.og, Kg, <char*>s.w + gi * stride)
        s.chunk_cols = _split_cols(arm_conv_chunk_cols(s.k, &s.g), s.g.OH * s.g.OW, s.k.nr, s.slices)
        s.work_bytes = _round64(s.chunk_cols * max(Kg, 1) * s.k.elem_bytes)
        s.work = ex.hold(Buffer(s.work_bytes * s.slices))
    return ex


cdef int64_t _split_cols(int64_t chunk, int64_t cols, int64_t nr, int64_t threads):
    """chunk columns (a multiple of nr) cut down so that `cols` make at least `threads` chunks, where they can"""
    cdef int64_t want = ((cols + threads - 1) // threads + nr - 1) // nr * nr
    if threads > 1 and nr <= want < chunk:
        return want
    return chunk


def matmul(str path, str name, dict p, b_const, bias, int bias_input, bint transposed=False, bint write_ct=False):
    """C[t] = epilogue(A[t] @ B) for t < batch; B one matrix (constant: packed here). transposed: computed as
    C^T = B^T A^T and transposed back (constant B and fp32 tensors only; ops_matmul.py says when). write_ct:
    the output is C^T (fp32; a convolution by its input windows, ops_conv.py). p["a_bs"]: A's batch stride
    in elements (default M * K)."""
    form = ", C^T" if transposed else ""
    cdef Execution ex = _execution(f"{name} [{path}{form}]", sizeof(arm_matmul_state), arm_matmul_run)
    cdef arm_matmul_state* s = <arm_matmul_state*>ex.state
    s.k = _ftable(path)
    s.M, s.N, s.K, s.batch = p["M"], p["N"], p["K"], p["batch"]
    s.a_rs, s.a_cs, s.b_rs, s.b_cs = p["a_rs"], p["a_cs"], p["b_rs"], p["b_cs"]
    s.a_bs = p.get("a_bs", s.M * s.K)
    _epilogue(&s.epi, p["act"], p["act_alpha"], p["act_beta"], p["alpha"], p["beta"])
    s.epi.bias_rs, s.epi.bias_cs = p["bias_rs"], p["bias_cs"]
    s.bias_input = -1
    if bias is not None:
        s.epi.bias = <const float*>ex.hold(_copy_array(bias, np.float32))
    elif bias_input >= 0:
        s.bias_input = bias_input
    if transposed:
        if b_const is None or s.k.io_bytes != 4:
            raise ValueError("arm MatMul: the transposed form needs a constant B and fp32 tensors")
        s.transposed = 1
        s.a_work = ex.hold(Buffer(arm_packed_a_elems(s.k.nr, s.M, s.K) * s.k.elem_bytes))
        s.c_work = ex.hold(Buffer(s.M * s.N * 4))
        bt = np.ascontiguousarray(b_const, dtype=np.float32)
        s.b_packed = ex.hold(Buffer(arm_packed_a_elems(s.k.mr, s.N, s.K) * s.k.elem_bytes))
        if bt.size:
            s.k.pack_a(<const void*><size_t>bt.ctypes.data, s.b_cs, s.b_rs, s.N, s.K, <void*>s.b_packed)
        return ex
    if write_ct:
        if s.k.io_bytes != 4 or transposed:
            raise ValueError("arm MatMul: C^T is written from fp32 tensors, not with the transposed form")
        s.write_ct = 1
        s.c_work = ex.hold(Buffer(s.M * s.N * 4))
    s.a_work = ex.hold(Buffer(arm_packed_a_elems(s.k.mr, s.M, s.K) * s.k.elem_bytes))
    cdef int64_t bbytes = arm_packed_a_elems(s.k.nr, s.N, s.K) * s.k.elem_bytes
    if b_const is not None:
        bc = np.ascontiguousarray(b_const, dtype=np.float16 if s.k.io_bytes == 2 else np.float32)
        s.b_packed = ex.hold(Buffer(bbytes))
        if bc.size:
            s.k.pack_b(<const void*><size_t>bc.ctypes.data, s.b_rs, s.b_cs, s.K, s.N, <void*>s.b_packed)
    else:
        s.b_work = ex.hold(Buffer(bbytes))
    return ex


def binary(str name, int op, dims, sa, sb, bint half=False):
    if not 1 <= len(dims) <= 8:
        raise ValueError(f"arm binary ops take 1 to 8 collapsed dims, got {len(dims)}")
    cdef Execution ex = _execution(name, sizeof(arm_binary_state), arm_binary_run)
    cdef arm_binary_state* s = <arm_binary_state*>ex.state
    s.binop, s.ndim, s.half = op, len(dims), half
    for i in range(s.ndim):
        s.dims[i], s.sa[i], s.sb[i] = dims[i], sa[i], sb[i]
    return ex


def unary(str name, int act, float a, float b, bint half=False):
    cdef Execution ex = _execution(name, sizeof(arm_unary_state), arm_unary_run)
    _epilogue(&(<arm_unary_state*>ex.state).epi, act, a, b)
    (<arm_unary_state*>ex.state).half = half
    return ex


def widened(Execution inner, list in_numel, list out_numel):
    """`inner` (an fp32 execution) on fp16-domain tensors: in_numel / out_numel give, per tensor the core
    passes (present inputs, outputs), its element count when it is stored as fp16, else -1."""
    if len(in_numel) > ARM_WIDEN_MAX_IN or len(out_numel) > ARM_WIDEN_MAX_OUT:
        raise ValueError(f"arm: {inner.name} has more tensors than the fp16-domain wrapper takes "
                         f"({ARM_WIDEN_MAX_IN} inputs, {ARM_WIDEN_MAX_OUT} outputs)")
    cdef Execution ex = _execution(f"{inner.name} (widened from fp16)", sizeof(arm_widen_state), arm_widen_run)
    cdef arm_widen_state* s = <arm_widen_state*>ex.state
    ex.keep.append(inner)
    s.run, s.inner = inner.exe.run, inner.state
    s.n_in, s.n_out = len(in_numel), len(out_numel)
    for i, n in enumerate(in_numel):
        s.in_buf[i] = <float*>ex.hold(Buffer(n * 4)) if n >= 0 else NULL
    for i, n in enumerate(out_numel):
        s.out_buf[i] = <float*>ex.hold(Buffer(n * 4)) if n >= 0 else NULL
    return ex


def f32_to_f16(size_t src, size_t dst, int64_t n):
    """n fp32 values at address src, rounded to fp16 at dst (the fp16 domain's way in)."""
    with nogil:
        arm_f32_to_f16(<const float*>src, <void*>dst, n)


def f16_to_f32(size_t src, size_t dst, int64_t n):
    """n fp16 values at address src, widened to fp32 at dst (the fp16 domain's way out)."""
    with nogil:
        arm_f16_to_f32(<const void*>src, <float*>dst, n)


def affine(str name, int64_t outer, int64_t C, int64_t inner, scale, shift):
    cdef Execution ex = _execution(name, sizeof(arm_affine_state), arm_affine_run)
    cdef arm_affine_state* s = <arm_affine_state*>ex.state
    s.outer, s.C, s.inner = outer, C, inner
    s.scale = <const float*>ex.hold(_copy_array(scale, np.float32))
    s.shift = <const float*>ex.hold(_copy_array(shift, np.float32))
    return ex


def norm(str name, int64_t rows, int64_t n, int64_t per_row, float eps, scale, shift, int scale_input,
         int shift_input, bint half=False):
    """half: fp16 rows in and out (the fp16 domain): fp16h.c's kernel, constant scale and shift kept as halves
    (those arriving at run are halves too)"""
    cdef Execution ex = _execution(name, sizeof(arm_norm_state), arm_norm_h_run if half else arm_norm_run)
    cdef arm_norm_state* s = <arm_norm_state*>ex.state
    s.rows, s.n, s.per_row, s.eps = rows, n, per_row, eps
    s.scale_input = scale_input if scale is None else -1
    s.shift_input = shift_input if shift is None else -1
    dtype = np.float16 if half else np.float32
    if scale is not None:
        s.scale = <const float*>ex.hold(_copy_array(scale, dtype))
    if shift is not None:
        s.shift = <const float*>ex.hold(_copy_array(shift, dtype))
    return ex


def reduce(str name, int64_t rows, int64_t n, int kind, bint half=False):
    cdef Execution ex = _execution(name, sizeof(arm_reduce_state), arm_reduce_run)
    cdef arm_reduce_state* s = <arm_reduce_state*>ex.state
    s.rows, s.n, s.kind, s.half = rows, n, kind, half
    return ex


def softmax(str name, int64_t outer, int64_t axis, int64_t inner, bint log, float scale=1.0):
    cdef Execution ex = _execution(name, sizeof(arm_softmax_state), arm_softmax_run)
    cdef arm_softmax_state* s = <arm_softmax_state*>ex.state
    s.outer, s.axis, s.inner, s.log, s.scale = outer, axis, inner, log, scale
    return ex


def softmax_h(str name, int64_t outer, int64_t axis, int64_t inner, bint log):
    """Softmax / LogSoftmax on fp16 tensors (the fp16 domain): fp16h.c's kernel"""
    cdef Execution ex = _execution(name, sizeof(arm_softmax_state), arm_softmax_h_run)
    cdef arm_softmax_state* s = <arm_softmax_state*>ex.state
    s.outer, s.axis, s.inner, s.log = outer, axis, inner, log
    return ex


def pool(str name, int64_t planes, dict p, int kind, inv_rows, inv_cols, int threads=1, bint half=False):
    cdef Execution ex = _execution(name, sizeof(arm_pool_state), arm_pool_run)
    cdef arm_pool_state* s = <arm_pool_state*>ex.state
    s.planes = planes
    s.g.H, s.g.W, s.g.OH, s.g.OW = p["H"], p["W"], p["OH"], p["OW"]
    s.g.kh, s.g.kw, s.g.sh, s.g.sw = p["kh"], p["kw"], p["sh"], p["sw"]
    s.g.dh, s.g.dw, s.g.pt, s.g.pl = p["dh"], p["dw"], p["pt"], p["pl"]
    s.g.kind = kind
    s.g.inv_rows = <const float*>ex.hold(_copy_array(inv_rows, np.float32))
    s.g.inv_cols = <const float*>ex.hold(_copy_array(inv_cols, np.float32))
    s.work_floats = (arm_pool_work_floats(&s.g) + 15) // 16 * 16
    s.slices = max(1, threads)
    s.op.threads = s.slices
    s.work = <float*>ex.hold(Buffer(s.work_floats * 4 * s.slices))
    s.half = half
    return ex


def concat(str name, int64_t outer, blocks, int64_t elem):
    cdef Execution ex = _execution(name, sizeof(arm_concat_state), arm_concat_run)
    cdef arm_concat_state* s = <arm_concat_state*>ex.state
    s.outer, s.n, s.elem = outer, len(blocks), elem
    s.block = <const int64_t*>ex.hold(_copy_array(blocks, np.int64))
    return ex


include "_arm_int8.pxi"
include "_arm_move.pxi"
include "_arm_batch.pxi"
include "_arm_math.pxi"
include "_arm_deconv.pxi"
include "_arm_rnn.pxi"
include "_arm_select.pxi"
include "_arm_conv3d.pxi"
include "_arm_qlinear.pxi"
include "_arm_ml.pxi"
include "_arm_qlstm.pxi"
include "_arm_scatter.pxi"
