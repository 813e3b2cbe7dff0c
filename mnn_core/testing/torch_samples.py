"""Random cases for the ops PyTorch judges (torch_oracle), beyond the schemas' own samples: odd and empty
sizes, float64, rectangular kernels with unequal strides and dilations, repeated gather indices, ties in a
max-pool window, late optimizer steps. Values a gradient op takes from its forward op (ReluGrad's y,
SoftmaxGrad's y) are made by that forward op, so every case is one a training graph can produce.

    for sample in torch_samples("ConvGradInput", np.random.default_rng(0)): ...
"""

from __future__ import annotations

import numpy as np

from ..ops.schema import Sample


def _u(rng, shape, dtype="float32", low=-1.0, high=1.0):
    return rng.uniform(low, high, size=shape).astype(dtype)


_ACT_SHAPES = [((13,), "float32"), ((3, 17, 5), "float64"), ((2, 7, 9, 11), "float32"), ((0, 4), "float32")]


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


#: activation gradient -> (attrs, the value it takes from forward input x)
_ACTIVATIONS = {
    "ReluGrad": ({}, lambda x, a: np.maximum(x, 0)),
    "ClipGrad": ({"min": -1.0, "max": 1.5}, lambda x, a: np.clip(x, a["min"], a["max"])),
    "SigmoidGrad": ({}, lambda x, a: _sigmoid(x)),
    "TanhGrad": ({}, lambda x, a: np.tanh(x)),
    "LeakyReluGrad": ({"alpha": 0.07}, lambda x, a: x),
    "GeluGrad": ({}, lambda x, a: x),
    "SiluGrad": ({}, lambda x, a: x),
    "HardSigmoidGrad": ({"alpha": 1.0 / 6.0, "beta": 0.5}, lambda x, a: x),
    "HardSwishGrad": ({}, lambda x, a: x),
}


def _activation(op, rng):
    attrs, value = _ACTIVATIONS[op]
    for shape, dtype in _ACT_SHAPES:
        x = _u(rng, shape, "float64", -5, 5)
        yield Sample([_u(rng, shape, dtype), value(x, attrs).astype(dtype)], attrs, f"{shape} {dtype}")


def _softmax(op, rng):
    for shape, axis, dtype in [((5, 1), -1, "float32"), ((2, 9, 13), 1, "float64"), ((3, 4, 5, 6), -2, "float32")]:
        x = _u(rng, shape, "float64", -4, 4)
        z = x - x.max(axis=axis, keepdims=True)
        log_y = z - np.log(np.exp(z).sum(axis=axis, keepdims=True))
        y = log_y if op == "LogSoftmaxGrad" else np.exp(log_y)
        yield Sample([_u(rng, shape, dtype), y.astype(dtype)], {"axis": axis}, f"{shape} axis {axis} {dtype}")


def _sum_to_shape(op, rng):
    for src, dst, dtype in [
        ((5, 7, 3), (7, 1), "float32"),
        ((2, 1, 9), (1, 9), "float64"),
        ((4, 3, 1, 5), (3, 1, 1), "float32"),
        ((11,), (1,), "float32"),
        ((3, 0, 2), (2,), "float32"),
    ]:
        yield Sample([_u(rng, src, dtype)], {"shape": list(dst)}, f"{src}->{dst} {dtype}")


def _gather_grad(op, rng):
    for shape, idx_shape, axis, dtype in [
        ((9, 3, 5), (4, 2), 2, "float32"),
        ((17,), (25,), 0, "float64"),
        ((2, 6, 3, 4), (3,), -3, "float32"),
    ]:
        size = shape[axis]
        idx = rng.integers(-size, size, size=idx_shape).astype(np.int64)  # more indices than rows: repeats
        dy = _u(rng, shape[: axis % len(shape)] + idx_shape + shape[axis % len(shape) + 1 :], dtype)
        yield Sample([dy, idx], {"axis": axis, "input_shape": list(shape)}, f"{shape}[{idx_shape}] axis {axis}")


def _slice_grad(op, rng):
    from ..ops.shape import slice_plan

    for shape, attrs in [
        ((9, 11), {"starts": [-1, 10], "ends": [-100, 1], "axes": [0, 1], "steps": [-3, -4]}),
        ((5, 6, 7), {"starts": [1], "ends": [2**62], "axes": [-2], "steps": [2]}),
        ((8,), {"starts": [-3], "ends": [-1]}),
        ((4, 3, 5), {"starts": [0, 4], "ends": [-(2**62), 0], "axes": [1, 2], "steps": [1, -1]}),
    ]:
        out = slice_plan(shape, {"axes": [], "steps": [], **attrs})[1]
        yield Sample([_u(rng, out)], {**attrs, "input_shape": list(shape)}, f"{shape} {attrs}")


