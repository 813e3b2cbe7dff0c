"""PyTorch as the independent oracle for the training ops ONNX has no counterpart of: gradients come from
autograd on the forward op, optimizer updates from a `torch.optim` step, batch statistics and the loss
from torch's own functions (PyTorch is a test-only dependency, imported on first use).

    outs = oracle_outputs("ConvGradInput", inputs, attrs)   # attrs complete (schema.check_attrs)

Everything runs in float64 (the math, not one more float32 rounding) and comes back in the dtype the op
produces, so the comparison uses the table's "oracle" tolerances. Ops whose gradient takes the forward
*output* (ReluGrad's y, SoftmaxGrad's y) are judged at the forward input that made it; inputs no forward
op could have made raise OracleSkip (SigmoidGrad's go to torch's sigmoid_backward, which takes y too).
COVERS declares what this module judges (tests/test_oracle_coverage.py reads it).
"""

from __future__ import annotations

import math

import numpy as np

from .onnx_oracle import OracleSkip


def _torch():
    import torch

    return torch


def _t(a, grad: bool = False):
    """A float64 (or int64, for integer arrays) leaf tensor of `a`."""
    torch = _torch()
    a = np.asarray(a)
    t = torch.from_numpy(np.array(a, dtype=np.int64 if a.dtype.kind in "iub" else np.float64))
    return t.requires_grad_(True) if grad else t


def _back(t, dtype) -> np.ndarray:
    return t.detach().numpy().astype(dtype)


def _grad_of(forward, x, dy):
    """d(forward(x)) / dx applied to dy, by autograd; the gradient in x's dtype."""
    xt = _t(x, grad=True)
    forward(xt).backward(_t(dy))
    return [_back(xt.grad, np.asarray(dy).dtype)]


# -- activations: autograd of the forward function at the input that produced what the op takes -------


def _relu_input(y, attrs):
    if (y < 0).any():
        raise OracleSkip("ReluGrad's y has negative values: no Relu output")
    return y  # relu(y) = y; y == 0 came from x <= 0, where torch's derivative is 0 as at x = 0


def _clip_input(y, attrs):
    lo, hi = attrs["min"], attrs["max"]
    if (y < lo).any() or (y > hi).any():
        raise OracleSkip("ClipGrad's y lies outside [min, max]: no Clip output")
    return np.where(y <= lo, lo - 1.0, np.where(y >= hi, hi + 1.0, y))  # a value at a bound was clipped there


def _logit(y, attrs):
    y = y.astype(np.float64)
    return np.log(y) - np.log1p(-y)


def _atanh(y, attrs):
    if (np.abs(y) >= 1).any():
        raise OracleSkip("TanhGrad's y lies outside (-1, 1): no Tanh output")
    return np.arctanh(y.astype(np.float64))


def _as_is(v, attrs):
    return v


def _activation_forwards():
    F = _torch().nn.functional
    clamp = _torch().clamp
    return {  # op -> (forward(x, attrs), the input the op's second argument is turned back into)
        "ReluGrad": (lambda x, a: F.relu(x), _relu_input),
        "ClipGrad": (
            lambda x, a: clamp(
                x, None if a["min"] == -math.inf else a["min"], None if a["max"] == math.inf else a["max"]
            ),
            _clip_input,
        ),
        "SigmoidGrad": (lambda x, a: _torch().sigmoid(x), _logit),
        "TanhGrad": (lambda x, a: _torch().tanh(x), _atanh),
        "LeakyReluGrad": (lambda x, a: F.leaky_relu(x, a["alpha"]), _as_is),
        "GeluGrad": (lambda x, a: F.gelu(x), _as_is),
        "SiluGrad": (lambda x, a: F.silu(x), _as_is),
        "HardSigmoidGrad": (lambda x, a: clamp(a["alpha"] * x + a["beta"], 0.0, 1.0), _as_is),
        "HardSwishGrad": (lambda x, a: F.hardswish(x), _as_is),
    }


def _activation_grad(op):
    def oracle(ins, attrs):
        dy, v = ins
        if op == "SigmoidGrad" and ((v <= 0) | (v >= 1)).any():  # no Sigmoid output: torch's kernel from y
            return [_back(_torch().ops.aten.sigmoid_backward(_t(dy), _t(v)), dy.dtype)]
        forward, to_input = _activation_forwards()[op]
        return _grad_of(lambda x: forward(x, attrs), to_input(np.asarray(v), attrs), dy)

    return oracle


