"""Every op mnn knows: one module per family, each registering its schemas."""

from __future__ import annotations

from .schema import REQUIRED, Attr, OpSchema, Sample, all_schemas, get_schema, register, run_reference

# importing a family module registers its ops
from . import (  # noqa: E402,F401  isort: skip
    elementwise,
    conv,
    matmul,
    pool,
    norm,
    reduce,
    shape,
    grow,
    cast,
    resize,
    convtranspose,
    grad,
    conv_grad,
    norm_train,
    loss,
    optim_ops,
    logic,
    math_extra,
    index,
    rnn,
    quant,
    image,
    attention_extra,
    onnx_training,
    signal,
    misc,
    sequence,
    control_flow,
    value_shaped,
    shape_arith,
    strings,
    ml,
    ml_trees,
    rnn_quant,
    matmul_nbits,
)

__all__ = ["REQUIRED", "Attr", "OpSchema", "Sample", "all_schemas", "get_schema", "register", "run_reference"]