def _cross_entropy(op, rng):
    cases = [
        ((7, 13), {}, "int64", "float32"),
        ((3, 11, 5), {"reduction": "sum", "ignore_index": 2, "label_smoothing": 0.2}, "int32", "float32"),
        ((9, 5), {"reduction": "none", "label_smoothing": 0.05}, "soft", "float64"),
        ((2, 4, 3, 5), {"ignore_index": 0, "label_smoothing": 0.1}, "uint8", "float32"),
        ((6, 3, 7), {"reduction": "none", "ignore_index": 1}, "int8", "float64"),
    ]
    for shape, attrs, target_kind, dtype in cases:
        logits = _u(rng, shape, dtype, -6, 6)
        if target_kind == "soft":
            t = rng.random(shape)
            target = (t / t.sum(axis=1, keepdims=True)).astype(dtype)
        else:
            target = rng.integers(0, shape[1], size=shape[:1] + shape[2:]).astype(target_kind)
            target.reshape(-1)[0] = (attrs.get("ignore_index", -1) + 1) % shape[1]  # at least one item counts
        ins = [logits, target]
        if op == "SoftmaxCrossEntropyGrad":
            out = shape[:1] + shape[2:] if attrs.get("reduction") == "none" else ()
            ins = [_u(rng, out, dtype, 0.5, 1.5)] + ins
        yield Sample(ins, attrs, f"{shape} {attrs} {target_kind} {dtype}")


def _batch_norm_training(op, rng):
    for shape, attrs, dtype in [
        ((5, 7, 3, 3), {"momentum": 0.3, "epsilon": 1e-3}, "float64"),
        ((9, 1), {}, "float32"),
        ((2, 5, 11), {"momentum": 0.01}, "float32"),
    ]:
        c = shape[1]
        yield Sample(
            [
                _u(rng, shape, dtype, -3, 5),
                _u(rng, c, dtype, 0.5, 1.5),
                _u(rng, c, dtype),
                _u(rng, c, dtype),
                _u(rng, c, dtype, 0.5, 2.0),
            ],
            attrs,
            f"{shape} {attrs} {dtype}",
        )


def _batch_norm_grad(op, rng):
    for shape, dtype in [((3, 5, 4, 7), "float32"), ((16, 3), "float64"), ((2, 1, 9), "float32")]:
        c, axes = shape[1], (0,) + tuple(range(2, len(shape)))
        x = _u(rng, shape, dtype, -2, 4)
        for training in (1, 0):
            var = x.var(axis=axes) + (0.0 if training else 0.3)
            yield Sample(
                [_u(rng, shape, dtype), x, _u(rng, c, dtype, 0.5, 1.5), x.mean(axis=axes), var],
                {"training": training, "epsilon": 1e-4},
                f"{shape} training={training} {dtype}",
            )


def _layer_norm_grad(op, rng):
    for shape, axis, dtype in [((3, 5, 7), 1, "float32"), ((6, 17), -1, "float64"), ((2, 3, 4, 5), 0, "float32")]:
        yield Sample(
            [_u(rng, shape, dtype), _u(rng, shape, dtype, -3, 3), _u(rng, shape[axis:], dtype)],
            {"axis": axis, "epsilon": 1e-3},
            f"{shape} axis {axis} {dtype}",
        )


#: x shape, weight shape, attributes: rectangular kernels, unequal strides and dilations, asymmetric pads,
#: grouped and depthwise, 1x1, and a reduction depth (C * kh * kw = 288) past the small-tile paths
_CONV_CASES = [
    ((2, 5, 11, 9), (7, 5, 3, 2), {"strides": [2, 3], "dilations": [2, 1], "pads": [1, 2, 0, 1]}),
    ((1, 6, 7, 8), (9, 2, 3, 3), {"group": 3, "strides": [1, 2], "pads": [1, 1, 1, 1]}),
    ((2, 5, 9, 9), (5, 1, 5, 5), {"group": 5, "dilations": [1, 2], "pads": [2, 4, 2, 4]}),
    ((3, 17, 4, 5), (13, 17, 1, 1), {}),
    ((1, 32, 12, 12), (24, 32, 3, 3), {"pads": [1, 1, 1, 1]}),
]


def _conv(op, rng):
    from ..backend.kit.geometry import conv_geometry

    for xs, ws, attrs in _CONV_CASES:
        full = {"kernel_shape": list(ws[2:]), "group": 1, **attrs}
        geo = conv_geometry(xs, ws, {"strides": [], "dilations": [], "pads": [], "auto_pad": "NOTSET", **full})
        dy = _u(rng, geo["out"])
        if op == "ConvGradInput":
            yield Sample([dy, _u(rng, ws)], {**full, "input_shape": list(xs)}, f"{xs} {ws} {attrs}")
        else:
            yield Sample([dy, _u(rng, xs)], full, f"{xs} {ws} {attrs}")


