"""The fp16 domain's own normalization, activation, softmax and resize kernels (fp16h.c: LayerNormalization
and InstanceNormalization on fp16 rows, GELU / tanh / leaky relu on 8 halves, Softmax / LogSoftmax; resize.c:
nearest Resize as copies of halves; move.c: transposes of halves by 8x8 blocks) against the reference backend on
random inputs of odd sizes (vector tails, one-element rows, rows longer than a statistics block) and values
far into each function's tails, with the plan checked to run them on halves (no widened step)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ON_ARM, needs_arm

from mnn_core.testing import ConformanceCase, conformance_graph

RNG = np.random.default_rng(38)


def f32(*shape, scale=1.0, offset=0.0):
    return (RNG.standard_normal(shape) * scale + offset).astype(np.float32)


def _cases():
    """(op, inputs, attrs, constant parameters, rtol, atol)"""
    c = []
    for shape, offset in [((3, 7), 0.0), ((5, 96), 2.0), ((2, 9, 1), 0.0), ((4, 776), -3.0), ((1, 3, 1029), 0.5)]:
        n = shape[-1]
        for constant in (True, False):
            params = [f32(n, scale=0.5, offset=1.0), f32(n, scale=0.3)]
            c.append(("LayerNormalization", [f32(*shape, offset=offset), *params], {"axis": -1}, constant, 1e-2, 1e-2))
    c.append(("LayerNormalization", [f32(2, 3, 5, 7)], {"axis": 2}, True, 1e-2, 1e-2))  # no scale or shift given
    c.append(("LayerNormalization", [f32(6, 40), f32(40)], {"axis": -1, "epsilon": 1e-3}, True, 1e-2, 1e-2))
    for shape in [(1, 3, 5, 7), (2, 4, 33), (1, 2, 40, 41)]:
        x, scale, shift = f32(*shape, offset=1.0), f32(shape[1]), f32(shape[1])
        c.append(("InstanceNormalization", [x, scale, shift], {}, True, 1e-2, 1e-2))
    # GELU: the approximation's 2.5e-5 and fp16's rounding of input and output; values out to +-12 and a tail
    for n in (1, 7, 8, 37, 1000):
        x = f32(n, scale=4.0)
        x[: min(n, 4)] = np.array([-100.0, -8.5, 9.0, 0.0], np.float32)[: min(n, 4)]
        c.append(("Gelu", [x], {}, True, 3e-3, 1e-3))
        c.append(("Tanh", [x], {}, True, 3e-3, 2e-3))
        c.append(("LeakyRelu", [x], {"alpha": 0.1}, True, 2e-3, 1e-4))
    # Softmax / LogSoftmax: rows (vector tails, a long row of small terms) and a strided axis (a detector's
    # DFL bins: 16 along axis 1, 8-column vectors and a tail); inputs within +-10 (fp16's rounding of them
    # moves e^x by up to 0.5%)
    for shape, axis in [((3, 1), -1), ((5, 7), -1), ((2, 8), 1), ((4, 37), -1), ((2, 1000), -1), ((1, 16, 4, 37), 1)]:
        for op in ("Softmax", "LogSoftmax"):
            c.append((op, [f32(*shape, scale=3.0)], {"axis": axis}, True, 1e-2, 1e-3))
    c.append(("Softmax", [f32(2, 16, 3, scale=3.0)], {"axis": 1}, True, 1e-2, 1e-3))
    x = np.full((1, 300), -30.0, np.float32)
    x[0, 7] = 0.0
    c.append(("Softmax", [x.copy()], {"axis": -1}, True, 2e-3, 2e-7))  # 299 terms of e^-30: 1 and (almost) 0s
    x[0, 8:] = -11.0  # 292 terms of e^-11 (1.7e-5, fp16 subnormals) must still sum to 0.5% of the row
    c.append(("Softmax", [x], {"axis": -1}, True, 2e-3, 2e-7))
    # nearest Resize: YOLOv8's 2x upsampling, a downscale, rank 3, and tf_crop_and_resize's extrapolation
    nearest = {"mode": "nearest", "nearest_mode": "floor", "coordinate_transformation_mode": "asymmetric"}
    for shape, given in [
        ((1, 5, 7, 9), {"scales": [1.0, 1.0, 2.0, 2.0]}),
        ((2, 3, 11, 10), {"sizes": [2, 3, 4, 7]}),
        ((3, 4, 13), {"scales": [1.0, 3.0, 1.0]}),
        ((1, 2, 5, 1), {"scales": [1.0, 1.0, 2.0, 3.0]}),
        (
            (1, 1, 7, 6),
            {
                "sizes": [1, 1, 5, 5],
                "extrapolation_value": 9.0,
                "coordinate_transformation_mode": "tf_crop_and_resize",
                "roi": [0, 0, -0.2, 0.1, 1, 1, 1.1, 0.8],
            },
        ),
    ]:
        # copies: exact but for fp16's rounding of the input (2^-11 relative)
        c.append(("Resize", [f32(*shape)], {**nearest, **given}, True, 5e-4, 1e-7))
    # Transpose of 2-byte elements: 8x8 blocks with both tails (ConvNeXt's NCHW <-> NHWC), and a strided
    # gather of halves
    for shape, perm in [((1, 19, 5, 13), (0, 2, 3, 1)), ((1, 13, 17, 24), (0, 3, 1, 2)), ((2, 37, 45), (0, 2, 1))]:
        c.append(("Transpose", [f32(*shape)], {"perm": list(perm)}, True, 5e-4, 1e-7))
    c.append(("Transpose", [f32(3, 5, 2, 11)], {"perm": [1, 3, 0, 2]}, True, 5e-4, 1e-7))
    return c


CASES = _cases() if ON_ARM else []


def _fp16():
    from mnn_arm import paths

    return paths.runnable("fp16")


@needs_arm
@pytest.mark.parametrize("i", range(len(CASES)), ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_fp16_kernel(i):
    if not _fp16():
        pytest.skip("this CPU lacks asimdhp (no fp16 path)")
    from mnn_core.ops import all_schemas, run_reference
    from mnn_core.runtime.session import Session

    op, inputs, given, constant, rtol, atol = CASES[i]
    attrs = {**{k: a.default for k, a in all_schemas()[op].attrs.items()}, **given}
    graph, feeds = conformance_graph(op, inputs, attrs, constant)
    case = ConformanceCase(op, i, graph, feeds, run_reference(op, list(inputs), attrs), f"{op} {given}")
    sess = Session(case.graph, backend="arm", fallback=False, optimize=False, precision="low")
    for _ in range(2):  # twice: nothing may depend on leftover state
        got = sess.run(dict(case.feeds), profile=True)[case.graph.outputs[0]]
        np.testing.assert_allclose(got, case.expected[0], rtol=rtol, atol=atol, err_msg=case.label)
    widened = [name for name, _ in sess.profile() if "widened" in name]
    assert not widened, f"{op} ran widened to fp32: {widened}"
