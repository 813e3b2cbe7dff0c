# Element-wise math and Cast (csrc/math.c): the states of ops_math.py. Included by _arm.pyx.

cdef extern from "move.h" nogil:
    ctypedef struct arm_math_state:
        arm_op op
        int32_t kind
        float alpha, gamma
    ctypedef struct arm_bin2_state:
        arm_op op
        int32_t kind, dtype, ndim, in_elem, out_elem
        int64_t dims[8]
        int64_t sa[8]
        int64_t sb[8]
    ctypedef struct arm_cast_state:
        arm_op op
        int32_t to "to"
        int32_t from_ "from"
    int arm_math_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int arm_bin2_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int arm_cast_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept


def math(str name, int kind, float alpha=0.0, float gamma=0.0):
    cdef Execution ex = _execution(name, sizeof(arm_math_state), arm_math_run)
    cdef arm_math_state* s = <arm_math_state*>ex.state
    s.kind, s.alpha, s.gamma = kind, alpha, gamma
    return ex


def bin2(str name, int kind, int dtype, int in_elem, int out_elem, dims, sa, sb):
    if not 1 <= len(dims) <= 8:
        raise ValueError(f"arm {name}: 1 to 8 merged dims, got {len(dims)}")
    cdef Execution ex = _execution(name, sizeof(arm_bin2_state), arm_bin2_run)
    cdef arm_bin2_state* s = <arm_bin2_state*>ex.state
    s.kind, s.dtype, s.ndim, s.in_elem, s.out_elem = kind, dtype, len(dims), in_elem, out_elem
    for i in range(s.ndim):
        s.dims[i], s.sa[i], s.sb[i] = dims[i], sa[i], sb[i]
    return ex


def cast(str name, int src, int dst):
    cdef Execution ex = _execution(name, sizeof(arm_cast_state), arm_cast_run)
    cdef arm_cast_state* s = <arm_cast_state*>ex.state
    s.from_, s.to = src, dst
    return ex


cdef extern from "move.h" nogil:
    ctypedef struct arm_resize_pass:
        int64_t outer, out, inner, taps
        int64_t in_ "in"
        const int64_t* idx
        const float* w
        const uint8_t* outside
        float extrap
        int32_t nearest
    ctypedef struct arm_resize_state:
        arm_op op
        int32_t npass
        const arm_resize_pass* pass_ "pass"
        float* work[2]
        int32_t half
    int arm_resize_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept


def resize(str name, list passes, int64_t work_elems, bint half=False):
    """passes: (outer, in, out, inner, idx (out, taps) int64, w (out, taps), outside (out,) bool or None,
    extrapolation value, nearest) per resized axis, in order; work_elems: the largest intermediate.
    half: fp16 tensors, every pass nearest (copies of halves)."""
    if half and not all(p[8] for p in passes):
        raise ValueError("arm Resize on fp16 tensors takes nearest passes only")
    cdef Execution ex = _execution(name, sizeof(arm_resize_state), arm_resize_run)
    cdef arm_resize_state* s = <arm_resize_state*>ex.state
    cdef Buffer table = Buffer(max(len(passes), 1) * sizeof(arm_resize_pass))
    cdef arm_resize_pass* p = <arm_resize_pass*>ex.hold(table)
    s.npass, s.pass_ = len(passes), p
    for k, (outer, n_in, n_out, inner, idx, w, outside, extrap, nearest) in enumerate(passes):
        p[k].outer, p[k].out, p[k].inner, p[k].taps = outer, n_out, inner, idx.shape[1]
        p[k].in_ = n_in
        p[k].idx = <const int64_t*>ex.hold(_copy_array(idx, np.int64))
        p[k].w = <const float*>ex.hold(_copy_array(w, np.float32))
        p[k].outside = <const uint8_t*>ex.hold(_copy_array(outside, np.uint8)) if outside is not None else NULL
        p[k].extrap, p[k].nearest = extrap, nearest
    s.work[0] = <float*>ex.hold(Buffer(work_elems * 4))
    s.work[1] = <float*>ex.hold(Buffer(work_elems * 4))
    s.half = half
    return ex