def _softmax_grad(ins, attrs):
    dy, y = ins
    if (y <= 0).any():
        raise OracleSkip("SoftmaxGrad's y has values <= 0: no Softmax output")
    F = _torch().nn.functional
    return _grad_of(lambda x: F.softmax(x, dim=attrs["axis"]), np.log(y.astype(np.float64)), dy)


def _log_softmax_grad(ins, attrs):
    dy, y = ins  # log_softmax(y) == y exactly when y is a log-softmax output
    F = _torch().nn.functional
    return _grad_of(lambda x: F.log_softmax(x, dim=attrs["axis"]), y, dy)


# -- shape family: the adjoint of a forward indexing op, by autograd ----------------------------


def _sum_to_shape(ins, attrs):
    (x,) = ins
    return _grad_of(lambda s: s.expand(x.shape), np.zeros(attrs["shape"]), x)


def _gather_grad(ins, attrs):
    dy, idx = ins
    shape = tuple(attrs["input_shape"])
    axis = attrs["axis"] % len(shape)
    index = (slice(None),) * axis + (_t(idx),)  # torch's advanced indexing takes negative indices
    return _grad_of(lambda x: x[index], np.zeros(shape), dy)


def _slice_grad(ins, attrs):
    """Which elements a Slice takes, from Python's own slice rules on an index grid (ONNX Slice clamps as
    they do); the adjoint of taking them, by autograd."""
    (dy,) = ins
    shape = tuple(attrs["input_shape"])
    axes = attrs["axes"] or list(range(len(attrs["starts"])))
    steps = attrs["steps"] or [1] * len(axes)
    window = [slice(None)] * len(shape)
    for axis, start, end, step in zip(axes, attrs["starts"], attrs["ends"], steps):
        window[axis % len(shape)] = slice(start, end, step)
    taken = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)[tuple(window)]
    return _grad_of(
        lambda x: x.reshape(-1)[_t(taken.reshape(-1))].reshape(taken.shape), np.zeros(shape), dy.reshape(taken.shape)
    )


# -- losses ---------------------------------------------------------------------------------


def _cross_entropy(logits, target, attrs):
    F = _torch().nn.functional
    return F.cross_entropy(
        logits,
        _t(target),
        reduction=attrs["reduction"],
        ignore_index=attrs["ignore_index"],
        label_smoothing=attrs["label_smoothing"],
    )


def _ce(ins, attrs):
    logits, target = ins
    return [_back(_cross_entropy(_t(logits), target, attrs), logits.dtype)]


def _ce_grad(ins, attrs):
    dloss, logits, target = ins
    return _grad_of(lambda z: _cross_entropy(z, target, attrs), logits, dloss)


# -- normalization in training ------------------------------------------------------------------


def _batch_norm_training(ins, attrs):
    torch = _torch()
    x, scale, bias, running_mean, running_var = ins
    xt, rm, rv = _t(x), _t(running_mean), _t(running_var)  # torch updates the running stats in place
    y = torch.nn.functional.batch_norm(
        xt, rm, rv, _t(scale), _t(bias), training=True, momentum=attrs["momentum"], eps=attrs["epsilon"]
    )
    var, mean = torch.var_mean(xt, dim=[0] + list(range(2, x.ndim)), correction=0)
    return [_back(v, x.dtype) for v in (y, mean, var, rm, rv)]


def _batch_norm_grad(ins, attrs):
    torch = _torch()
    dy, x, scale, mean, var = ins
    axes = (0,) + tuple(range(2, x.ndim))
    training = bool(attrs["training"])
    if training and not (
        np.allclose(mean, x.mean(axis=axes), atol=1e-6) and np.allclose(var, x.var(axis=axes), rtol=1e-5, atol=1e-6)
    ):
        raise OracleSkip("training=1 with mean/var that are not x's batch statistics")
    xt, st, bt = _t(x, grad=True), _t(scale, grad=True), _t(np.zeros_like(scale), grad=True)
    y = torch.nn.functional.batch_norm(
        xt,
        None if training else _t(mean),
        None if training else _t(var),
        st,
        bt,
        training=training,
        eps=attrs["epsilon"],
    )
    y.backward(_t(dy))
    return [_back(t.grad, dy.dtype) for t in (xt, st, bt)]


