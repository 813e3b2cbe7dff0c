# The Cython glue of mnn-x86: it turns the parameters that mnn_x86/ops_*.py
# compute at prepare into C op states (csrc/ops.h), packs constant weights
# with the chosen ISA's kernels, and hands each state to the core as an
# mnn_execution in a PyCapsule. Nothing here runs per inference.
from cpython.pycapsule cimport PyCapsule_New
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint32_t
from libc.stdlib cimport calloc, free
from libc.string cimport memcpy, memset

from mnn_core.abi cimport (MNN_ABI_VERSION, MNN_EXEC_INPUTS_MAY_MOVE, MNN_EXECUTION_CAPSULE, mnn_execution, mnn_run_fn,
                           mnn_tensor)
from mnn_core.backend.kit.weights import checksum

import time
import weakref

import numpy as np

cdef extern from "posix_memalign_shim.h" nogil:
    int posix_memalign(void** memptr, size_t alignment, size_t size)

cdef extern from "x86.h" nogil:
    ctypedef struct x86_epilogue:
        float alpha, beta
        const float* bias
        int64_t bias_rs, bias_cs
        int32_t act
        float act_alpha, act_beta

    ctypedef struct x86_conv_geom:
        int64_t C, H, W, OH, OW
        int64_t kh, kw, sh, sw, dh, dw, pt, pl
        int32_t in_nc16, out_nc16
        int32_t out_stream

    ctypedef struct x86_pool_geom:
        int64_t H, W, OH, OW, kh, kw, sh, sw, dh, dw, pt, pl
        int32_t kind, nc16
        const float* inv_rows
        const float* inv_cols

    ctypedef struct x86_kernels:
        const char* name
        int32_t mr, nr, vlen
        void (*pack_a)(const float* a, int64_t rs, int64_t cs, int64_t M, int64_t K, float* ap,
                       int threads) noexcept nogil
        void (*pack_b)(const float* b, int64_t rs, int64_t cs, int64_t K, int64_t N, float* bp,
                       int threads) noexcept nogil
        void (*gemm)(int64_t M, int64_t N, int64_t K, const float* ap, const float* bp, float* c, int64_t ldc,
                     const x86_epilogue* e, int threads) noexcept nogil
        void (*direct_plan)(const x86_conv_geom* g, int64_t N, int64_t O, int threads, int64_t* rows,
                            int64_t* parts, int64_t* worker_floats, int64_t* w_floats) noexcept nogil
        void (*direct_pack)(const float* w, int64_t O, int64_t K, float* wd) noexcept nogil
        void (*direct_pool_plan)(const x86_conv_geom* g, const x86_pool_geom* pg, int64_t N, int64_t O,
                                 int threads, int64_t* rows, int64_t* parts, int64_t* worker_floats) noexcept nogil
        void* gap_panel

    int64_t x86_depthwise_work_floats(const x86_conv_geom* g, int vlen)
    int64_t x86_pwdw_floats(const x86_conv_geom* g)
    void x86_conv_plan(const x86_kernels* k, const x86_conv_geom* g, int64_t images, int64_t og, int threads,
                       int64_t* chunk_cols, int32_t* per_item)
    int64_t x86_pool_work_floats(const x86_pool_geom* g)
    void x86_wino_plan(const x86_kernels* k, int64_t N, int64_t C, int64_t O, int64_t OH, int64_t OW, int threads,
                       int nc16, int64_t* tc, int32_t* per_chunk, int32_t* gemm_t, int64_t* work_floats)
    int x86_isa_compiled(const char* isa)
    int x86_cpu_supports(const char* isa)
    int x86_omp_usable
    const x86_kernels* x86_kernels_for(const char* isa)
    int x86_avx512_rows()
    int x86_set_avx512_rows(int rows)
    double x86_fma512_cost_ratio()
    const x86_kernels* x86_kernels_tile(const char* isa, int rows)

cdef extern from "bf16.h" nogil:
    ctypedef struct x86_bf16_kernels:
        const char* name
        int32_t mr, nr
        void (*pack_a)(const float* a, int64_t rs, int64_t cs, int64_t M, int64_t K, uint32_t* ap,
                       int threads) noexcept nogil
        void (*pack_b)(const float* b, int64_t rs, int64_t cs, int64_t K, int64_t N, uint32_t* bp,
                       int threads) noexcept nogil

    ctypedef struct x86_bf16_conv:
        const x86_bf16_kernels* kb
        const uint32_t* w
        int64_t w_group_stride
        uint32_t* bp
        int64_t bp_words

    ctypedef struct x86_bf16_matmul:
        const x86_bf16_kernels* kb
        const uint32_t* b
        int64_t b_stride
        uint32_t* a

    int64_t x86_bf16_words(int64_t rows, int64_t tile, int64_t K)
    int x86_cpu_supports_bf16()
    const x86_bf16_kernels* x86_bf16_kernels_for(const char* isa)

cdef extern from "x86.h" nogil:
    ctypedef struct x86_pool_api:
        pass
    const x86_pool_api x86_pool_functions

cdef extern from "ops.h" nogil:
    ctypedef struct x86_op:
        const x86_kernels* k
        int32_t threads
        const char* error

    const char* x86_op_error(void* state) noexcept

    ctypedef struct x86_conv_state:
        x86_op op
        int32_t depthwise, weight_input, bias_input
        int64_t N, O, group, og
        x86_conv_geom g
        float* w
        int64_t w_group_stride
        const float* bias
        x86_epilogue epi
        const x86_bf16_conv* bf16
        float* work
        int64_t chunk_cols, chunk_floats
        int32_t per_item
        int32_t winograd
        int32_t wino_gemm_t
        int32_t transposed
        float* t_work
        int32_t pointwise
        int32_t direct
        int64_t d_rows, d_parts, d_worker_floats
        int32_t pool
        x86_pool_geom pg
        int32_t gap
        int32_t res_input
        x86_epilogue res_act
        int32_t pwdw
        x86_conv_geom dg
        const float* dw_w
        const float* dw_bias
        x86_epilogue dw_epi

    ctypedef struct x86_matmul_state:
        x86_op op
        int64_t M, N, K, batch
        int64_t a_rs, a_cs, b_rs, b_cs
        const int64_t* a_off
        const int64_t* b_off
        const float* b_packed
        int64_t b_packed_stride
        float* a_work
        float* b_work
        int32_t bias_input
        x86_epilogue epi
        const x86_bf16_matmul* bf16

    ctypedef struct x86_binary_state:
        x86_op op
        int32_t binop, ndim
        int64_t dims[8]
        int64_t sa[8]
        int64_t sb[8]

    ctypedef struct x86_unary_state:
        x86_op op
        x86_epilogue epi

    ctypedef struct x86_affine_state:
        x86_op op
        int64_t outer, C, inner
        float* scale
        float* shift
        int32_t runtime_params
        float eps

    ctypedef struct x86_norm_state:
        x86_op op
        int64_t rows, n, per_row
        float eps
        const float* scale
        const float* shift
        int32_t scale_input, shift_input

    ctypedef struct x86_reduce_state:
        x86_op op
        int64_t rows, n
        int32_t kind

    ctypedef struct x86_softmax_state:
        x86_op op
        int64_t outer, axis, inner
        int32_t log

    ctypedef struct x86_pool_state:
        x86_op op
        int64_t planes
        x86_pool_geom g
        float* work

    ctypedef struct x86_concat_state:
        x86_op op
        int64_t outer
        int32_t n
        const int64_t* block

    ctypedef struct x86_transpose_state:
        x86_op op
        int32_t ndim
        int64_t dims[8]
        int64_t strides[8]

    int x86_conv_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    void x86_conv_transposed_plan(const x86_kernels* k, const x86_conv_geom* g, int64_t O, int threads,
                                  int64_t* chunk, int32_t* per_item, int64_t* work_floats)
    int x86_matmul_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int x86_binary_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int x86_unary_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int x86_affine_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int x86_norm_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int x86_reduce_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int x86_softmax_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int x86_pool_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int x86_concat_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int x86_transpose_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept


# -- the ISA tables ----------------------------------------------------------------

def compiled(str isa) -> bool:
    """Whether this binary carries kernels for `isa`."""
    return bool(x86_isa_compiled(isa.encode()))


