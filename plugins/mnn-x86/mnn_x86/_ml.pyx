# The Cython glue of the classic-ML ops (ops_ml.py, csrc/ml/): fills each op's C state at prepare and
# hands it to the core as an _x86.Execution. Nothing here runs per inference.
from libc.stdint cimport int32_t, int64_t, uint8_t

from mnn_core.abi cimport mnn_tensor

import numpy as np

from mnn_x86.family cimport Buffer, Execution, _copy_array, _execution, _floats, attach_pool

attach_pool()

cdef extern from "ml/ml.h" nogil:
    enum:
        ML_BLOCK

    ctypedef struct ml_node:
        double threshold
        int32_t feature
        int32_t yes, no, leaf
        uint8_t mode, missing_true

    ctypedef struct x86_tree_state:
        int32_t classifier, k, n_trees, n_nodes, aggregate, transform, f32, n_base, binary, positive
        int32_t all_leq
        int64_t features
        const ml_node* nodes
        const int32_t* roots
        const int32_t* depths
        const double* weights
        const uint8_t* has
        const double* base
        const int64_t* labels
        char* scratch
        int64_t scratch_stride

    ctypedef struct x86_linear_state:
        int32_t classifier, k, transform, n_labels, has_intercepts
        int64_t features
        const double* coef
        const double* intercepts
        const int64_t* labels
        char* scratch
        int64_t scratch_stride

    ctypedef struct x86_feature_state:
        int32_t f32
        int64_t width
        const double* a
        const double* b
        double threshold

    ctypedef struct x86_normalizer_state:
        int32_t norm

    int x86_tree_run(void* state, const mnn_tensor* ins, int32_t n_in, mnn_tensor* outs, int32_t n_out) noexcept
    int x86_linear_run(void* state, const mnn_tensor* ins, int32_t n_in, mnn_tensor* outs, int32_t n_out) noexcept
    int x86_scaler_run(void* state, const mnn_tensor* ins, int32_t n_in, mnn_tensor* outs, int32_t n_out) noexcept
    int x86_imputer_run(void* state, const mnn_tensor* ins, int32_t n_in, mnn_tensor* outs, int32_t n_out) noexcept
    int x86_binarizer_run(void* state, const mnn_tensor* ins, int32_t n_in, mnn_tensor* outs, int32_t n_out) noexcept
    int x86_normalizer_run(void* state, const mnn_tensor* ins, int32_t n_in, mnn_tensor* outs,
                           int32_t n_out) noexcept

#: numpy's record of ml_node, to fill the node table in one copy
NODE_DTYPE = np.dtype({"names": ["threshold", "feature", "yes", "no", "leaf", "mode", "missing_true"],
                       "formats": [np.float64, np.int32, np.int32, np.int32, np.int32, np.uint8, np.uint8],
                       "offsets": [<size_t>&(<ml_node*>0).threshold, <size_t>&(<ml_node*>0).feature,
                                   <size_t>&(<ml_node*>0).yes, <size_t>&(<ml_node*>0).no,
                                   <size_t>&(<ml_node*>0).leaf,
                                   <size_t>&(<ml_node*>0).mode, <size_t>&(<ml_node*>0).missing_true],
                       "itemsize": sizeof(ml_node)})


cdef void* _keep(Execution ex, arr, dtype) except NULL:
    """A copy of `arr` as `dtype` that lives as long as the execution (never NULL, even when empty)."""
    cdef Buffer buf = _copy_array(arr, dtype) if np.size(arr) else _floats(2)
    ex.keep.append(buf)
    return buf.ptr


cdef char* _scratch(Execution ex, int threads, int64_t stride):
    cdef Buffer buf = _floats((threads * stride + 3) // 4 + 1)
    ex.keep.append(buf)
    return <char*>buf.ptr


def trees(str isa, int threads, str name, dict f, nodes, roots, depths, weights, has, base, labels):
    """A tree ensemble (csrc/ml/trees.c): `nodes` as NODE_DTYPE records, `f` the x86_tree_state scalars."""
    cdef Execution ex = _execution(name, sizeof(x86_tree_state), x86_tree_run, isa, threads)
    cdef x86_tree_state* s = <x86_tree_state*>ex.state
    s.classifier, s.k, s.aggregate, s.transform = f["classifier"], f["k"], f["aggregate"], f["transform"]
    s.f32, s.binary, s.positive, s.features = f["f32"], f["binary"], f["positive"], f["features"]
    s.all_leq = f["all_leq"]
    s.n_trees, s.n_nodes, s.n_base = len(roots), len(nodes), len(base)
    s.nodes = <const ml_node*>_keep(ex, nodes, NODE_DTYPE)
    s.roots = <const int32_t*>_keep(ex, roots, np.int32)
    s.depths = <const int32_t*>_keep(ex, depths, np.int32)
    s.weights = <const double*>_keep(ex, weights, np.float64)
    s.has = <const uint8_t*>_keep(ex, has, np.uint8)
    s.base = <const double*>_keep(ex, base, np.float64)
    s.labels = <const int64_t*>_keep(ex, labels, np.int64)
    s.scratch_stride = ((ML_BLOCK * (8 * s.features + 9 * s.k + 4)) + 63) // 64 * 64
    s.scratch = _scratch(ex, max(threads, 1), s.scratch_stride)
    return ex


def linear(str isa, int threads, str name, bint classifier, int k, int transform, int64_t features, coef,
           intercepts, labels):
    """LinearClassifier or LinearRegressor (csrc/ml/linear.c): k score columns of `features`."""
    cdef Execution ex = _execution(name, sizeof(x86_linear_state), x86_linear_run, isa, threads)
    cdef x86_linear_state* s = <x86_linear_state*>ex.state
    s.classifier, s.k, s.transform, s.features = classifier, k, transform, features
    s.n_labels, s.has_intercepts = len(labels), len(intercepts) == k
    s.coef = <const double*>_keep(ex, coef, np.float64)
    s.intercepts = <const double*>_keep(ex, intercepts, np.float64)
    s.labels = <const int64_t*>_keep(ex, labels, np.int64)
    s.scratch_stride = (8 * (features + k) + 63) // 64 * 64
    s.scratch = _scratch(ex, max(threads, 1), s.scratch_stride)
    return ex


#: the feature-wise ops' run functions
cdef dict FEATURE_RUNS = {"Scaler": 0, "Imputer": 1, "Binarizer": 2}


def feature(str op, str isa, int threads, str name, bint f32, int64_t width, a, b, double threshold=0):
    """Scaler ((x - a) * b), Imputer (x == b[0] -> a) or Binarizer (x > threshold): csrc/ml/elementwise.c."""
    cdef int kind = FEATURE_RUNS[op]
    cdef Execution ex = _execution(name, sizeof(x86_feature_state),
                                   x86_scaler_run if kind == 0 else x86_imputer_run if kind == 1 else x86_binarizer_run,
                                   isa, threads)
    cdef x86_feature_state* s = <x86_feature_state*>ex.state
    s.f32, s.width, s.threshold = f32, width, threshold
    s.a = <const double*>_keep(ex, a, np.float64)
    s.b = <const double*>_keep(ex, b, np.float64)
    return ex


def normalizer(str isa, int threads, str name, int norm):
    """Normalizer (0 MAX, 1 L1, 2 L2): csrc/ml/elementwise.c."""
    cdef Execution ex = _execution(name, sizeof(x86_normalizer_state), x86_normalizer_run, isa, threads)
    (<x86_normalizer_state*>ex.state).norm = norm
    return ex
