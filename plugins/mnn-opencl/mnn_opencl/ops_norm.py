"""Softmax / LogSoftmax over any axis, LayerNormalization over the trailing
axes from `axis` (and opencl.AddLayerNorm, fuse.py: a residual Add and the
LayerNormalization of its sum), inference BatchNormalization over axis 1
(kernels/norm.cl). Claimed only when mnn-core has these schemas; attributes
follow ONNX."""

from __future__ import annotations

from ._cl import LocalMem
from ._common import full_attrs, kernel, numel

ROW_LWS = 64  # work-items per row in the row-reduction kernels (a power of two)


def _axis(attrs, rank, default):
    axis = int(attrs.get("axis", default))
    return axis + rank if axis < 0 else axis


def _build_softmax(op, b):
    attrs = full_attrs(op.node)
    x, y = op.inputs[0], op.outputs[0]
    shape = x.info.shape
    if numel(shape) == 0:
        return
    axis = _axis(attrs, len(shape), -1)
    outer, length, inner = numel(shape[:axis]), int(shape[axis]), numel(shape[axis + 1 :])
    log_mode = int(op.node.op == "LogSoftmax")
    if inner == 1:
        b.launch(
            "softmax_rows",
            [b.tensor(x), b.tensor(y), outer, length, log_mode, LocalMem(ROW_LWS * 4)],
            (outer * ROW_LWS,),
            (ROW_LWS,),
            tunable=False,
        )
    else:
        b.launch("softmax_strided", [b.tensor(x), b.tensor(y), outer, length, inner, log_mode], (outer * inner,))


def _softmax_supports(node, ins):
    return True if len(ins[0].shape) >= 1 else "a scalar input"


def _layernorm_supports(node, ins):
    attrs = full_attrs(node)
    if len(node.outputs) > 1:
        return "the optional Mean / InvStdDev outputs"
    shape = ins[0].shape
    if not shape:
        return "a scalar input"
    axis = _axis(attrs, len(shape), -1)
    length = numel(shape[axis:])
    for param in ins[1:3]:
        if param is not None and numel(param.shape) != length:
            return "scale/bias that broadcast over the normalized axes (they must have their full size)"
    return True


@kernel("LayerNormalization", supports=_layernorm_supports)
def _build_layernorm(op, b):
    attrs = full_attrs(op.node)
    x, y = op.inputs[0], op.outputs[0]
    g = op.inputs[1] if len(op.inputs) > 1 else None
    bias = op.inputs[2] if len(op.inputs) > 2 else None
    shape = x.info.shape
    axis = _axis(attrs, len(shape), -1)
    rows, length = numel(shape[:axis]), numel(shape[axis:])
    if rows * length == 0:
        return
    g_arg = [b.tensor(g), 1] if g is not None else [b.tensor(y), 0]
    b_arg = [b.tensor(bias), 1] if bias is not None else [b.tensor(y), 0]
    b.launch(
        "layernorm_rows",
        [
            b.tensor(x),
            *g_arg,
            *b_arg,
            b.tensor(y),
            rows,
            length,
            float(attrs.get("epsilon", 1e-5)),
            0,
            LocalMem(ROW_LWS * 4),
        ],
        (rows * ROW_LWS,),
        (ROW_LWS,),
        tunable=False,
    )


#: an Add of two same-shape tensors and the LayerNormalization that reads the sum, run as one (fuse.py)
ADD_LAYERNORM = "opencl.AddLayerNorm"


