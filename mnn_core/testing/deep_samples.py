"""Conformance cases past the blocking thresholds of GEMM-based kernels, which the schemas' small samples
(reduction depth K <= 144) never reach: K over several 256-deep slices with a tail, N a multiple of 64
(an unpacked B sliced 64 rows deep), M and N past several tiles with ragged edges, and convolutions whose
im2col depth C * kh * kw is 300-603, one with rectangular dilations. conformance_cases appends them after
each op's schema samples (so those keep their numbers), for sessions at full precision only: a reduced
precision's fixed tolerance does not grow with K."""

from __future__ import annotations

import numpy as np

from ..ops.schema import Sample


def _u(rng, *shape, depth: int = 1):
    """Uniform values; a weight over a reduction of `depth` terms scaled by 1/sqrt(depth), as trained layers
    are, so outputs stay near 1 and the fixed fp32 tolerances keep their meaning at any K."""
    return (rng.uniform(-1, 1, size=shape) / np.sqrt(depth)).astype("float32")


def deep_samples(op: str, rng: np.random.Generator) -> list[Sample]:
    """The deep cases of `op` (MatMul, Gemm, Conv; none for other ops)."""
    if op == "MatMul":
        return [
            Sample([_u(rng, 37, 600), _u(rng, 600, 53, depth=600)], {}, "deep: (37, 600) @ (600, 53)"),
            Sample([_u(rng, 2, 19, 300), _u(rng, 300, 64, depth=300)], {}, "deep: (2, 19, 300) @ (300, 64)"),
            Sample([_u(rng, 29, 1030), _u(rng, 1030, 129, depth=1030)], {}, "deep: (29, 1030) @ (1030, 129)"),
        ]
    if op == "Gemm":
        return [
            Sample(
                [_u(rng, 33, 520), _u(rng, 70, 520, depth=520), _u(rng, 70)],
                {"transB": 1},
                "deep: (33, 520) @ (70, 520)^T + c",
            ),
            Sample(
                [_u(rng, 520, 17), _u(rng, 520, 48, depth=520), _u(rng, 17, 48)],
                {"transA": 1, "alpha": 0.7, "beta": 0.3},
                "deep: 0.7 (520, 17)^T @ (520, 48) + 0.3 C",
            ),
        ]
    if op == "Conv":
        cases = [
            ((2, 67, 12, 11), (29, 67, 3, 3), {"pads": [1, 1, 1, 1]}),
            ((1, 300, 7, 7), (45, 300, 1, 1), {}),
            ((1, 40, 10, 13), (33, 40, 3, 3), {"dilations": [2, 1], "strides": [1, 2], "pads": [2, 1, 2, 1]}),
        ]

        def conv(xs, ws, attrs):
            inputs = [_u(rng, *xs), _u(rng, *ws, depth=int(np.prod(ws[1:]))), _u(rng, ws[0])]
            return Sample(inputs, {"kernel_shape": list(ws[2:]), **attrs}, f"deep: {xs} * {ws} {attrs}")

        return [conv(*case) for case in cases]
    return []