def cpu_supports(str isa) -> bool:
    """Whether `isa` is compiled in and this CPU can run it (cpuid)."""
    return bool(x86_cpu_supports(isa.encode()))


def openmp_usable() -> bool:
    """False in a process forked after OpenMP regions ran on several threads (x86.h: X86_OMP): its
    OpenMP loops run on one thread there, as libgomp's team did not survive the fork."""
    return bool(x86_omp_usable)


def avx512_rows() -> int:
    """Rows of the AVX-512 fp32 GEMM's register tile in use (6, 14 or 8; isa.py: TILES)."""
    return x86_avx512_rows()


def fma512_cost_ratio() -> float:
    """Time of 512-bit FMAs over 256-bit ones at full throughput, measured now (about 1.0 on two
    512-bit FMA units, 2.0 where a 512-bit FMA is split in two or one unit takes it; 0.0 without
    AVX-512). Below 1.5 the AVX-512 tile is 14x32, else 6x32."""
    return x86_fma512_cost_ratio()


def set_avx512_rows(int rows) -> None:
    """6, 14 or 8 rows for the AVX-512 GEMM tile from now on in this process, 0 to choose by the CPU."""
    if x86_set_avx512_rows(rows):
        raise ValueError(f"x86: the AVX-512 tile has 6, 14 or 8 rows (0: by the CPU), not {rows}")


cdef const x86_kernels* _table(str isa, int64_t depth=0, int64_t rows=0, int64_t cols=0) except NULL:
    """The kernel table of `isa`. Where the 14x32 AVX-512 tile is in use, an op that says the shape
    of its GEMMs (`depth` = K; `rows` x `cols` = M x N, plain orientation) may get another: the 6x32
    table where K is too short for 14 rows (T14_MIN_DEPTH), the 8x48 one for few rows and many
    columns (T8_*)."""
    cdef const x86_kernels* k = x86_kernels_for(isa.encode())
    if k == NULL:
        raise RuntimeError(f"x86 kernels for ISA {isa!r} are not runnable on this CPU")
    if k.mr != 14 or depth <= 0:
        return k
    if rows and rows <= T8_MAX_ROWS and cols >= T8_MIN_COLS and depth >= T8_MIN_DEPTH:
        return x86_kernels_tile(isa.encode(), 8)
    if depth < T14_MIN_DEPTH:
        return x86_kernels_tile(isa.encode(), 6)
    return k


#: The 14x32 tile (Intel) halves the B loads per FMA, which pays over a long K, but zeroes, finishes
#: and stores 28 accumulators per tile: below this depth the 6x32 table is faster (measurements:
#: benchmarks/RESULTS.md, "Notes moved from the code").
T14_MIN_DEPTH = 160

#: The 8x48 tile (isa_avx512_t8.c) for a GEMM of at most T8_MAX_ROWS rows and T8_MIN_COLS columns
#: or more, over a K of T8_MIN_DEPTH or more. A GEMM of 16 or 32 rows leaves the 14- and 6-row
#: tiles a last panel of 2 or 4 rows, a tile of few accumulators that walks all of B once more;
#: 8 rows divide them. With 48 columns a tile loads 3 B vectors per 8 broadcasts. Too short a K
#: leaves the 24 accumulators' stores unpaid, and a column count just past a multiple of 48 wastes
#: a panel (benchmarks/gemm_tiles; the numbers: RESULTS.md, "Notes moved from the code").
T8_MAX_ROWS = 128
T8_MIN_COLS = 512
T8_MIN_DEPTH = 32


def bf16_runs(str isa) -> bool:
    """Whether the bf16 GEMM (precision="low") runs under `isa` here: AVX-512 with BF16 (cpuid)."""
    return x86_bf16_kernels_for(isa.encode()) != NULL


def gemm_table_rows(str isa, int64_t depth, int64_t rows=0, int64_t cols=0) -> int:
    """MR of the table an op whose GEMMs are rows x cols over K = depth gets (_table): tests and tools."""
    return _table(isa, depth, rows, cols).mr


def table_info(str isa) -> dict:
    """Register-tile geometry of an ISA's GEMM: {'mr', 'nr', 'vlen'}."""
    cdef const x86_kernels* k = _table(isa)
    return {"mr": k.mr, "nr": k.nr, "vlen": k.vlen}


def pool_capsule():
    """The thread pool's functions (x86_pool_api), for the op modules built apart (family.pxd)."""
    return PyCapsule_New(<void*>&x86_pool_functions, b"mnn_x86.pool", NULL)


# -- memory owned by executions ----------------------------------------------------

cdef class Buffer:
    """Zeroed, 64-byte aligned memory for packed weights, scratch or tables (fields: _x86.pxd)."""

    def __cinit__(self, int64_t nbytes):
        self.ptr = NULL
        self.nbytes = nbytes
        if posix_memalign(&self.ptr, 64, <size_t>max(nbytes, 64)) != 0:
            raise MemoryError(f"x86: cannot allocate {nbytes} bytes")
        memset(self.ptr, 0, <size_t>max(nbytes, 64))

    def __dealloc__(self):
        free(self.ptr)


cdef Buffer _floats(int64_t n):
    return Buffer(n * 4)


#: Constant weights packed for a kernel, by (id of the weight array, the packing): two sessions of one
#: model (the one-image sessions of Session(batch_parallel=...), a session per input shape) share them
#: instead of each holding its own copy. An entry lives as long as an execution keeps its Buffer.
#: `source` is a weak reference, so the session can free the array once packed (mnn_core/runtime/weights.py):
#: an entry whose array died no longer matches, whichever array has its id now; the CRC-32 of the
#: bytes (about 2 GB/s) catches an array changed in place since (a fine-tuning step, say).
_packed_cache = weakref.WeakValueDictionary()


cdef Buffer _packed(weight, tuple how, int64_t floats, bint* fresh):
    """`weight` packed as `how`: the cached Buffer while the array is unchanged (fresh[0] false), else a
    new zeroed one of `floats`, remembered (fresh[0] true: the caller packs it, before any other
    prepare can look it up, since prepares hold the GIL)."""
    key, crc = (id(weight),) + how, checksum(weight)
    cdef Buffer buf = _packed_cache.get(key)
    fresh[0] = buf is None or buf.source() is not weight or buf.checksum != crc
    if fresh[0]:
        buf = _floats(floats)
        buf.source, buf.checksum = weakref.ref(weight), crc
        _packed_cache[key] = buf
    return buf


cdef Buffer _copy_array(arr, dtype):
    """A Buffer holding a C-contiguous copy of `arr` as `dtype`."""
    a = np.ascontiguousarray(arr, dtype=dtype)
    cdef Buffer buf = Buffer(a.nbytes)
    if a.nbytes:
        memcpy(buf.ptr, <void*><size_t>a.ctypes.data, a.nbytes)
    return buf


cdef class Execution:
    """One prepared op: an mnn_execution plus everything its state points to (fields: _x86.pxd)."""

    def __cinit__(self):
        self.state = NULL
        self.keep = []
        self.packed = ()

    def __dealloc__(self):
        free(self.state)

    def capsule(self):
        return PyCapsule_New(&self.exe, MNN_EXECUTION_CAPSULE, NULL)

    @property
    def name(self):
        return self._name.decode()


cdef Execution _execution(str name, size_t state_size, mnn_run_fn fn, str isa, int threads, int64_t depth=0,
                          int64_t rows=0, int64_t cols=0):
    """A zeroed state of `state_size` bytes (an x86_op first) run by `fn`; the op module fills the rest."""
    cdef Execution ex = Execution()
    ex.state = calloc(1, state_size)
    if ex.state == NULL:
        raise MemoryError()
    cdef x86_op* op = <x86_op*>ex.state
    op.k = _table(isa, depth, rows, cols)
    op.threads = max(threads, 1)
    op.error = NULL
    ex._name = f"{name} [{isa}]".encode()
    ex.exe.abi_version = MNN_ABI_VERSION
    ex.exe.flags = MNN_EXEC_INPUTS_MAY_MOVE  # prepare never sees a pointer; every load is unaligned-safe
    ex.exe.run = fn
    ex.exe.state = ex.state
    ex.exe.error = x86_op_error
    ex.exe.name = ex._name
    return ex