def _layer_norm_grad(ins, attrs):
    torch = _torch()
    dy, x, scale = ins
    axis = attrs["axis"] % x.ndim
    xt, st, bt = _t(x, grad=True), _t(scale, grad=True), _t(np.zeros_like(scale), grad=True)
    torch.nn.functional.layer_norm(xt, x.shape[axis:], st, bt, eps=attrs["epsilon"]).backward(_t(dy))
    return [_back(t.grad, dy.dtype) for t in (xt, st, bt)]


# -- convolution and pooling (NCHW, pads [top, left, bottom, right]) -------------------------------


def _window_attrs(attrs):
    strides = attrs["strides"] or [1, 1]
    dilations = attrs.get("dilations") or [1, 1]
    pads = attrs["pads"] or [0, 0, 0, 0]
    return strides, dilations, pads


def _conv(x, w, b, attrs):
    torch = _torch()
    strides, dilations, (pt, pl, pb, pr) = _window_attrs(attrs)
    xp = torch.nn.functional.pad(x, (pl, pr, pt, pb))  # torch's own padding is symmetric only
    return torch.nn.functional.conv2d(xp, w, b, stride=strides, dilation=dilations, groups=attrs["group"])


def _conv_grad_input(ins, attrs):
    dy, w = ins
    return _grad_of(lambda x: _conv(x, _t(w), None, attrs), np.zeros(attrs["input_shape"]), dy)