_POOL_CASES = [
    ((2, 3, 11, 9), {"kernel_shape": [3, 2], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ((1, 2, 9, 10), {"kernel_shape": [3, 3], "strides": [2, 3], "pads": [1, 1, 1, 1], "ceil_mode": 1}),
    ((1, 2, 8, 7), {"kernel_shape": [3, 3], "pads": [0, 1, 2, 1]}),
    ((1, 4, 7, 10), {"kernel_shape": [4, 4], "strides": [3, 3], "pads": [2, 1, 2, 1], "ceil_mode": 1}),
]


def _pool(op, rng):
    from ..ops.conv_grad import pool_grad_geometry

    cases = _POOL_CASES + (
        [((2, 3, 11, 9), {"kernel_shape": [3, 2], "dilations": [1, 2], "pads": [1, 1, 1, 1]})]
        if op == "MaxPoolGrad"
        else []
    )
    for xs, attrs in cases:
        full = {"strides": [], "pads": [], "dilations": [], "ceil_mode": 0, **attrs}
        dy = _u(rng, pool_grad_geometry(xs, full)["out"])
        if op == "MaxPoolGrad":
            yield Sample([dy, _u(rng, xs)], attrs, f"{xs} {attrs}")
            ties = rng.integers(-2, 3, size=xs).astype("float32")  # the first maximum of a window wins
            yield Sample([dy, ties], attrs, f"{xs} {attrs} with ties")
        else:
            pads = attrs.get("pads", [0, 0, 0, 0])
            symmetric = pads[:2] == pads[2:]  # else torch pads first, counting the padding: include only
            for include in (0, 1) if symmetric else (1,):
                yield Sample(
                    [dy],
                    {**attrs, "input_shape": list(xs), "count_include_pad": include},
                    f"{xs} {attrs} count_include_pad={include}",
                )


def _global_pool(op, rng):
    for shape, dtype in [((2, 3, 11), "float32"), ((3, 5, 7, 9), "float64"), ((1, 2, 3, 4, 5), "float32")]:
        yield Sample(
            [_u(rng, shape[:2] + (1,) * (len(shape) - 2), dtype)], {"input_shape": list(shape)}, f"{shape} {dtype}"
        )


_PARAM_SHAPES = [((1,), "float32"), ((13, 7), "float64"), ((2, 3, 5, 7), "float32")]


def _optim(op, rng):
    for shape, dtype in _PARAM_SHAPES:
        p, g = _u(rng, shape, dtype), _u(rng, shape, dtype)
        s = lambda v: np.asarray(v, dtype)  # noqa: E731  lr and step share the parameter's dtype
        if op == "SGDUpdate":
            for wd in (0.0, 0.01):
                yield Sample([p, g, s(0.3)], {"weight_decay": wd}, f"{shape} {dtype} wd={wd}")
        elif op == "SGDMomentumUpdate":
            buf = _u(rng, shape, dtype)
            yield Sample([p, g, buf, s(0.02), s(5)], {"momentum": 0.7, "dampening": 0.3}, f"{shape} {dtype} step 5")
            yield Sample([p, g, buf, s(0.02), s(1)], {"momentum": 0.7, "dampening": 0.3}, f"{shape} {dtype} step 1")
            yield Sample(
                [p, g, buf, s(0.1)],
                {"momentum": 0.95, "nesterov": 1, "weight_decay": 0.02},
                f"{shape} {dtype} nesterov",
            )
        else:
            m, v = _u(rng, shape, dtype), _u(rng, shape, dtype, 0.0, 0.5)
            for step, attrs in [
                (1, {"beta1": 0.8, "beta2": 0.99, "eps": 1e-6}),
                (10, {"weight_decay": 0.1}),
                (1000, {"weight_decay": 0.05, "decoupled": 1}),
            ]:
                yield Sample([p, g, m, v, s(0.01), s(step)], attrs, f"{shape} {dtype} step {step} {attrs}")


_GENERATORS = {
    **{op: _activation for op in _ACTIVATIONS},
    "SoftmaxGrad": _softmax,
    "LogSoftmaxGrad": _softmax,
    "SumToShape": _sum_to_shape,
    "GatherGrad": _gather_grad,
    "SliceGrad": _slice_grad,
    "SoftmaxCrossEntropy": _cross_entropy,
    "SoftmaxCrossEntropyGrad": _cross_entropy,
    "BatchNormTraining": _batch_norm_training,
    "BatchNormGrad": _batch_norm_grad,
    "LayerNormGrad": _layer_norm_grad,
    "ConvGradInput": _conv,
    "ConvGradWeight": _conv,
    "MaxPoolGrad": _pool,
    "AveragePoolGrad": _pool,
    "GlobalAveragePoolGrad": _global_pool,
    "SGDUpdate": _optim,
    "SGDMomentumUpdate": _optim,
    "AdamUpdate": _optim,
}


def torch_samples(op: str, rng: np.random.Generator) -> list[Sample]:
    """This module's cases for `op` (empty for an op it has none for)."""
    gen = _GENERATORS.get(op)
    return list(gen(op, rng)) if gen else []
