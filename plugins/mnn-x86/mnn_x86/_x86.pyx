# The Cython glue of mnn-x86: it turns the parameters that mnn_x86/ops_*.py
# compute at prepare into C op states (csrc/ops.h), packs constant weights
# with the chosen ISA's kernels, and hands each state to the core as an
# mnn_execution in a PyCapsule. Nothing here runs per inference.
from cpython.pycapsule cimport PyCapsule_New
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint32_t

from mnn_core.abi cimport MNN_EXEC_INPUTS_MAY_MOVE, mnn_run_fn, mnn_tensor
from mnn_core.backend.kit.weights import checksum

import time
import weakref

import numpy as np

include "_x86_decl.pxi"


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

include "mnn_core/backend/execution.pxi"  # Buffer, _copy_array, ExecutionRecord, _start_execution


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


cdef class Execution(ExecutionRecord):
    """One prepared op: an mnn_execution plus everything its state points to (fields: _x86.pxd)."""

    def __cinit__(self):
        self.packed = ()


cdef Execution _execution(str name, size_t state_size, mnn_run_fn fn, str isa, int threads, int64_t depth=0,
                          int64_t rows=0, int64_t cols=0):
    """A zeroed state of `state_size` bytes (an x86_op first) run by `fn`; the op module fills the rest."""
    cdef Execution ex = Execution()
    # MNN_EXEC_INPUTS_MAY_MOVE: prepare never sees a pointer; every load is unaligned-safe
    cdef x86_op* op = <x86_op*>_start_execution(ex, f"{name} [{isa}]".encode(), state_size, fn, x86_op_error,
                                                MNN_EXEC_INPUTS_MAY_MOVE)
    op.k = _table(isa, depth, rows, cols)
    op.threads = max(threads, 1)
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
    g.out_cl = p.get("out_cl", 0)  # a depthwise writing NHWC (x86.DepthwiseNHWC)


# -- one file per op family, all in this one extension ---------------------------------

include "_x86_conv.pxi"
include "_x86_ops.pxi"
include "_x86_int8.pxi"
include "_x86_grad.pxi"
