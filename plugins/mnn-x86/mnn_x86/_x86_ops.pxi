# Cython glue of MatMul/Gemm, the element-wise, normalization, reduction, softmax, pooling, concat
# and transpose kernels, and the GEMM timer of the cost model: included by _x86.pyx.

#: a constant B of at most this many columns runs by dot products with its rows of B^T (csrc/op_narrow.c)
NARROW_N = 8


cdef void _narrow_matmul(Execution ex, x86_matmul_state* s, b_const):
    """s.b_narrow = B^T ([N][kp], K zero-padded to kp, a multiple of 16) from the constant B, whose element
    (k, n) is at k * b_rs + n * b_cs of its flat data."""
    flat = np.ascontiguousarray(b_const, dtype=np.float32).reshape(-1)
    kp = (s.K + 15) // 16 * 16
    bt = np.zeros((s.N, kp), np.float32)
    bt[:, : s.K] = flat[np.arange(s.K)[None, :] * s.b_rs + np.arange(s.N)[:, None] * s.b_cs]
    cdef Buffer buf = _copy_array(bt, np.float32)
    ex.keep.append(buf)
    s.b_narrow, s.b_narrow_kp = <const float*>buf.ptr, kp


def matmul(str isa, int threads, str name, dict p, b_const, a_off, b_off, bias, int bias_input):
    """MatMul/Gemm. p: M, N, K, batch, a_rs, a_cs, b_rs, b_cs, bias_rs, bias_cs,
    alpha, beta, act, act_alpha, act_beta. b_const: the raw constant B (packed
    here) or None; a_off/b_off: per-batch element offsets (int64) or None;
    bias: constant array (already broadcastable by bias_rs/bias_cs) or None. p["bf16"]: a constant B
    runs on bf16 operands (precision="low", precision.py)."""
    bf16 = bool(p.get("bf16")) and b_const is not None
    cdef Execution ex = _execution(f"{name}.bf16" if bf16 else name, sizeof(x86_matmul_state), x86_matmul_run,
                                   isa, threads, p["K"])
    cdef x86_matmul_state* s = <x86_matmul_state*>ex.state
    cdef const x86_kernels* k = s.op.k
    cdef Buffer buf
    cdef int64_t t, a_panel, b_panel
    cdef const float* bsrc
    cdef const int64_t* boff
    cdef bint fresh = True
    ex.packed = ((1,) if b_const is not None else ()) + ((2,) if bias is not None else ())
    s.M, s.N, s.K, s.batch = p["M"], p["N"], p["K"], p["batch"]
    s.a_rs, s.a_cs, s.b_rs, s.b_cs = p["a_rs"], p["a_cs"], p["b_rs"], p["b_cs"]
    _epilogue(&s.epi, p["act"], p["act_alpha"], p["act_beta"], p["alpha"], p["beta"])
    s.epi.bias_rs, s.epi.bias_cs = p["bias_rs"], p["bias_cs"]
    s.bias_input = -1
    if bias is not None:
        buf = _copy_array(bias, np.float32)
        ex.keep.append(buf)
        s.epi.bias = <const float*>buf.ptr
    elif bias_input >= 0:
        s.bias_input = bias_input
    if a_off is not None:
        buf = _copy_array(a_off, np.int64)
        ex.keep.append(buf)
        s.a_off = <const int64_t*>buf.ptr
    if b_off is not None:
        buf = _copy_array(b_off, np.int64)
        ex.keep.append(buf)
        s.b_off = <const int64_t*>buf.ptr
    if bf16:
        _bf16_matmul(ex, s, isa, b_const, threads)
        return ex
    if b_const is not None and s.batch == 1 and 0 < s.N <= NARROW_N and s.a_cs == 1 and s.M > 0 and s.K > 0:
        _narrow_matmul(ex, s, b_const)
        return ex
    a_panel = (s.M + k.mr - 1) // k.mr * k.mr * s.K
    b_panel = (s.N + k.nr - 1) // k.nr * k.nr * s.K
    s.a_work_floats = a_panel  # packing space: the run's scratch, one per thread (op_matmul.c)
    if b_const is not None:
        bc = np.ascontiguousarray(b_const, dtype=np.float32)
        s.b_packed_stride = b_panel if b_off is not None else 0
        if b_off is None:  # one B: packed once for every plan of the model that multiplies by it (_packed)
            buf = _packed(b_const, ("matmul", <bytes>k.name, s.K, s.N, s.b_rs, s.b_cs), b_panel, &fresh)
        else:
            buf = _floats(b_panel * s.batch)
        ex.keep.append(buf)
        s.b_packed = <const float*>buf.ptr
        bsrc = <const float*><size_t>bc.ctypes.data
        if bc.size and fresh:
            for t in range(s.batch if b_off is not None else 1):
                k.pack_b(bsrc + (s.b_off[t] if b_off is not None else 0), s.b_rs, s.b_cs, s.K, s.N,
                         <float*>buf.ptr + t * s.b_packed_stride, threads)
    else:
        s.b_work_floats = b_panel
    return ex


