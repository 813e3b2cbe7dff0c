# Data movement and reductions (csrc/move.h): the states of ops_move.py and ops_reduce.py.
# Included by _arm.pyx (Buffer, Execution, _execution and _copy live there).

cdef extern from "move.h" nogil:
    enum: ARM_MOVE_MAX_DIMS
    ctypedef struct arm_strided_state:
        arm_op op
        int32_t ndim, elem
        int64_t base
        int64_t dims[16]
        int64_t st[16]
    ctypedef struct arm_gather_state:
        arm_op op
        int32_t idx_bytes
        int64_t outer, axis, inner_bytes
    ctypedef struct arm_gather_el_state:
        arm_op op
        int32_t idx_bytes, elem
        int64_t outer, n, axis, inner
    ctypedef struct arm_where_state:
        arm_op op
        int32_t ndim, elem
        int64_t dims[8]
        int64_t sc[8]
        int64_t sx[8]
        int64_t sy[8]
    ctypedef struct arm_pad_state:
        arm_op op
        int32_t ndim, elem
        int64_t dims[8]
        int64_t off[8]
        const int64_t* map
        uint8_t value[8]
    ctypedef struct arm_reduce_any_state:
        arm_op op
        int32_t kind, block
        int64_t outer, n, inner
        int32_t nk, nr
        int64_t kdims[8]
        int64_t kst[8]
        int64_t rdims[8]
        int64_t rst[8]
    int arm_strided_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int arm_split_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int arm_gather_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int arm_gather_elements_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int arm_where_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int arm_pad_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int arm_reduce_any_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept


def strided(str name, int elem, int64_t base, dims, strides):
    """out (dense, dims) = in[base + sum(index * stride)], elements of `elem` bytes."""
    if not 1 <= len(dims) <= ARM_MOVE_MAX_DIMS or len(strides) != len(dims):
        raise ValueError(f"arm strided copy: 1 to {ARM_MOVE_MAX_DIMS} dims with one stride each, got {dims} {strides}")
    cdef Execution ex = _execution(name, sizeof(arm_strided_state), arm_strided_run)
    cdef arm_strided_state* s = <arm_strided_state*>ex.state
    s.ndim, s.elem, s.base = len(dims), elem, base
    for i in range(s.ndim):
        s.dims[i], s.st[i] = dims[i], strides[i]
    return ex


def split(str name, int64_t outer, blocks, int64_t elem):
    """Concat backwards: output k takes blocks[k] elements of every outer row."""
    cdef Execution ex = _execution(name, sizeof(arm_concat_state), arm_split_run)
    cdef arm_concat_state* s = <arm_concat_state*>ex.state
    s.outer, s.n, s.elem = outer, len(blocks), elem
    s.block = <const int64_t*>ex.hold(_copy_array(blocks, np.int64))
    return ex


def gather(str name, int64_t outer, int64_t axis, int64_t inner_bytes, int idx_bytes):
    cdef Execution ex = _execution(name, sizeof(arm_gather_state), arm_gather_run)
    cdef arm_gather_state* s = <arm_gather_state*>ex.state
    s.outer, s.axis, s.inner_bytes, s.idx_bytes = outer, axis, inner_bytes, idx_bytes
    return ex


def gather_elements(str name, int64_t outer, int64_t n, int64_t axis, int64_t inner, int elem, int idx_bytes):
    cdef Execution ex = _execution(name, sizeof(arm_gather_el_state), arm_gather_elements_run)
    cdef arm_gather_el_state* s = <arm_gather_el_state*>ex.state
    s.outer, s.n, s.axis, s.inner, s.elem, s.idx_bytes = outer, n, axis, inner, elem, idx_bytes
    return ex


def where(str name, int elem, dims, sc, sx, sy):
    if not 1 <= len(dims) <= 8:
        raise ValueError(f"arm Where takes 1 to 8 merged dims, got {len(dims)}")
    cdef Execution ex = _execution(name, sizeof(arm_where_state), arm_where_run)
    cdef arm_where_state* s = <arm_where_state*>ex.state
    s.ndim, s.elem = len(dims), elem
    for i in range(s.ndim):
        s.dims[i], s.sc[i], s.sx[i], s.sy[i] = dims[i], sc[i], sx[i], sy[i]
    return ex


def pad(str name, int elem, dims, maps, bytes value):
    """maps[d][i]: the input element offset of output index i along axis d, -1 for the constant."""
    if not 1 <= len(dims) <= 8 or len(value) > 8:
        raise ValueError(f"arm Pad takes 1 to 8 dims and a constant of at most 8 bytes")
    cdef Execution ex = _execution(name, sizeof(arm_pad_state), arm_pad_run)
    cdef arm_pad_state* s = <arm_pad_state*>ex.state
    s.ndim, s.elem = len(dims), elem
    offs = np.cumsum([0] + [len(m) for m in maps])
    for i in range(s.ndim):
        s.dims[i], s.off[i] = dims[i], offs[i]
    s.map = <const int64_t*>ex.hold(_copy_array(np.concatenate(maps) if maps else np.zeros(1), np.int64))
    for i in range(len(value)):
        s.value[i] = value[i]
    return ex


def reduce_any(str name, int kind, int64_t outer, int64_t n, int64_t inner, scattered):
    """One block of reduced axes (x [outer][n][inner]), or scattered = ((kept dims, strides), (reduced
    dims, strides)) of the merged input."""
    cdef Execution ex = _execution(name, sizeof(arm_reduce_any_state), arm_reduce_any_run)
    cdef arm_reduce_any_state* s = <arm_reduce_any_state*>ex.state
    s.kind = kind
    if scattered is None:
        s.block, s.outer, s.n, s.inner = 1, outer, n, inner
        return ex
    (kd, ks), (rd, rs) = scattered
    if len(kd) > 8 or len(rd) > 8:
        raise ValueError("arm reductions take at most 8 kept and 8 reduced dims")
    s.block, s.nk, s.nr = 0, len(kd), len(rd)
    for i in range(s.nk):
        s.kdims[i], s.kst[i] = kd[i], ks[i]
    for i in range(s.nr):
        s.rdims[i], s.rst[i] = rd[i], rs[i]
    return ex