def _conv_grad_weight(ins, attrs):
    dy, x = ins
    wshape = (dy.shape[1], x.shape[1] // attrs["group"], *attrs["kernel_shape"])
    wt, bt = _t(np.zeros(wshape), grad=True), _t(np.zeros(wshape[0]), grad=True)
    _conv(_t(x), wt, bt, attrs).backward(_t(dy))
    return [_back(wt.grad, dy.dtype), _back(bt.grad, dy.dtype)]


def _torch_pool_padding(attrs, pad_value):
    """(padding for torch, a pre-pad function): torch pads symmetrically, at most half the kernel."""
    strides, dilations, pads = _window_attrs(attrs)
    pt, pl, pb, pr = pads
    if pt == pb and pl == pr and pt <= attrs["kernel_shape"][0] // 2 and pl <= attrs["kernel_shape"][1] // 2:
        return (pt, pl), lambda x: x
    if attrs["ceil_mode"]:
        raise OracleSkip(f"ceil_mode with pads {pads} torch cannot take: pre-padding moves the ceil rule")
    return (0, 0), lambda x: _torch().nn.functional.pad(x, (pl, pr, pt, pb), value=pad_value)


def _max_pool_grad(ins, attrs):
    dy, x = ins
    strides, dilations, _ = _window_attrs(attrs)
    padding, prepad = _torch_pool_padding(attrs, -math.inf)
    F = _torch().nn.functional
    return _grad_of(
        lambda t: F.max_pool2d(
            prepad(t), attrs["kernel_shape"], strides, padding, dilations, ceil_mode=bool(attrs["ceil_mode"])
        ),
        x,
        dy,
    )


def _average_pool_grad(ins, attrs):
    (dy,) = ins
    strides, dilations, _ = _window_attrs(attrs)
    if dilations != [1, 1]:
        raise OracleSkip("torch's avg_pool2d has no dilations")
    padding, prepad = _torch_pool_padding(attrs, 0.0)
    if padding == (0, 0) and any(attrs["pads"] or []) and not attrs["count_include_pad"]:
        raise OracleSkip("asymmetric pads without count_include_pad: torch would count the pre-padding")
    F = _torch().nn.functional
    return _grad_of(
        lambda t: F.avg_pool2d(
            prepad(t),
            attrs["kernel_shape"],
            strides,
            padding,
            ceil_mode=bool(attrs["ceil_mode"]),
            count_include_pad=bool(attrs["count_include_pad"]),
        ),
        np.zeros(attrs["input_shape"]),
        dy,
    )


def _global_average_pool_grad(ins, attrs):
    (dy,) = ins
    shape = tuple(attrs["input_shape"])
    return _grad_of(lambda x: x.mean(dim=tuple(range(2, len(shape))), keepdim=True), np.zeros(shape), dy)


# -- optimizer updates: one torch.optim step from the given state ----------------------------------


def _step(make, p, g, state: dict | None = None):
    torch = _torch()
    param = torch.nn.Parameter(_t(p))
    param.grad = _t(g)
    opt = make([param])
    if state:
        opt.state[param].update(state)
    opt.step()
    return param, opt.state[param]


def _sgd(ins, attrs):
    p, g, lr = ins
    torch = _torch()
    param, _ = _step(
        lambda ps: torch.optim.SGD(ps, lr=float(lr), weight_decay=attrs["weight_decay"], foreach=False), p, g
    )
    return [_back(param, p.dtype)]


def _sgd_momentum(ins, attrs):
    p, g, buf, lr = ins[:4]
    first = len(ins) > 4 and ins[4] is not None and float(ins[4]) == 1.0
    torch = _torch()
    param, state = _step(
        lambda ps: torch.optim.SGD(
            ps,
            lr=float(lr),
            momentum=attrs["momentum"],
            dampening=attrs["dampening"],
            nesterov=bool(attrs["nesterov"]),
            weight_decay=attrs["weight_decay"],
            foreach=False,
        ),
        p,
        g,
        None if first else {"momentum_buffer": _t(buf)},
    )  # on its first step torch starts the buffer
    return [_back(param, p.dtype), _back(state["momentum_buffer"], p.dtype)]


def _adam(ins, attrs):
    p, g, m, v, lr, step = ins
    torch = _torch()
    kind = torch.optim.AdamW if attrs["decoupled"] else torch.optim.Adam
    param, state = _step(
        lambda ps: kind(
            ps,
            lr=float(lr),
            betas=(attrs["beta1"], attrs["beta2"]),
            eps=attrs["eps"],
            weight_decay=attrs["weight_decay"],
            foreach=False,
        ),
        p,
        g,
        {"step": torch.tensor(float(step) - 1.0), "exp_avg": _t(m), "exp_avg_sq": _t(v)},
    )
    return [_back(t, p.dtype) for t in (param, state["exp_avg"], state["exp_avg_sq"])]


#: op -> oracle(inputs, complete attrs) -> outputs: the ops this module judges
ORACLES = {
    **{
        op: _activation_grad(op)
        for op in (
            "ReluGrad",
            "ClipGrad",
            "SigmoidGrad",
            "TanhGrad",
            "LeakyReluGrad",
            "GeluGrad",
            "SiluGrad",
            "HardSigmoidGrad",
            "HardSwishGrad",
        )
    },
    "SoftmaxGrad": _softmax_grad,
    "LogSoftmaxGrad": _log_softmax_grad,
    "SumToShape": _sum_to_shape,
    "GatherGrad": _gather_grad,
    "SliceGrad": _slice_grad,
    "SoftmaxCrossEntropy": _ce,
    "SoftmaxCrossEntropyGrad": _ce_grad,
    "BatchNormTraining": _batch_norm_training,
    "BatchNormGrad": _batch_norm_grad,
    "LayerNormGrad": _layer_norm_grad,
    "ConvGradInput": _conv_grad_input,
    "ConvGradWeight": _conv_grad_weight,
    "MaxPoolGrad": _max_pool_grad,
    "AveragePoolGrad": _average_pool_grad,
    "GlobalAveragePoolGrad": _global_average_pool_grad,
    "SGDUpdate": _sgd,
    "SGDMomentumUpdate": _sgd_momentum,
    "AdamUpdate": _adam,
}

#: the ops PyTorch judges in the test suite (tests/test_oracle_torch.py)
COVERS = frozenset(ORACLES)


def oracle_outputs(op: str, inputs: list, attrs: dict) -> list:
    """PyTorch's outputs of `op` on `inputs` with complete `attrs`; raises OracleSkip where it has none."""
    if op not in ORACLES:
        raise OracleSkip(f"{op} has no PyTorch oracle here")
    return ORACLES[op](list(inputs), attrs)