def attention(str isa, int threads, str name, dict p, mask_off):
    """x86.Attention: softmax(scale * Q K^T + mask) V per batch matrix (csrc/op_attention.c). p: batch, M,
    N, D, Dv, k_rows, scale, mask_input, mask_cs, and q, k, v, y: each operand's (heads, bs, hs, rs, off) (ops.h's
    x86_attention_walk); mask_off: per batch matrix, the element offset of its mask row (int64), or None:
    no mask."""
    cdef Execution ex = _execution(name, sizeof(x86_attention_state), x86_attention_run, isa, threads)
    cdef x86_attention_state* s = <x86_attention_state*>ex.state
    cdef Buffer buf
    s.batch, s.M, s.N, s.D, s.Dv = p["batch"], p["M"], p["N"], p["D"], p["Dv"]
    s.k_rows, s.scale = p["k_rows"], p["scale"]
    s.q.heads, s.q.bs, s.q.hs, s.q.rs, s.q.off = p["q"]
    s.k.heads, s.k.bs, s.k.hs, s.k.rs, s.k.off = p["k"]
    s.v.heads, s.v.bs, s.v.hs, s.v.rs, s.v.off = p["v"]
    s.y.heads, s.y.bs, s.y.hs, s.y.rs, s.y.off = p["y"]
    _epilogue(&s.epi, 0, 0.0, 0.0)
    s.mask_input = -1
    if mask_off is not None:
        buf = _copy_array(mask_off, np.int64)
        ex.keep.append(buf)
        s.mask_off = <const int64_t*>buf.ptr
        s.mask_input, s.mask_cs = p["mask_input"], p["mask_cs"]
    return ex


def binary(str isa, int threads, str name, int op, dims, sa, sb):
    """A binary element-wise op over 1 to 8 collapsed dims with strides sa/sb (0: broadcast)."""
    if not 1 <= len(dims) <= 8:
        raise ValueError(f"x86 binary ops take 1 to 8 collapsed dims, got {len(dims)}")
    cdef Execution ex = _execution(name, sizeof(x86_binary_state), x86_binary_run, isa, threads)
    cdef x86_binary_state* s = <x86_binary_state*>ex.state
    cdef int i
    s.binop = op
    s.ndim = len(dims)
    for i in range(s.ndim):
        s.dims[i], s.sa[i], s.sb[i] = dims[i], sa[i], sb[i]
    return ex


def unary(str isa, int threads, str name, int act, float act_alpha, float act_beta):
    cdef Execution ex = _execution(name, sizeof(x86_unary_state), x86_unary_run, isa, threads)
    cdef x86_unary_state* s = <x86_unary_state*>ex.state
    _epilogue(&s.epi, act, act_alpha, act_beta)
    return ex


def affine(str isa, int threads, str name, int64_t outer, int64_t C, int64_t inner, scale, shift, float eps=0.0):
    """y = x * scale[c] + shift[c] over [outer][C][inner]. scale/shift None: fold
    batch-norm inputs 1..4 (scale, B, mean, var) with eps at each run."""
    cdef Execution ex = _execution(name, sizeof(x86_affine_state), x86_affine_run, isa, threads)
    cdef x86_affine_state* s = <x86_affine_state*>ex.state
    cdef Buffer sc, sh
    if scale is None:
        sc, sh = _floats(C), _floats(C)
        s.runtime_params = 1
    else:
        sc, sh = _copy_array(scale, np.float32), _copy_array(shift, np.float32)
    ex.keep += [sc, sh]
    s.outer, s.C, s.inner, s.eps = outer, C, inner, eps
    s.scale, s.shift = <float*>sc.ptr, <float*>sh.ptr
    return ex


def norm(str isa, int threads, str name, int64_t rows, int64_t n, int64_t per_row, float eps, scale, shift,
         int scale_input, int shift_input):
    """Rows of n normalized, then scaled/shifted per channel (per_row = C) or per
    element (per_row = 0). scale/shift: constant arrays, or None with the input
    index they arrive at (-1: absent)."""
    cdef Execution ex = _execution(name, sizeof(x86_norm_state), x86_norm_run, isa, threads)
    cdef x86_norm_state* s = <x86_norm_state*>ex.state
    cdef Buffer b
    s.rows, s.n, s.per_row, s.eps = rows, n, per_row, eps
    s.scale_input, s.shift_input = -1, -1
    if scale is not None:
        b = _copy_array(scale, np.float32)
        ex.keep.append(b)
        s.scale = <const float*>b.ptr
    else:
        s.scale_input = scale_input
    if shift is not None:
        b = _copy_array(shift, np.float32)
        ex.keep.append(b)
        s.shift = <const float*>b.ptr
    else:
        s.shift_input = shift_input
    return ex


