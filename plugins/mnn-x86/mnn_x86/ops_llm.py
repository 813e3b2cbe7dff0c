"""The LLM kernels on x86 (_llm.pyx, csrc/llm/): MatMulNBits, the MatMul by a block-quantized 4- or
8-bit weight that mnn_core.llm's quantized decoders use (mnn_core/ops/matmul_nbits.py).

The weight is read where the graph holds it, never unpacked or copied: the prefill and decode plans of
a session share it, and its bytes are all a run streams. At accuracy_level 4 the rows of A are
quantized to int8 per block and multiplied with VPDPBUSD (AVX-512 VNNI) or VPMADDUBSW (AVX2); at the
other levels (and for blocks of 16) a column is dequantized to float32 and dotted with each row.
From GEMM_ROWS rows of A on (a prompt's chunk) panels of B are dequantized and multiplied by the packed
float32 GEMM, which reuses each weight over the rows better than the dots do; at accuracy_level 4
(AVX-512 VNNI, or AVX2 with 4-bit weights), from QGEMM_ROWS rows on, the int8 rows are multiplied
by the weights in integer register tiles instead (llama.cpp's trade: A rounded to int8 per block,
as at decode).
"""

from __future__ import annotations

import numpy as np

from mnn_core.ops.matmul_nbits import ACCURACY_INT8

from . import _llm
from ._common import kernel, static_shape

#: rows of A from which the GEMM on dequantized panels runs (0: never; tests set it to check the dots)
GEMM_ROWS = _llm.GEMM_ROWS
#: rows of A from which int8 (accuracy_level 4) runs the integer tiles (0: never)
QGEMM_ROWS = _llm.QGEMM_ROWS


def _supports(node, ins) -> bool | str:
    if ins[0].dtype != "float32":
        return f"A is {ins[0].dtype}; the kernels take float32"
    if len(ins) > 4 and ins[4] is not None:
        return "g_idx is not supported"
    return True


@kernel("MatMulNBits", dtypes=("float32", "uint8"), supports=_supports, efficiency=0.6)
def prepare_matmul_nbits(node, ins, outs, constants, ctx, isa):
    a_shape = static_shape(ins[0])
    attrs = node.attrs
    m = int(np.prod(a_shape[:-1], dtype=np.int64))
    present = [i for i, t in enumerate(ins) if t is not None]
    zp_in = present.index(3) if 3 in present else -1
    bias_in = present.index(5) if 5 in present else -1
    return _llm.matmul_nbits(
        isa,
        ctx.threads,
        m,
        attrs["N"],
        attrs["K"],
        attrs["bits"],
        attrs["block_size"],
        attrs["accuracy_level"] == ACCURACY_INT8,
        zp_in,
        bias_in,
        GEMM_ROWS,
        QGEMM_ROWS,
    )