cdef extern from "move.h" nogil:
    ctypedef struct arm_gather_nd_state:
        arm_op op
        int32_t k
        int64_t nbatch, nidx, inner_bytes, batch_blocks
        int64_t dims[8]
        int64_t st[8]
    ctypedef struct arm_bn_rt_state:
        arm_op op
        int64_t outer, C, inner
        float eps
        float* scale
        float* shift
    int arm_gather_nd_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int arm_bn_rt_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept


def gather_nd(str name, int64_t nbatch, int64_t nidx, int64_t inner_bytes, int64_t batch_blocks, dims, strides):
    if not 1 <= len(dims) <= 8:
        raise ValueError(f"arm GatherND: 1 to 8 indexed axes, got {len(dims)}")
    cdef Execution ex = _execution(name, sizeof(arm_gather_nd_state), arm_gather_nd_run)
    cdef arm_gather_nd_state* s = <arm_gather_nd_state*>ex.state
    s.k, s.nbatch, s.nidx, s.inner_bytes, s.batch_blocks = len(dims), nbatch, nidx, inner_bytes, batch_blocks
    for i in range(s.k):
        s.dims[i], s.st[i] = dims[i], strides[i]
    return ex


def batchnorm_runtime(str name, int64_t outer, int64_t C, int64_t inner, float eps):
    cdef Execution ex = _execution(name, sizeof(arm_bn_rt_state), arm_bn_rt_run)
    cdef arm_bn_rt_state* s = <arm_bn_rt_state*>ex.state
    s.outer, s.C, s.inner, s.eps = outer, C, inner, eps
    s.scale = <float*>ex.hold(Buffer(max(C, 1) * 4))
    s.shift = <float*>ex.hold(Buffer(max(C, 1) * 4))
    return ex


cdef extern from "move.h" nogil:
    ctypedef struct arm_onehot_state:
        arm_op op
        int32_t idx_dtype, elem
        int64_t outer, depth, inner
    int arm_onehot_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept


def onehot(str name, int idx_dtype, int elem, int64_t outer, int64_t depth, int64_t inner):
    cdef Execution ex = _execution(name, sizeof(arm_onehot_state), arm_onehot_run)
    cdef arm_onehot_state* s = <arm_onehot_state*>ex.state
    s.idx_dtype, s.elem, s.outer, s.depth, s.inner = idx_dtype, elem, outer, depth, inner
    return ex


cdef extern from "move.h" nogil:
    ctypedef struct arm_ml_state:
        arm_op op
        int32_t kind, dtype
        int64_t features
        const double* offset
        const double* scale
    int arm_scaler_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int arm_normalizer_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept


def scaler(str name, int dtype, int64_t features, offset, scale):
    cdef Execution ex = _execution(name, sizeof(arm_ml_state), arm_scaler_run)
    cdef arm_ml_state* s = <arm_ml_state*>ex.state
    s.dtype, s.features = dtype, features
    s.offset = <const double*>ex.hold(_copy_array(offset, np.float64))
    s.scale = <const double*>ex.hold(_copy_array(scale, np.float64))
    return ex


def normalizer(str name, int kind, int64_t features):
    cdef Execution ex = _execution(name, sizeof(arm_ml_state), arm_normalizer_run)
    cdef arm_ml_state* s = <arm_ml_state*>ex.state
    s.kind, s.features = kind, features
    return ex


cdef extern from "move.h" nogil:
    ctypedef struct arm_linclass_state:
        arm_op op
        int32_t dtype, post, has_labels
        int64_t rows, features, k
        const double* coef
        const double* intercepts
        const int64_t* labels
        double* work
    int arm_linclass_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept


def linear_classifier(str name, int dtype, int post, int64_t rows, int64_t features, coef, intercepts, labels):
    """coef [k][features] and intercepts [k] (float64); labels: int64 class labels (may be empty)."""
    cdef Execution ex = _execution(name, sizeof(arm_linclass_state), arm_linclass_run)
    cdef arm_linclass_state* s = <arm_linclass_state*>ex.state
    s.dtype, s.post, s.rows, s.features, s.k = dtype, post, rows, features, len(intercepts)
    s.has_labels = len(labels) > 0
    s.coef = <const double*>ex.hold(_copy_array(coef, np.float64))
    s.intercepts = <const double*>ex.hold(_copy_array(intercepts, np.float64))
    s.labels = <const int64_t*>ex.hold(_copy_array(labels if len(labels) else [0], np.int64))
    s.work = <double*>ex.hold(Buffer(max(len(intercepts), 1) * 8))
    return ex