def reduce(str isa, int threads, str name, int64_t rows, int64_t n, int kind):
    """One value per row of n: max (kind 0) or mean (kind 1)."""
    cdef Execution ex = _execution(name, sizeof(x86_reduce_state), x86_reduce_run, isa, threads)
    cdef x86_reduce_state* s = <x86_reduce_state*>ex.state
    s.rows, s.n, s.kind = rows, n, kind
    return ex


def softmax(str isa, int threads, str name, int64_t outer, int64_t axis, int64_t inner, bint log=False):
    cdef Execution ex = _execution(name, sizeof(x86_softmax_state), x86_softmax_run, isa, threads)
    cdef x86_softmax_state* s = <x86_softmax_state*>ex.state
    s.outer, s.axis, s.inner, s.log = outer, axis, inner, log
    return ex


cdef void _pool_geom(x86_pool_geom* g, dict p):
    """p: H, W, OH, OW, kh, kw, sh, sw, dh, dw, pt, pl, nc16 (optional: NC16 sides, the planes blocks);
    max pooling (kind 0) until set otherwise."""
    g.H, g.W, g.OH, g.OW = p["H"], p["W"], p["OH"], p["OW"]
    g.kh, g.kw, g.sh, g.sw = p["kh"], p["kw"], p["sh"], p["sw"]
    g.dh, g.dw, g.pt, g.pl = p["dh"], p["dw"], p["pt"], p["pl"]
    g.kind = 0
    g.nc16 = p.get("nc16", 0)
    g.inv_rows = g.inv_cols = NULL


def pool(str isa, int threads, str name, int64_t planes, dict p, int kind, inv_rows, inv_cols):
    """Max (kind 0) or average (kind 1) pooling of planes; p: H, W, OH, OW, kh, kw, sh, sw, dh, dw, pt, pl."""
    cdef Execution ex = _execution(name, sizeof(x86_pool_state), x86_pool_run, isa, threads)
    cdef x86_pool_state* s = <x86_pool_state*>ex.state
    cdef Buffer rows = _copy_array(inv_rows, np.float32), cols = _copy_array(inv_cols, np.float32)
    s.planes = planes
    _pool_geom(&s.g, p)
    s.g.kind = kind
    s.g.inv_rows, s.g.inv_cols = <const float*>rows.ptr, <const float*>cols.ptr
    cdef Buffer work = _floats(max(threads, 1) * x86_pool_work_floats(&s.g))
    s.work = <float*>work.ptr
    ex.keep += [rows, cols, work]
    return ex


def concat(str isa, int threads, str name, int64_t outer, blocks):
    cdef Execution ex = _execution(name, sizeof(x86_concat_state), x86_concat_run, isa, threads)
    cdef x86_concat_state* s = <x86_concat_state*>ex.state
    cdef Buffer b = _copy_array(blocks, np.int64)
    ex.keep.append(b)
    s.outer, s.n, s.block = outer, len(blocks), <const int64_t*>b.ptr
    return ex


def transpose(str isa, int threads, str name, dims, strides):
    cdef Execution ex = _execution(name, sizeof(x86_transpose_state), x86_transpose_run, isa, threads)
    cdef x86_transpose_state* s = <x86_transpose_state*>ex.state
    cdef int i
    if len(dims) > 8:
        raise ValueError("x86 Transpose handles up to 8 dimensions")
    s.ndim = len(dims)
    for i in range(s.ndim):
        s.dims[i], s.strides[i] = dims[i], strides[i]
    return ex


# -- measurement, for bench_kernels.py and the cost model ------------------------------

def bench_gemm(str isa, int threads, int64_t M, int64_t N, int64_t K, int reps=10) -> float:
    """Seconds per call of the packed GEMM on pre-packed random operands."""
    cdef const x86_kernels* k = _table(isa)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((M, K), dtype=np.float32)
    b = rng.standard_normal((K, N), dtype=np.float32)
    cdef Buffer ap = _floats((M + k.mr - 1) // k.mr * k.mr * K)
    cdef Buffer bp = _floats((N + k.nr - 1) // k.nr * k.nr * K)
    cdef Buffer c = _floats(M * N)
    cdef x86_epilogue e
    _epilogue(&e, 0, 0.0, 0.0)
    k.pack_a(<const float*><size_t>a.ctypes.data, K, 1, M, K, <float*>ap.ptr, threads)
    k.pack_b(<const float*><size_t>b.ctypes.data, N, 1, K, N, <float*>bp.ptr, threads)
    cdef int r
    with nogil:
        k.gemm(M, N, K, <const float*>ap.ptr, <const float*>bp.ptr, <float*>c.ptr, N, &e, threads)
    t0 = time.perf_counter()
    with nogil:
        for r in range(reps):
            k.gemm(M, N, K, <const float*>ap.ptr, <const float*>bp.ptr, <float*>c.ptr, N, &e, threads)
    return (time.perf_counter() - t0) / reps
