# Tree ensembles (csrc/ml.h): the state of ops_ml.py. Included by _arm.pyx.

cdef extern from "ml.h" nogil:
    ctypedef struct arm_ml_node:
        double threshold
        int32_t feature
        int32_t yes, no
        int32_t leaf
        uint8_t mode, missing_true
    ctypedef struct arm_tree_state:
        arm_op op
        int32_t classifier, k, n_trees, n_nodes, aggregate, post, f32, n_base, binary, positive, all_leq, slices
        int64_t features
        const arm_ml_node* nodes
        const int32_t* roots
        const int32_t* depths
        const double* weights
        const uint8_t* has
        const double* base
        const int64_t* labels
        char* scratch
        int64_t scratch_stride
    int64_t arm_tree_scratch_bytes(int64_t features, int32_t k)
    int arm_tree_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept


def trees(str name, dict f, dict nodes, roots, depths, weights, has, base, labels, int threads=1):
    """f: classifier, k, features, f32, aggregate, post, binary, all_leq, positive; nodes: threshold, feature,
    yes, no, leaf, mode, missing_true (one entry per node; a leaf's yes/no point at itself); weights and has
    [leaves][k]; base: the base values; labels: int64 class labels (classifier)."""
    cdef Execution ex = _execution(name, sizeof(arm_tree_state), arm_tree_run)
    cdef arm_tree_state* s = <arm_tree_state*>ex.state
    s.classifier, s.k, s.features, s.f32 = f["classifier"], f["k"], f["features"], f["f32"]
    s.aggregate, s.post, s.binary, s.all_leq, s.positive = (
        f["aggregate"], f["post"], f["binary"], f["all_leq"], f["positive"])
    s.n_trees, s.n_nodes, s.n_base = len(roots), len(nodes["mode"]), len(base)
    cdef Buffer table = Buffer(max(s.n_nodes, 1) * sizeof(arm_ml_node))
    cdef arm_ml_node* nd = <arm_ml_node*>ex.hold(table)
    cols = {key: np.asarray(v).tolist() for key, v in nodes.items()}
    for i in range(s.n_nodes):
        nd[i].threshold, nd[i].feature = cols["threshold"][i], cols["feature"][i]
        nd[i].yes, nd[i].no, nd[i].leaf = cols["yes"][i], cols["no"][i], cols["leaf"][i]
        nd[i].mode, nd[i].missing_true = cols["mode"][i], cols["missing_true"][i]
    s.nodes = nd
    s.roots = <const int32_t*>ex.hold(_copy_array(roots, np.int32))
    s.depths = <const int32_t*>ex.hold(_copy_array(depths, np.int32))
    s.weights = <const double*>ex.hold(_copy_array(weights, np.float64))
    s.has = <const uint8_t*>ex.hold(_copy_array(has, np.uint8))
    s.base = <const double*>ex.hold(_copy_array(base, np.float64))
    s.labels = <const int64_t*>ex.hold(_copy_array(labels if len(labels) else [0], np.int64))
    s.slices = max(1, threads)
    s.op.threads = s.slices
    s.scratch_stride = arm_tree_scratch_bytes(s.features, s.k)
    s.scratch = <char*>ex.hold(Buffer(s.scratch_stride * s.slices))
    return ex