cdef void _epilogue(x86_epilogue* e, int act, float act_alpha, float act_beta, float alpha=1.0, float beta=1.0):
    e.alpha = alpha
    e.beta = beta
    e.bias = NULL
    e.bias_rs = 0
    e.bias_cs = 0
    e.act = act
    e.act_alpha = act_alpha
    e.act_beta = act_beta


cdef void _conv_geom(x86_conv_geom* g, dict p):
    g.C, g.H, g.W, g.OH, g.OW = p["C"], p["H"], p["W"], p["OH"], p["OW"]
    g.kh, g.kw, g.sh, g.sw = p["kh"], p["kw"], p["sh"], p["sw"]
    g.dh, g.dw, g.pt, g.pl = p["dh"], p["dw"], p["pt"], p["pl"]
    g.in_nc16, g.out_nc16 = p.get("in_nc16", 0), p.get("out_nc16", 0)
    g.out_stream = p.get("out_stream", 0)


# -- one factory per op family ---------------------------------------------------------

def _gemm_depth(str kind, dict p) -> int:
    """K of a convolution's GEMMs, for the tile rules (_table); 0 where they do not apply: it runs no
    GEMM, or it is Winograd on at most WINO_T14_MAX_TILES tiles."""
    if kind.startswith("winograd") and p["N"] * -(-p["OH"] // 4) * -(-p["OW"] // 4) <= WINO_T14_MAX_TILES:
        return 0
    if kind.startswith(("pointwise", "winograd")):  # Winograd: 36 GEMMs over the input channels
        return p["C"]
    if kind.startswith(("gemm", "gap")):
        return p["C"] * p["kh"] * p["kw"]
    return 0


#: Winograd on so few tiles (13x13 and 14x14 planes at batch 1: 16) keeps the 14x32 tile whatever
#: its K: its 36 GEMMs have the tiles as rows (16: a 14-row panel and a 2-row one) and no bias or
#: activation to finish. On more tiles the K rule decides again (the measurements: RESULTS.md,
#: "Notes moved from the code").
WINO_T14_MAX_TILES = 16


def _gemm_rows_cols(str kind, dict p) -> tuple:
    """M x N of a plain fp32 convolution GEMM (output channels of a group x output pixels of an
    image), which may pick its tile by them (_table); (0, 0) for other kinds."""
    if kind == "gemm":
        return p["O"] // p["group"], p["OH"] * p["OW"]
    return 0, 0


def conv(str isa, int threads, dict p, weight, bias, int weight_input, int bias_input):
    """Conv. p: N, O, group, depthwise, act, act_alpha, act_beta and the geometry
    of one group (C = channels per group, ...). weight/bias: constant arrays or
    None when they arrive at run (weight_input/bias_input then name the input)."""
    cdef const x86_kernels* kt = x86_kernels_for(isa.encode())
    # an NC16 side (layouts.py chose it): the depthwise kernel, Winograd (its transforms read and write
    # blocks), or a plain 1x1 by the pointwise kernel
    gap = bool(p.get("gap"))
    blocked = bool(p.get("in_nc16") or p.get("out_nc16"))
    wino_blocked = (blocked and bool(p.get("winograd")) and weight is not None and p["group"] == 1
                    and not p["depthwise"] and not gap)
    pointwise = blocked and not p["depthwise"] and not gap and not wino_blocked
    if pointwise and not (_plain_1x1(p) and p["group"] == 1 and weight is not None):
        raise ValueError("x86: an NC16 tensor reaches a Conv that is neither depthwise, nor Winograd, nor a plain "
                         "1x1 with constant weights (mnn_x86/layouts.py should not have chosen it)")
    # p["gap"]: a plain 1x1 whose output a global average pooling alone reads (x86.ConvGlobalAvgPool):
    # register tiles of pixels x output channels, each tile's rows added into the channels' sums
    # (conv_gap_impl.h); the convolution's output is never stored. Its input may be NC16 (layouts.py)
    if gap and not (_plain_1x1(p) and p["group"] == 1 and weight is not None and not p["depthwise"]
                    and not p.get("out_nc16") and not p.get("bf16") and not p.get("direct")):
        raise ValueError("x86: a global average pooling fused after a convolution that is not a plain fp32 1x1 "
                         "of one group with constant weights (mnn_x86/fuse.py should not have fused them)")
    # p["transposed"]: None lets the lane rule choose, True/False force it (option x86.conv_t)
    transposed = (not gap and not p["depthwise"] and not pointwise and weight is not None and p["group"] == 1 and not p.get("winograd")
                  and kt != NULL and (_transposed_pays(p["OH"] * p["OW"], p["O"], p["C"] * p["kh"] * p["kw"],
                                                       _plain_1x1(p), kt.mr, kt.nr, kt.vlen)
                                      if p.get("transposed") is None else bool(p["transposed"])))
    # p["direct"]: few input channels, by the direct kernel (conv_direct_impl.h; ops_conv.py chose it),
    # which takes no dilation and a horizontal stride of 1 or 2 (its strip's columns: plain or split)
    direct = (bool(p.get("direct")) and weight is not None and p["group"] == 1 and not p["depthwise"]
              and not blocked and kt != NULL and p["dh"] == 1 and p["dw"] == 1 and p["sw"] in (1, 2))
    if direct:
        transposed = False
    winograd = bool(p.get("winograd")) and weight is not None and p["group"] == 1 and not pointwise and not direct
    # p["bf16"]: precision="low" on a CPU with AVX-512 BF16 (precision.py); the GEMM path with constant
    # weights then runs on bf16 operands, in the usual orientation, and so do Winograd's 36 GEMMs unless
    # p["bf16_winograd"] is false (x86.bf16="direct"). A 1x1 with an NC16 side stays fp32 (layouts.py
    # offers no NC16 when bf16 runs, so this only happens under x86.layouts="on")
    bf16 = (bool(p.get("bf16")) and weight is not None and not p["depthwise"] and not pointwise
            and not direct and (not winograd or bool(p.get("bf16_winograd"))))
    if bf16:
        transposed = False
    kind = ("depthwise" if p["depthwise"] else "gap" if gap else "pointwise" if pointwise else
            "direct" if direct else "winograd" if winograd else
            "gemm_t" if transposed else "gemm") + ("_bf16" if bf16 else "") + ("_maxpool" if p.get("pool") else "")
    if pointwise and p.get("pwdw") is not None:  # x86.ConvDepthwise
        kind += "_dw"
    gemm_rows, gemm_cols = _gemm_rows_cols(kind, p)
    # p["res"]: the input added to the result before the activation (x86.ConvAdd, a residual)
    res_input = p.get("res", -1)
    cdef Execution ex = _execution(f"x86.Conv.{kind}" + ("+add" if res_input >= 0 else ""), sizeof(x86_conv_state),
                                   x86_conv_run, isa, threads, _gemm_depth(kind, p), gemm_rows, gemm_cols)
    cdef x86_conv_state* s = <x86_conv_state*>ex.state
    cdef const x86_kernels* k = s.op.k
    cdef Buffer w, work, b
    cdef int64_t gi, Kg, panels
    cdef bint fresh
    ex.packed = tuple(i for i, c in ((weight_input, weight), (bias_input, bias)) if c is not None and i >= 0)
    _conv_geom(&s.g, p)
    s.N, s.O, s.group = p["N"], p["O"], p["group"]
    s.og = s.O // s.group
    s.depthwise = p["depthwise"]
    s.weight_input = -1 if weight is not None else weight_input
    s.bias_input = -1 if bias is not None or bias_input < 0 else bias_input
    _epilogue(&s.epi, p["act"], p["act_alpha"], p["act_beta"])
    s.res_input = res_input
    _epilogue(&s.res_act, 0, 0.0, 0.0)
    if res_input >= 0 and not pointwise:  # other paths add the residual after, then activate (op_conv.c)
        s.res_act, s.epi.act = s.epi, 0
    if bias is not None:
        b = _copy_array(bias, np.float32)
        ex.keep.append(b)
        s.bias = <const float*>b.ptr
    Kg = s.g.C * s.g.kh * s.g.kw
    if p.get("pool") is not None and not direct:
        raise ValueError("x86: a max pooling fused after a convolution the direct kernel does not run "
                         "(mnn_x86/fuse.py should not have fused it)")
    if direct:
        if p.get("pool") is not None:
            _pool_geom(&s.pg, p["pool"])
            s.pool = 1
        _direct_weights(ex, s, weight, threads)
        return ex
    if winograd:
        _winograd_weights(ex, s, weight, threads, isa if bf16 else None)
        return ex
    if gap:  # pixels as the tiles' rows: W^T in pack_b panels, no scratch (csrc/conv_gap_impl.h)
        _transposed_weights(ex, s, weight, threads, scratch=False)
        s.transposed, s.gap = 0, 1
        return ex
    if transposed or pointwise:  # the pointwise kernel reads X^T in place and needs no scratch
        _transposed_weights(ex, s, weight, threads, scratch=not pointwise)
        s.transposed, s.pointwise = not pointwise, pointwise
        if p.get("pwdw") is not None:
            _pointwise_dw(ex, s, p["pwdw"], threads)
        return ex
    if s.depthwise:
        if weight is not None:
            w = _copy_array(weight, np.float32)  # [C][1][kh][kw] is already [C][kh*kw]
            ex.keep.append(w)
            s.w = <float*>w.ptr
        work = _floats(max(threads, 1) * x86_depthwise_work_floats(&s.g, k.vlen))
    else:
        if not bf16:
            panels = (s.og + k.mr - 1) // k.mr
            s.w_group_stride = panels * k.mr * Kg
            if weight is not None:
                w = _packed(weight, ("gemm", <bytes>k.name, s.group), s.group * s.w_group_stride, &fresh)
            else:  # packed at each run
                w = _floats(s.group * s.w_group_stride)
            ex.keep.append(w)
            s.w = <float*>w.ptr
            if weight is not None and fresh:
                wc = np.ascontiguousarray(weight, dtype=np.float32)
                _pack_a_groups(k, wc, s.group, s.og, Kg, s.w, s.w_group_stride, threads)
        x86_conv_plan(k, &s.g, s.N * s.group, s.og, threads, &s.chunk_cols, &s.per_item)
        s.chunk_floats = s.chunk_cols * Kg
        work = _floats((max(threads, 1) if s.per_item else 1) * s.chunk_floats)
        if bf16:
            _bf16_conv(ex, s, isa, weight, threads)
    ex.keep.append(work)
    s.work = <float*>work.ptr
    return ex


cdef void _pointwise_dw(Execution ex, x86_conv_state* s, dict d, int threads) except *:
    """x86.ConvDepthwise: the depthwise convolution d (its geometry, act, act_alpha, act_beta and constant
    weight and bias) after this op's 1x1, which writes it NC16 rows (csrc/pwdw_impl.h)."""
    cdef Buffer w = _copy_array(d["weight"], np.float32)  # [C][1][kh][kw] is already [C][kh*kw]
    cdef Buffer b
    ex.keep.append(w)
    s.dw_w = <const float*>w.ptr
    s.dw_bias = NULL
    if d.get("bias") is not None:
        b = _copy_array(d["bias"], np.float32)
        ex.keep.append(b)
        s.dw_bias = <const float*>b.ptr
    _conv_geom(&s.dg, d)
    _epilogue(&s.dw_epi, d["act"], d["act_alpha"], d["act_beta"])
    cdef Buffer work = _floats(max(threads, 1) * x86_pwdw_floats(&s.dg))
    ex.keep.append(work)
    s.work = <float*>work.ptr
    s.pwdw = 1


# -- inference (x86infer) ----------------------------------------------------------------

#: The transposed orientation's own passes (X^T into A panels, C^T into NCHW) against the usual
#: one's, measured on Zen 4 (RESULTS.md, "small planes"): a plain 1x1 reads its input in place in
#: the usual orientation, so the transposed one must use clearly more of the tiles (7x7 planes: 49 of
#: 56 rows against 49 of 64 columns) on at most 8x8 planes (MobileNetV2's 14x14 ones with 64 outputs,
#: 16 % more lanes, ran 25 % slower: packing X^T and transposing C^T cost more there); an im2col convolution
#: copies its input either way, and the transposed copy is the cheaper one, so a few percent more
#: lanes suffice (AVX2's 14x14 and 28x28 gain 2-3 %: not enough) while the output is small or the
#: GEMM long enough (K >= 256) to hide the transpose.
TRANSPOSED_1X1_MIN_GAIN = 1.10
TRANSPOSED_IM2COL_MIN_GAIN = 1.04
TRANSPOSED_1X1_MAX_PIXELS = 64
TRANSPOSED_MAX_PIXELS = 1024
TRANSPOSED_SMALL_PIXELS = 256
TRANSPOSED_LONG_K = 256


def _plain_1x1(dict p):
    """A 1x1 convolution of stride 1 without padding: its GEMM reads the NCHW input as it is."""
    return (p["kh"], p["kw"], p["sh"], p["sw"], p["pt"], p["pl"], p["OH"], p["OW"]) == (
        1, 1, 1, 1, 0, 0, p["H"], p["W"])


def _lanes_used(int64_t n, int64_t tile, int64_t vlen=0):
    """The part of the computed rows (or columns) that is real work when n of them are cut into tiles
    of `tile`. With `vlen` given (columns), a last panel of at most vlen costs one vector, not the
    whole panel (gemm_impl.h: tile_b with nv = 1)."""
    if n <= 0:
        return 0.0
    cdef int64_t tail = n % tile
    cdef int64_t done = n - tail + (0 if tail == 0 else (vlen if 0 < vlen < tile and tail <= vlen else tile))
    return <double>n / done


def _transposed_pays(int64_t pixels, int64_t out_channels, int64_t taps, bint plain_1x1, int mr, int nr,
                     int vlen=0):
    """The one rule for a convolution's GEMM orientation (op_conv.c: conv_transposed), by lane use.
    The usual orientation runs the output channels along the register tile's MR rows and the pixels
    along its NR columns (vectors); the transposed one swaps them. Each wastes the padding of its
    last row panel and of its last column panel: 49 pixels fill 64 columns on AVX-512 (6x32 tiles)
    but 54 rows; 196 fill 208 columns but 198 rows; 128 output channels fill 132 rows but 4 column
    panels. `taps` is K = C * kh * kw; `plain_1x1`: stride 1, no padding (the usual
    orientation reads the input in place). The thresholds above say why each is where it is."""
    if pixels <= 0 or out_channels <= 0 or pixels > TRANSPOSED_MAX_PIXELS:
        return False
    usual = _lanes_used(out_channels, mr) * _lanes_used(pixels, nr, vlen)
    swapped = _lanes_used(pixels, mr) * _lanes_used(out_channels, nr, vlen)
    if plain_1x1:
        return pixels <= TRANSPOSED_1X1_MAX_PIXELS and swapped > TRANSPOSED_1X1_MIN_GAIN * usual
    return swapped > TRANSPOSED_IM2COL_MIN_GAIN * usual and (
        pixels <= TRANSPOSED_SMALL_PIXELS or taps >= TRANSPOSED_LONG_K)


cdef void _transposed_weights(Execution ex, x86_conv_state* s, weight, int threads, bint scratch=True) except *:
    """State of a transposed convolution: W^T packed as the GEMM's B (B[k][o] = W[o][k]) and, with
    `scratch`, the scratch (the padded input, X^T of a chunk of pixels packed, its C^T)."""
    cdef const x86_kernels* k = s.op.k
    cdef int64_t Kg = s.g.C * s.g.kh * s.g.kw
    s.transposed = 1
    cdef bint fresh
    cdef Buffer w = _packed(weight, ("w_t", <bytes>k.name), max((s.O + k.nr - 1) // k.nr * k.nr * Kg, 1), &fresh)
    ex.keep.append(w)
    s.w = <float*>w.ptr
    wc = np.ascontiguousarray(weight, dtype=np.float32)
    cdef const float* src = <const float*><size_t>wc.ctypes.data
    if wc.size and fresh:
        k.pack_b(src, 1, Kg, Kg, s.O, s.w, 1)
    if not scratch:
        return
    cdef int64_t work_floats
    x86_conv_transposed_plan(k, &s.g, s.O, max(threads, 1), &s.chunk_cols, &s.per_item, &work_floats)
    cdef Buffer work = _floats(max(work_floats, 1))
    ex.keep.append(work)
    s.t_work = <float*>work.ptr
    s.work = s.t_work

cdef void _direct_weights(Execution ex, x86_conv_state* s, weight, int threads) except *:
    """State of a direct convolution (conv_direct_impl.h): its plan, the weights packed in blocks of
    the tile's output channels, a strip of padded input rows per thread."""
    cdef const x86_kernels* k = s.op.k
    cdef int64_t Kg = s.g.C * s.g.kh * s.g.kw, w_floats
    s.direct = 1
    k.direct_plan(&s.g, s.N, s.O, max(threads, 1), &s.d_rows, &s.d_parts, &s.d_worker_floats, &w_floats)
    if s.pool:  # the fused pooling's bands instead of rows (conv_direct_impl.h)
        if k.direct_pool_plan == NULL:
            raise ValueError(f"x86: the {k.name.decode()} kernels have no fused convolution and max pooling")
        k.direct_pool_plan(&s.g, &s.pg, s.N, s.O, max(threads, 1), &s.d_rows, &s.d_parts, &s.d_worker_floats)
    cdef Buffer w = _floats(max(w_floats, 1))
    ex.keep.append(w)
    s.w = <float*>w.ptr
    wc = np.ascontiguousarray(weight, dtype=np.float32)
    if wc.size:
        k.direct_pack(<const float*><size_t>wc.ctypes.data, s.O, Kg, s.w)
    cdef Buffer work = _floats(max(threads, 1) * s.d_worker_floats)
    ex.keep.append(work)
    s.work = <float*>work.ptr


#: G of Winograd F(4x4, 3x3): U = G w G^T turns a 3x3 filter into its 6x6 transform
#: (float literals: with cdivision, Cython folds 1 / 4 as C integer division)
_WINO_G = np.array([[1.0 / 4, 0.0, 0.0], [-1.0 / 6, -1.0 / 6, -1.0 / 6], [-1.0 / 6, 1.0 / 6, -1.0 / 6],
                    [1.0 / 24, 1.0 / 12, 1.0 / 6], [1.0 / 24, -1.0 / 12, 1.0 / 6], [0.0, 0.0, 1.0]],
                   dtype=np.float64)


cdef void _winograd_weights(Execution ex, x86_conv_state* s, weight, int threads, bf16_isa=None) except *:
    """Winograd F(4x4, 3x3) state: the 36 transformed weight matrices (O x C, in float64
    then rounded) packed as GEMM A operands, the chunk plan and its scratch. bf16_isa: the 36
    GEMMs run on bf16 (precision="low"; _bf16_winograd)."""
    cdef const x86_kernels* k = s.op.k
    cdef int64_t xi, O = s.O, C = s.g.C, work_floats
    cdef Buffer buf
    cdef bint fresh
    s.winograd = 1
    x86_wino_plan(k, s.N, C, O, s.g.OH, s.g.OW, threads, s.g.in_nc16 or s.g.out_nc16, &s.chunk_cols, &s.per_item,
                  &s.wino_gemm_t, &work_floats)
    s.chunk_floats = work_floats
    buf = _floats(work_floats)
    ex.keep.append(buf)
    s.work = <float*>buf.ptr
    if bf16_isa is not None:
        w = np.asarray(weight, dtype=np.float64)
        u = np.ascontiguousarray(np.einsum("ai,ocij,bj->aboc", _WINO_G, w, _WINO_G).reshape(36, O, C),
                                 dtype=np.float32)
        _bf16_winograd(ex, s, bf16_isa, u, threads)
        return
    if s.wino_gemm_t:  # U^T as the GEMM's B: B[c][o] = U[o][c]
        s.w_group_stride = (O + k.nr - 1) // k.nr * k.nr * C
    else:
        s.w_group_stride = (O + k.mr - 1) // k.mr * k.mr * C
    buf = _packed(weight, ("winograd", <bytes>k.name, s.wino_gemm_t), 36 * s.w_group_stride, &fresh)
    ex.keep.append(buf)
    s.w = <float*>buf.ptr
    cdef const float* src
    cdef int64_t o0, ob, n, unit = k.nr if s.wino_gemm_t else k.mr
    if O * C == 0 or not fresh:  # nothing to pack, or packed already for another session
        return
    # a block of output channels at a time, a whole number of panels (a panel of rows, or of B's
    # columns, starts at o0 * C): all of the layer at once in float64 took 3x the packed weights'
    # memory at prepare (ResNet-18's 512-channel layers: 38 MB packed, 75 MB passing through)
    ob = max(1, 64 // unit) * unit
    for o0 in range(0, O, ob):
        wb = np.asarray(weight[o0:o0 + ob], dtype=np.float64)
        n = wb.shape[0]
        u = np.ascontiguousarray(np.einsum("ai,ocij,bj->aboc", _WINO_G, wb, _WINO_G), dtype=np.float32)
        src = <const float*><size_t>u.ctypes.data
        for xi in range(36):
            if s.wino_gemm_t:
                k.pack_b(src + xi * n * C, 1, C, C, n, s.w + xi * s.w_group_stride + o0 * C, threads)
            else:
                k.pack_a(src + xi * n * C, C, 1, n, C, s.w + xi * s.w_group_stride + o0 * C, threads)


cdef void _bf16_winograd(Execution ex, x86_conv_state* s, str isa, u, int threads) except *:
    """Winograd's 36 GEMMs on bf16 (csrc/winograd_impl.h: wino_gemm_bf16): the transformed weights
    u (36 x O x C, fp32) packed as bf16 pairs (A operands, or B of U^T for gemm_t), w_group_stride
    words apart, and a bf16 scratch per thread for each position's V (B panels, or V^T as A)."""
    cdef Buffer st = Buffer(sizeof(x86_bf16_conv))
    ex.keep.append(st)
    cdef x86_bf16_conv* b = <x86_bf16_conv*>st.ptr
    cdef int64_t xi, O = s.O, C = s.g.C
    b.kb = _bf16_table(isa)
    s.w_group_stride = x86_bf16_words(O, b.kb.nr if s.wino_gemm_t else b.kb.mr, C)
    cdef uint32_t* w = _words(ex, 36 * s.w_group_stride)
    cdef const float* src = <const float*><size_t>u.ctypes.data
    if u.size:
        for xi in range(36):
            if s.wino_gemm_t:  # B[c][o] = U[o][c]
                b.kb.pack_b(src + xi * O * C, 1, C, C, O, w + xi * s.w_group_stride, threads)
            else:
                b.kb.pack_a(src + xi * O * C, C, 1, O, C, w + xi * s.w_group_stride, threads)
    b.w = w
    cdef int64_t tcp = (s.chunk_cols + b.kb.nr - 1) // b.kb.nr * b.kb.nr
    b.bp_words = (max(x86_bf16_words(tcp, b.kb.mr, C), x86_bf16_words(tcp, b.kb.nr, C)) + 15) // 16 * 16
    b.bp = _words(ex, max(threads, 1) * b.bp_words)
    s.bf16 = b


cdef const x86_bf16_kernels* _bf16_table(str isa) except NULL:
    cdef const x86_bf16_kernels* kb = x86_bf16_kernels_for(isa.encode())
    if kb == NULL:
        raise RuntimeError(f"x86: no bf16 GEMM under ISA {isa!r} on this CPU (it needs AVX-512 BF16)")
    return kb


cdef uint32_t* _words(Execution ex, int64_t n) except NULL:
    """n zeroed 32-bit words (bf16 pairs) that live as long as the execution."""
    cdef Buffer buf = Buffer(max(n, 1) * 4)
    ex.keep.append(buf)
    return <uint32_t*>buf.ptr


cdef void _bf16_conv(Execution ex, x86_conv_state* s, str isa, weight, int threads) except *:
    """A GEMM convolution on bf16 (precision="low", csrc/bf16.h): every group's weights packed as bf16
    pairs (rounded once, here) and a bf16 chunk of B per thread beside the fp32 one (s.work)."""
    cdef Buffer st = Buffer(sizeof(x86_bf16_conv))
    ex.keep.append(st)
    cdef x86_bf16_conv* b = <x86_bf16_conv*>st.ptr
    cdef int64_t gi, Kg = s.g.C * s.g.kh * s.g.kw
    b.kb = _bf16_table(isa)
    b.w_group_stride = x86_bf16_words(s.og, b.kb.mr, Kg)
    cdef uint32_t* w = _words(ex, s.group * b.w_group_stride)
    wc = np.ascontiguousarray(weight, dtype=np.float32)
    cdef const float* src = <const float*><size_t>wc.ctypes.data
    if wc.size:
        for gi in range(s.group):
            b.kb.pack_a(src + gi * s.og * Kg, Kg, 1, s.og, Kg, w + gi * b.w_group_stride, threads)
    b.w = w
    b.bp_words = (x86_bf16_words(s.chunk_cols, b.kb.nr, Kg) + 15) // 16 * 16  # 64-byte aligned parts
    b.bp = _words(ex, (max(threads, 1) if s.per_item else 1) * b.bp_words)
    s.bf16 = b


cdef void _bf16_matmul(Execution ex, x86_matmul_state* s, str isa, b_const, int threads) except *:
    """A MatMul / Gemm with a constant B on bf16 (precision="low", csrc/bf16.h): B packed as bf16
    pairs here (every batch of it), A packed at each run."""
    cdef Buffer st = Buffer(sizeof(x86_bf16_matmul))
    ex.keep.append(st)
    cdef x86_bf16_matmul* b = <x86_bf16_matmul*>st.ptr
    cdef int64_t t, words
    b.kb = _bf16_table(isa)
    words = x86_bf16_words(s.N, b.kb.nr, s.K)
    b.b_stride = words if s.b_off != NULL else 0
    cdef int64_t copies = s.batch if s.b_off != NULL else 1
    cdef uint32_t* bp = _words(ex, words * copies)
    bc = np.ascontiguousarray(b_const, dtype=np.float32)
    cdef const float* src = <const float*><size_t>bc.ctypes.data
    if bc.size:
        for t in range(copies):
            b.kb.pack_b(src + (s.b_off[t] if s.b_off != NULL else 0), s.b_rs, s.b_cs, s.K, s.N, bp + t * words,
                        threads)
    b.b = bp
    b.a = _words(ex, x86_bf16_words(s.M, b.kb.mr, s.K))
    s.bf16 = b


cdef void _pack_a_groups(const x86_kernels* k, wc, int64_t group, int64_t og, int64_t Kg, float* dst,
                         int64_t stride, int threads):
    cdef const float* src = <const float*><size_t>wc.ctypes.data
    cdef int64_t gi
    if wc.size == 0:
        return
    for gi in range(group):
        k.pack_a(src + gi * og * Kg, Kg, 1, og, Kg, dst + gi * stride, threads)


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
    a_panel = (s.M + k.mr - 1) // k.mr * k.mr * s.K
    b_panel = (s.N + k.nr - 1) // k.nr * k.nr * s.K
    buf = _floats(a_panel)
    ex.keep.append(buf)
    s.a_work = <float*>buf.ptr
    if b_const is not None:
        bc = np.ascontiguousarray(b_const, dtype=np.float32)
        s.b_packed_stride = b_panel if b_off is not None else 0
        buf = _floats(b_panel * (s.batch if b_off is not None else 1))
        ex.keep.append(buf)
        s.b_packed = <const float*>buf.ptr
        bsrc = <const float*><size_t>bc.ctypes.data
        if bc.size:
            for t in range(s.batch if b_off is not None else 1):
                k.pack_b(bsrc + (s.b_off[t] if b_off is not None else 0), s.b_rs, s.b_cs, s.K, s.N,
                         <float*>buf.ptr + t * s.b_packed_stride, threads)
    else:
        buf = _floats(b_panel)
        ex.keep.append(buf)
        s.b_work = <float*>buf.ptr
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


# -- int8 (quantization): QLinearConv with uint8 activations, int8 weights (csrc/int8.h) --------------

cdef extern from "int8.h" nogil:
    ctypedef struct x86_int8_kernels:
        const char* name
        int32_t nb

    ctypedef struct x86_qphase:
        int64_t QH, QW, pstride, QP, C4, taps, Nf
        int32_t shifted
        int32_t window
        int64_t groups

    ctypedef struct x86_qconv_state:
        x86_op op
        const x86_int8_kernels* k8
        int64_t N, O, group, og, ogp, K2, np
        int32_t fc
        x86_conv_geom g
        const int32_t* w
        const int32_t* bias
        const float* mult
        int32_t zx, zy, qmin, qmax
        void* work
        int64_t work_stride
        int32_t kind
        int64_t K4
        const int32_t* bias_eff
        const int8_t* wdw
        const int32_t* wq
        uint8_t* xq
        uint8_t* tmp
        int64_t xq_stride
        int64_t tmp_stride
        x86_qphase q
        uint8_t* ypx

    ctypedef struct x86_qelt_state:
        x86_op op
        const x86_int8_kernels* k8
        int32_t kind, zp
        float scale
        int64_t planes
        x86_pool_geom pg
        x86_conv_geom cg
        x86_qphase q
        uint8_t* xq
        int64_t xq_stride

    int x86_qconv_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int x86_qelt_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    const x86_int8_kernels* x86_int8_kernels_for(const char* isa)
    int x86_int8_vnni(const char* isa)
    int64_t x86_int8_dw_work_bytes(const x86_conv_geom* g)
    int64_t x86_qphase_init(x86_qphase* q, const x86_conv_geom* g, int64_t C4, int depthwise, int shifted,
                            int64_t* tap_off)
    int64_t x86_qphase_tmp_bytes(const x86_qphase* q, const x86_conv_geom* g)


def int8_vnni(str isa):
    """Whether QLinearConv on `isa` can take the AVX-512 VNNI kernels (compiled in and in cpuid)."""
    return bool(x86_int8_vnni(isa.encode()))


cdef const x86_int8_kernels* _int8_table(str isa) except NULL:
    cdef const x86_int8_kernels* k = x86_int8_kernels_for(isa.encode())
    if k == NULL:
        raise RuntimeError(f"x86 int8 kernels for ISA {isa!r} are not runnable on this CPU")
    return k


def qelt(str isa, int threads, str op, float scale, int zp):
    """QuantizeLinear (float32 -> uint8) or DequantizeLinear (uint8 -> float32), per tensor."""
    cdef Execution ex = _execution(f"x86.{op}.int8", sizeof(x86_qelt_state), x86_qelt_run, isa, threads)
    cdef x86_qelt_state* s = <x86_qelt_state*>ex.state
    s.k8 = _int8_table(isa)
    s.kind = 0 if op == "QuantizeLinear" else 1
    s.scale, s.zp = scale, zp
    return ex


def qadd(str isa, int threads):
    """QLinearAdd of two uint8 tensors of one shape; the per-tensor scales and zero points are read at run time
    (the multipliers A_scale / C_scale and B_scale / C_scale are one float32 division each, docs/QUANT.md)."""
    cdef Execution ex = _execution("x86.QLinearAdd.uint8", sizeof(x86_qelt_state), x86_qelt_run, isa, threads)
    cdef x86_qelt_state* s = <x86_qelt_state*>ex.state
    s.k8 = _int8_table(isa)
    s.kind = 3
    return ex


def qmaxpool(str isa, int threads, int64_t planes, dict p, bint vnni=True):
    """MaxPool of uint8 planes (padding never wins a max of uint8); vnni: on phase planes where the CPU has
    AVX-512 VNNI (the int8 convolutions' machinery), else plain loops."""
    cdef Execution ex = _execution("x86.MaxPool.uint8", sizeof(x86_qelt_state), x86_qelt_run, isa, threads)
    cdef x86_qelt_state* s = <x86_qelt_state*>ex.state
    s.k8 = _int8_table(isa)
    s.kind = 2
    s.planes = planes
    s.pg.H, s.pg.W, s.pg.OH, s.pg.OW = p["H"], p["W"], p["OH"], p["OW"]
    s.pg.kh, s.pg.kw, s.pg.sh, s.pg.sw = p["kh"], p["kw"], p["sh"], p["sw"]
    s.pg.dh, s.pg.dw, s.pg.pt, s.pg.pl = p["dh"], p["dw"], p["pt"], p["pl"]
    if not vnni or not x86_int8_vnni(isa.encode()) or s.pg.sh * s.pg.sw > 64:
        return ex
    # AVX-512 VNNI CPUs: the window over phase planes (the depthwise kernel's), 64 outputs per max
    _conv_geom(&s.cg, dict(p, C=1))
    cdef int64_t taps = s.pg.kh * s.pg.kw
    cdef Buffer tap_off = Buffer((taps + 3) // 4 * 4 * 8)
    s.xq_stride = (x86_qphase_init(&s.q, &s.cg, 1, 1, 0, <int64_t*>tap_off.ptr) + 63) // 64 * 64
    cdef Buffer xq = Buffer(max(threads, 1) * s.xq_stride)  # zeroed: the slack past the planes is read, never written
    ex.keep.extend([tap_off, xq])
    s.xq = <uint8_t*>xq.ptr
    return ex


def qconv(str isa, int threads, dict p, weight, bias, mult, int zx, int zy, str path="pairs", int shifted=-1,
          int px=-1):
    """QLinearConv, uint8 -> uint8. p: N, O, group, fc and the geometry of one group (as conv).
    weight: int8 [O, C/group, kh, kw]; bias: int32 [O]; mult: float32 [O] requantization multipliers.
    path: "pairs" (int16-pair GEMM, every ISA), "depthwise" (group == C == O, every ISA), or with AVX-512 VNNI
    (see int8_vnni) "u8" (u8 x s8 on phase planes, no im2col), "dw_vnni" and "fc_vnni" (the fc form).
    shifted ("u8"): 1 planes per kernel column (int8.h x86_qphase.shifted), 0 the sw column phases, -1 the one
    _qconv_u8 estimates cheaper; px ("u8", group 1): 1 conv_px (output channels in the lanes), 0 conv_c4, -1 the
    one estimated cheaper."""
    cdef Execution ex = _execution(f"x86.QLinearConv.int8.{path}", sizeof(x86_qconv_state), x86_qconv_run, isa,
                                   threads)
    cdef x86_qconv_state* s = <x86_qconv_state*>ex.state
    s.k8 = _int8_table(isa)
    _conv_geom(&s.g, p)
    if path in ("u8", "dw_vnni", "fc_vnni") and not x86_int8_vnni(isa.encode()):
        raise RuntimeError(f"the {path} int8 path needs AVX-512 VNNI, which ISA {isa!r} here has not")
    if path == "depthwise":
        return _qconv_depthwise(ex, s, threads, p, weight, bias, mult, zx, zy)
    if path == "dw_vnni":
        return _qconv_dw_vnni(ex, s, threads, p, weight, bias, mult, zx, zy)
    if path == "u8":
        return _qconv_u8(ex, s, threads, p, weight, bias, mult, zx, zy, shifted, px)
    if path == "fc_vnni":
        return _qconv_fc_vnni(ex, s, threads, p, weight, bias, mult, zx, zy)
    s.N, s.O, s.group, s.fc = p["N"], p["O"], p["group"], p["fc"]
    s.og = s.O // s.group
    s.ogp = (s.og + 3) // 4 * 4
    cdef int64_t K = s.g.C * s.g.kh * s.g.kw
    s.K2 = (K + 1) // 2
    cdef int64_t nb = s.k8.nb
    cdef int64_t cols = min(s.N, 256) if s.fc else s.g.OH * s.g.OW
    s.np = (cols + nb - 1) // nb * nb
    s.zx, s.zy, s.qmin, s.qmax = zx, zy, 0, 255
    # weights as int16 pairs in int32 words, rows padded to a multiple of 4 per group
    w16 = np.zeros((s.group, s.ogp, s.K2 * 2), np.int16)
    w16[:, :s.og, :K] = np.asarray(weight, np.int8).reshape(s.group, s.og, K)
    cdef Buffer wb = _copy_array(w16.view(np.int32), np.int32)
    cdef Buffer bb = _copy_array(np.zeros(s.O, np.int32) if bias is None else bias, np.int32)
    cdef Buffer mb = _copy_array(mult, np.float32)
    ex.keep.extend([wb, bb, mb])
    s.w, s.bias, s.mult = <const int32_t*>wb.ptr, <const int32_t*>bb.ptr, <const float*>mb.ptr
    s.work_stride = s.K2 * s.np * 2
    cdef Buffer work = Buffer(max(threads, 1) * s.work_stride * 2)  # zeroed: padding columns and rows stay 0
    ex.keep.append(work)
    s.work = work.ptr
    return ex


cdef _qconv_depthwise(Execution ex, x86_qconv_state* s, int threads, dict p, weight, bias, mult, int zx, int zy):
    s.kind = 2
    s.N, s.O, s.group, s.og = p["N"], p["O"], p["group"], 1
    s.zx, s.zy, s.qmin, s.qmax = zx, zy, 0, 255
    cdef Buffer wb = _copy_array(np.asarray(weight, np.int8).reshape(s.O, -1), np.int8)
    cdef Buffer bb = _copy_array(np.zeros(s.O, np.int32) if bias is None else bias, np.int32)
    cdef Buffer mb = _copy_array(mult, np.float32)
    ex.keep.extend([wb, bb, mb])
    s.wdw, s.bias, s.mult = <const int8_t*>wb.ptr, <const int32_t*>bb.ptr, <const float*>mb.ptr
    s.work_stride = (x86_int8_dw_work_bytes(&s.g) + 63) // 64 * 32  # in int16
    cdef Buffer work = Buffer(max(threads, 1) * s.work_stride * 2)
    ex.keep.append(work)
    s.work = work.ptr
    return ex


def _bias_eff(bias, w8, int o, int zx):
    """bias - zx * sum(w) per output channel, int32 (wrapping like C): the zero point out of the sums."""
    b64 = np.zeros(o, np.int64) if bias is None else np.asarray(bias, np.int64).reshape(o)
    b64 = b64 - zx * np.asarray(w8, np.int64).reshape(o, -1).sum(axis=1)
    return ((b64 + 2**31) % 2**32 - 2**31).astype(np.int32)


cdef _qconv_u8(Execution ex, x86_qconv_state* s, int threads, dict p, weight, bias, mult, int zx, int zy,
               int shifted, int use_px):
    s.kind = 1
    s.N, s.O, s.group, s.fc = p["N"], p["O"], p["group"], 0
    s.og = s.O // s.group
    s.ogp = (s.og + 7) // 8 * 8  # QC_MR
    cdef int64_t C = s.g.C, taps = s.g.kh * s.g.kw, C4 = (C + 3) // 4, P = s.g.OH * s.g.OW
    if s.g.sh * s.g.sw > 64:
        raise RuntimeError("the int8 VNNI convolution takes strides with sh * sw <= 64")
    cdef Buffer tap_off = Buffer(max(taps, 4) * 8)
    if shifted < 0:
        shifted = _shifted_pays(s, C4)
    # conv_px where conv_c4's tiles of flattened outputs (8 channels a row block; 32 wide, the last one 16) would
    # compute at least 15% more than conv_px's 6-pixel x 64-channel tiles (its pixel-major copy of the planes and
    # transpose cost a few percent; measured equal at 14x14, 256 channels, where the ratio is 0.95)
    cdef int64_t PW = (s.g.OW - 1) * s.g.sw + (s.g.kw - 1) * s.g.dw + 1
    cdef int64_t nf = P if shifted else (s.g.OH - 1) * ((PW + s.g.sw - 1) // s.g.sw) + s.g.OW
    cdef int64_t c4_work = (nf + 15) // 16 * 16 * s.ogp
    cdef int64_t px_work = (P + 5) // 6 * 6 * ((s.og + 63) // 64 * 64)
    cdef bint px = s.group == 1 and (px_work < 0.87 * c4_work if use_px < 0 else use_px > 0)
    if px:  # no thrown-away columns either way: the planes whose packing is cheaper (one vector a row)
        shifted = int(s.g.pl + s.g.W <= 64 and PW <= 64 and s.g.sw <= 2)
    cdef int64_t xq_bytes = x86_qphase_init(&s.q, &s.g, C4, 0, shifted, <int64_t*>tap_off.ptr)
    s.K4 = taps * C4
    s.zx, s.zy, s.qmin, s.qmax = zx, zy, 0, 255
    s.tmp_stride = (x86_qphase_tmp_bytes(&s.q, &s.g) + 63) // 64 * 64
    cdef Buffer tmp = Buffer(max(threads, 1) * s.tmp_stride)
    s.xq_stride = (xq_bytes + 63) // 64 * 64
    cdef Buffer xq = Buffer(s.xq_stride * (2 if px else 1))  # conv_px: then the planes pixel-major (px_pack)
    ex.keep.extend([tap_off, xq, tmp])
    s.xq, s.tmp = <uint8_t*>xq.ptr, <uint8_t*>tmp.ptr
    if px:
        return _qconv_px(ex, s, threads, weight, bias, mult, zx)
    # weights [group][ogp / 8][tap][C4][8 rows] words of 4 channels' int8 (channels past C and rows past og: 0)
    w = np.asarray(weight, np.int8).reshape(s.group, s.og, C, taps)
    w8 = np.zeros((s.group, s.ogp, taps, C4 * 4), np.int8)
    w8[:, :s.og, :, :C] = w.transpose(0, 1, 3, 2)
    blocks = w8.view(np.int32).reshape(s.group, s.ogp // 8, 8, taps * C4).transpose(0, 1, 3, 2)
    cdef Buffer wb = _copy_array(blocks, np.int32)
    cdef Buffer bb = _copy_array(_bias_eff(bias, w, s.O, zx), np.int32)
    cdef Buffer mb = _copy_array(mult, np.float32)
    ex.keep.extend([wb, bb, mb])
    s.w, s.bias_eff, s.mult = <const int32_t*>wb.ptr, <const int32_t*>bb.ptr, <const float*>mb.ptr
    return ex


cdef int _shifted_pays(x86_qconv_state* s, int64_t C4):
    """1 where the planes per kernel column (no thrown-away columns, one 16-wide last tile) save more dpbusd work
    than their extra packing costs (kw copies of each row instead of the sw phases: ~1 dpbusd per 16 bytes)."""
    cdef x86_conv_geom* g = &s.g
    cdef int64_t PH = (g.OH - 1) * g.sh + (g.kh - 1) * g.dh + 1, PW = (g.OW - 1) * g.sw + (g.kw - 1) * g.dw + 1
    cdef int64_t QH = (PH + g.sh - 1) // g.sh, QP = (PW + g.sw - 1) // g.sw
    cdef int64_t nf_old = (g.OH - 1) * QP + g.OW, nf_new = g.OH * g.OW
    if g.kw == 1 and g.sw == 1 or g.sh * g.kw > 64:
        return 0
    cdef int64_t saved = ((nf_old + 15) // 16 - (nf_new + 15) // 16) * s.ogp * g.kh * g.kw * C4
    cdef int64_t extra = (g.sh * g.kw * QH * g.OW - g.sh * min(g.sw, g.kw) * QH * QP) * C4 * 4 // 16
    return 1 if saved > extra else 0


cdef _qconv_px(Execution ex, x86_qconv_state* s, int threads, weight, bias, mult, int zx):
    """conv_px (int8_vnni_impl.h): weights [Mp / 16][tap][C4][16 channels] words; bias and mult padded to Mp."""
    s.kind = 5
    cdef int64_t C = s.g.C, taps = s.g.kh * s.g.kw, C4 = (C + 3) // 4, P = s.g.OH * s.g.OW
    cdef int64_t Mp = (s.O + 63) // 64 * 64
    s.ogp = Mp
    w = np.asarray(weight, np.int8).reshape(s.O, C, taps)
    w8 = np.zeros((Mp, taps, C4 * 4), np.int8)
    w8[:s.O, :, :C] = w.transpose(0, 2, 1)
    cdef Buffer wb = _copy_array(w8.view(np.int32).reshape(Mp // 16, 16, taps * C4).transpose(0, 2, 1), np.int32)
    beff = np.zeros(Mp, np.int32)
    beff[:s.O] = _bias_eff(bias, w, s.O, zx)
    mpad = np.zeros(Mp, np.float32)
    mpad[:s.O] = np.asarray(mult, np.float32).reshape(-1)
    cdef Buffer bb = _copy_array(beff, np.int32)
    cdef Buffer mb = _copy_array(mpad, np.float32)
    cdef Buffer ypx = Buffer(P * Mp)
    ex.keep.extend([wb, bb, mb, ypx])
    s.wq, s.bias_eff, s.mult = <const int32_t*>wb.ptr, <const int32_t*>bb.ptr, <const float*>mb.ptr
    s.ypx = <uint8_t*>ypx.ptr
    return ex


cdef _qconv_dw_vnni(Execution ex, x86_qconv_state* s, int threads, dict p, weight, bias, mult, int zx, int zy):
    s.kind = 3
    s.N, s.O, s.group, s.og = p["N"], p["O"], p["group"], 1
    if s.g.sh * s.g.sw > 64:
        raise RuntimeError("the int8 VNNI depthwise convolution takes strides with sh * sw <= 64")
    cdef int64_t taps = s.g.kh * s.g.kw
    cdef Buffer tap_off = Buffer((taps + 3) // 4 * 4 * 8)
    s.xq_stride = (x86_qphase_init(&s.q, &s.g, 1, 1, 0, <int64_t*>tap_off.ptr) + 63) // 64 * 64
    s.zx, s.zy, s.qmin, s.qmax = zx, zy, 0, 255
    w = np.asarray(weight, np.int8).reshape(s.O, taps)
    if s.q.window:  # one word per kernel row: its kw (<= 4) weights, then 0
        wq = np.zeros((s.O, s.g.kh, 4), np.int8)
        wq[:, :, :s.g.kw] = w.reshape(s.O, s.g.kh, s.g.kw)
    else:  # one word per 4 taps in order, 0 past the last
        wq = np.zeros((s.O, s.q.groups * 4), np.int8)
        wq[:, :taps] = w
    cdef Buffer wb = _copy_array(wq.view(np.int32), np.int32)
    cdef Buffer bb = _copy_array(_bias_eff(bias, w, s.O, zx), np.int32)
    cdef Buffer mb = _copy_array(mult, np.float32)
    cdef Buffer xq = Buffer(max(threads, 1) * s.xq_stride)  # zeroed: the slack past the planes is read, never written
    ex.keep.extend([tap_off, wb, bb, mb, xq])
    s.wq, s.bias_eff, s.mult = <const int32_t*>wb.ptr, <const int32_t*>bb.ptr, <const float*>mb.ptr
    s.xq = <uint8_t*>xq.ptr
    return ex


cdef _qconv_fc_vnni(Execution ex, x86_qconv_state* s, int threads, dict p, weight, bias, mult, int zx, int zy):
    s.kind = 4
    s.N, s.O, s.group, s.fc, s.og = p["N"], p["O"], 1, 1, p["O"]
    cdef int64_t K = s.g.C, K4 = (K + 3) // 4, OB = (s.O + 15) // 16
    s.K4 = K4
    s.zx, s.zy, s.qmin, s.qmax = zx, zy, 0, 255
    w = np.asarray(weight, np.int8).reshape(s.O, K)
    w8 = np.zeros((OB * 16, K4 * 4), np.int8)
    w8[:s.O, :K] = w
    cdef Buffer wb = _copy_array(w8.view(np.int32).reshape(OB, 16, K4).transpose(0, 2, 1), np.int32)
    cdef Buffer bb = _copy_array(_bias_eff(bias, w, s.O, zx), np.int32)
    cdef Buffer mb = _copy_array(mult, np.float32)
    s.xq_stride = (K4 * 4 + 63) // 64 * 64
    cdef Buffer xq = Buffer(max(threads, 1) * s.xq_stride)  # a padded image row per thread
    ex.keep.extend([wb, bb, mb, xq])
    s.wq, s.bias_eff, s.mult = <const int32_t*>wb.ptr, <const int32_t*>bb.ptr, <const float*>mb.ptr
    s.xq = <uint8_t*>xq.ptr
    return ex


# -- training (backward ops, optimizer updates): csrc/ops_grad.h ------------------------

include "_x86_grad.pxi"
