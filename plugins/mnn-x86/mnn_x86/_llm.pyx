# The Cython glue of the LLM kernels (ops_llm.py, csrc/llm/): MatMulNBits' C state filled at prepare and
# handed to the core as an _x86.Execution. B, its scales and zero points are read where they lie at run.
from libc.stdint cimport int8_t, int32_t, int64_t

from mnn_core.abi cimport mnn_tensor

from mnn_x86.family cimport Execution, _execution, attach_pool, x86_op

attach_pool()

cdef extern from "llm/nbits.h" nogil:
    enum:
        NBITS_FLOAT
        NBITS_AVX2
        NBITS_VNNI
        NBITS_GEMM
        NBITS_QGEMM
        NBITS_PANEL
    ctypedef struct x86_nbits_state:
        x86_op op
        int32_t bits, block, nb, blob, zbytes, path, level, zp_in, bias_in
        int64_t M, N, K
        int8_t* aq
        float* ascale
        float* asum
        int32_t* atotal
        float* work
        float* bp
        float* panel
        int32_t workers
    int x86_nbits_run(void* state, const mnn_tensor* ins, int32_t n_in, mnn_tensor* outs, int32_t n_out) noexcept
    int x86_nbits_int8_path(int level)

LEVELS = {"scalar": 0, "avx2": 1, "avx512": 2}
PATHS = {NBITS_FLOAT: "float", NBITS_AVX2: "avx2", NBITS_VNNI: "vnni", NBITS_GEMM: "gemm", NBITS_QGEMM: "qgemm"}
#: rows of A from which the packed GEMM on dequantized panels beats the dots (prefill)
GEMM_ROWS = 4
#: rows of A from which, at accuracy_level 4, the integer tiles on int8 rows run (prefill) on AVX-512 VNNI,
#: and (4-bit weights only) on AVX2, where the tile holds fewer rows in registers
QGEMM_ROWS = 6
QGEMM_ROWS_AVX2 = 16


def int8_path(str isa) -> str:
    """How MatMulNBits multiplies in int8 at this ISA level on this CPU: "vnni", "avx2" or "float"."""
    return PATHS[x86_nbits_int8_path(LEVELS[isa])]


def matmul_nbits(str isa, int threads, int64_t M, int64_t N, int64_t K, int bits, int block, bint int8,
                 int zp_in, int bias_in, int gemm_rows=GEMM_ROWS, int qgemm_rows=QGEMM_ROWS):
    """MatMulNBits of A [M, K] (leading dims folded) by B [N, blocks, block * bits / 8]; int8: multiply in
    int8 where the ISA can (accuracy_level 4, blocks of 32 or more); zp_in / bias_in: those inputs'
    positions among the present ones, or -1; from gemm_rows rows of A on (0: never), the packed GEMM
    on dequantized panels; from qgemm_rows rows on (0: never; AVX2: 4-bit only, from QGEMM_ROWS_AVX2
    rows at least), the integer tiles."""
    # the GEMM path multiplies Y^T = B A^T: N rows, M columns
    cdef Execution ex = _execution(f"x86.MatMulNBits.int{bits}", sizeof(x86_nbits_state), x86_nbits_run, isa,
                                   threads, K, N, M)
    cdef x86_nbits_state* s = <x86_nbits_state*>ex.state
    s.M, s.N, s.K, s.bits, s.block = M, N, K, bits, block
    s.nb = (K + block - 1) // block
    s.blob = block * bits // 8
    s.zbytes = (s.nb * bits + 7) // 8
    s.zp_in, s.bias_in = zp_in, bias_in
    s.level = LEVELS[isa]
    s.workers = max(threads, 1)
    s.path = x86_nbits_int8_path(LEVELS[isa]) if int8 and block >= 32 else NBITS_FLOAT
    tile_rows = qgemm_rows if s.path == NBITS_VNNI else max(qgemm_rows, QGEMM_ROWS_AVX2)
    if 0 < qgemm_rows and tile_rows <= M and (s.path == NBITS_VNNI or (s.path == NBITS_AVX2 and bits == 4)):
        s.path = NBITS_QGEMM
    elif 0 < gemm_rows <= M:
        s.path = NBITS_GEMM
    ex._name = f"x86.MatMulNBits.int{bits}.{PATHS[s.path]} [{isa}]".encode()
    return ex