@kernel(ADD_LAYERNORM)
def _build_add_layernorm(op, b):
    """opencl.AddLayerNorm: inputs x1, x2, then LayerNormalization's scale if attrs["has_scale"] and its
    bias if attrs["has_bias"]; outputs the normalized sum, then the sum itself when something else reads it."""
    x1, x2, *rest = op.inputs
    g = rest.pop(0) if op.node.attrs.get("has_scale") else None
    bias = rest.pop(0) if op.node.attrs.get("has_bias") else None
    y = op.outputs[0]
    total = op.outputs[1] if len(op.outputs) > 1 else None
    shape = x1.info.shape
    axis = _axis(op.node.attrs, len(shape), -1)
    rows, length = numel(shape[:axis]), numel(shape[axis:])
    if rows * length == 0:
        return
    b.launch(
        "add_layernorm_rows",
        [
            b.tensor(x1),
            b.tensor(x2),
            *([b.tensor(total), 1] if total is not None else [b.tensor(y), 0]),
            *([b.tensor(g), 1] if g is not None else [b.tensor(y), 0]),
            *([b.tensor(bias), 1] if bias is not None else [b.tensor(y), 0]),
            b.tensor(y),
            rows,
            length,
            float(op.node.attrs.get("epsilon", 1e-5)),
            LocalMem(ROW_LWS * 4),
        ],
        (rows * ROW_LWS,),
        (ROW_LWS,),
        tunable=False,
    )


#: a Transpose moving axis 1 last and the LayerNormalization over that last axis, run as one (fuse.py)
TRANSPOSE_LAYERNORM = "opencl.TransposeLayerNorm"
LNC_GROUP = (32, 8)  # kernels/norm.cl's LNC_P positions x LNC_L work-items of layernorm_nchw


@kernel(TRANSPOSE_LAYERNORM)
def _build_transpose_layernorm(op, b):
    """opencl.TransposeLayerNorm: input x ([N][C][spatial...]), then LayerNormalization's scale if
    attrs["has_scale"] and its bias if attrs["has_bias"]; output [N][spatial...][C], normalized over C."""
    x, *rest = op.inputs
    g = rest.pop(0) if op.node.attrs.get("has_scale") else None
    bias = rest.pop(0) if op.node.attrs.get("has_bias") else None
    y = op.outputs[0]
    n, c, positions = x.info.shape[0], x.info.shape[1], numel(x.info.shape[2:])
    if n * c * positions == 0:
        return
    per, lanes = LNC_GROUP
    b.launch(
        "layernorm_nchw",
        [
            b.tensor(x),
            *([b.tensor(g), 1] if g is not None else [b.tensor(y), 0]),
            *([b.tensor(bias), 1] if bias is not None else [b.tensor(y), 0]),
            b.tensor(y),
            c,
            positions,
            float(op.node.attrs.get("epsilon", 1e-5)),
        ],
        (n * -(-positions // per) * per * lanes,),
        (per * lanes,),
        tunable=False,
    )


@kernel("InstanceNormalization")
def _build_instancenorm(op, b):
    attrs = full_attrs(op.node)
    x, g, bias = op.inputs
    y = op.outputs[0]
    shape = x.info.shape
    rows, length = numel(shape[:2]), numel(shape[2:])
    if rows * length == 0:
        return
    b.launch(
        "layernorm_rows",
        [
            b.tensor(x),
            b.tensor(g),
            1,
            b.tensor(bias),
            1,
            b.tensor(y),
            rows,
            length,
            float(attrs["epsilon"]),
            int(shape[1]),
            LocalMem(ROW_LWS * 4),
        ],
        (rows * ROW_LWS,),
        (ROW_LWS,),
        tunable=False,
    )


def _batchnorm_supports(node, ins):
    if len(node.outputs) > 1:
        return "training-mode outputs (running mean/variance)"
    if len(ins[0].shape) < 2:
        return "inputs of rank below 2 (no channel axis)"
    if any(p is None or p.shape != (ins[0].shape[1],) for p in ins[1:5]):
        return "scale, bias, mean and variance must each have shape (C,)"
    return True


@kernel("BatchNormalization", supports=_batchnorm_supports)
def _build_batchnorm(op, b):
    attrs = full_attrs(op.node)
    x, g, bias, mean, var = op.inputs[:5]
    y = op.outputs[0]
    shape = x.info.shape
    total = numel(shape)
    b.launch(
        "batchnorm",
        [
            b.tensor(x),
            b.tensor(g),
            b.tensor(bias),
            b.tensor(mean),
            b.tensor(var),
            b.tensor(y),
            total,
            int(shape[1]),
            numel(shape[2:]),
            float(attrs.get("epsilon", 1e-5)),
        ],
        (total,),
    )


for _op in ("Softmax", "LogSoftmax"):
    kernel(_op, supports=_softmax_supports)(_build_softmax)
