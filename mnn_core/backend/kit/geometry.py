"""Where a sliding window lands: the output sizes, explicit pads, strides and dilations of
convolution, transposed convolution and pooling over 1 to 3 spatial axes, following ONNX's
formulas (auto_pad SAME_UPPER/SAME_LOWER/VALID, ceil_mode, output_shape/output_padding).

The reference kernels and every backend resolve a node's geometry here, so tests/test_kit_geometry.py
judges it against ONNX Runtime, and the conformance kit checks SAME padding against pads it works
out on its own (mnn_core.testing.conformance)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from mnn_core.errors import GraphError

#: spatial axes Conv and ConvTranspose take (ONNX allows any number; onnxruntime runs 1 to 3)
CONV_SPATIAL = (1, 2, 3)


def window_pads(op: str, attrs: dict, sizes: Sequence[int], strides: Sequence[int], eff: Sequence[int]) -> list[int]:
    """Explicit pads [D1 begin, ..., Dk begin, D1 end, ..., Dk end] (2-D: top, left, bottom, right) from
    auto_pad (SAME_*, VALID) or the pads attribute, for a sliding window of dilated extent `eff` per
    axis. Shared by convolution and pooling."""
    k = len(sizes)
    if attrs["auto_pad"] in ("SAME_UPPER", "SAME_LOWER"):
        pads = [0] * (2 * k)
        for i, size in enumerate(sizes):
            out = -(-size // strides[i])
            total = max(0, (out - 1) * strides[i] + eff[i] - size)
            small, big = total // 2, total - total // 2
            pads[i], pads[i + k] = (small, big) if attrs["auto_pad"] == "SAME_UPPER" else (big, small)
    elif attrs["auto_pad"] == "VALID":
        pads = [0] * (2 * k)
    else:
        pads = list(attrs["pads"] or [0] * (2 * k))
    if len(pads) != 2 * k or min(pads) < 0:
        raise GraphError(
            f"{op}: pads must be {2 * k} non-negative ints (the begins, then the ends, of {k} spatial axes), got {pads}"
        )
    return pads


def spatial_rank(op: str, x_shape: Sequence[int], w_shape: Sequence[int], spatial: Sequence[int], weight: str) -> int:
    """How many spatial axes an (input, weight) pair has; GraphError unless one of `spatial`, or where
    a kernel dimension is 0 (a window of no taps: kernels would leave outputs unwritten)."""
    k = len(x_shape) - 2
    if k not in spatial or len(w_shape) != len(x_shape):
        ranks = [str(d + 2) for d in spatial]
        ranks = ", ".join(ranks[:-1]) + " or " + ranks[-1] if len(ranks) > 1 else ranks[0]
        raise GraphError(
            f"{op} takes (N, C, D1, ...) input and {weight} weight of one rank, {ranks} here; "
            f"got {x_shape} and {w_shape}"
        )
    if any(isinstance(d, (int, np.integer)) and d < 1 for d in w_shape[2:]):
        raise GraphError(f"{op}: weight {tuple(w_shape)} has a kernel dimension of 0; each must be at least 1")
    return k


def conv_geometry(x_shape: Sequence[int], w_shape: Sequence[int], attrs: dict, spatial: Sequence[int] = (2,)) -> dict:
    """Resolve kernel, strides, dilations and explicit pads; return them and the output size.

    `spatial`: how many spatial axes the caller's kernel computes. Conv passes CONV_SPATIAL; the
    quantized and gradient ops that share this geometry compute 2-D only, hence the default."""
    k = spatial_rank("Conv", x_shape, w_shape, spatial, "(M, C/group, k1, ...)")
    n, c = x_shape[:2]
    o, ci = w_shape[:2]
    kernel = list(w_shape[2:])
    group = attrs["group"]
    if group < 1 or c != ci * group or o % group:
        raise GraphError(f"Conv: input has {c} channels but weight {w_shape} with group={group} needs {ci * group}")
    if list(attrs["kernel_shape"] or kernel) != kernel:
        raise GraphError(f"Conv: kernel_shape {attrs['kernel_shape']} disagrees with the weight {w_shape}")
    strides = list(attrs["strides"] or [1] * k)
    dil = list(attrs["dilations"] or [1] * k)
    if len(strides) != k or len(dil) != k:
        raise GraphError(f"Conv: strides {strides} and dilations {dil} need {k} values each for input {x_shape}")
    if min(strides) < 1 or min(dil) < 1:
        raise GraphError("Conv: strides and dilations must be at least 1")
    eff = [(kk - 1) * d + 1 for kk, d in zip(kernel, dil)]
    sizes = x_shape[2:]
    pads = window_pads("Conv", attrs, sizes, strides, eff)
    out = [(size + pads[i] + pads[i + k] - eff[i]) // strides[i] + 1 for i, size in enumerate(sizes)]
    if min(out) < 1:
        raise GraphError(f"Conv: kernel {eff} does not fit input {'x'.join(map(str, sizes))} with pads {pads}")
    return dict(kernel=kernel, strides=strides, dilations=dil, pads=pads, out=(n, o, *out), group=group)


def pool_geometry(x_shape: Sequence[int], attrs: dict, op: str) -> dict:
    """Resolve kernel, strides, dilations and explicit pads; return them and the output size.

    Any number of spatial axes; pads are [D1 begin, ..., Dk begin, D1 end, ..., Dk end] (2-D: top,
    left, bottom, right). `extra` is how far the last window (ceil_mode) reaches past the end
    padding: those positions are neither input nor padding and never count.
    """
    k = len(x_shape) - 2
    if k < 1:
        raise GraphError(f"{op} takes (N, C, D1, ...) input, at least one spatial axis; got shape {x_shape}")
    kernel = list(attrs["kernel_shape"])
    strides = list(attrs["strides"] or [1] * k)
    dil = list(attrs.get("dilations") or [1] * k)
    if len(kernel) != k or len(strides) != k or len(dil) != k:
        raise GraphError(
            f"{op}: kernel_shape, strides and dilations need {k} values each for input {x_shape}, "
            f"got {kernel}, {strides}, {dil}"
        )
    if min(kernel) < 1 or min(strides) < 1 or min(dil) < 1:
        raise GraphError(
            f"{op}: kernel_shape, strides and dilations must be at least 1, got {kernel}, {strides}, {dil}"
        )
    eff = [(kk - 1) * d + 1 for kk, d in zip(kernel, dil)]
    sizes = tuple(x_shape[2:])
    # the dilated kernel decides SAME pads, as the ONNX spec says (onnxruntime 1.32 uses the undilated one)
    pads = window_pads(op, attrs, sizes, strides, eff)
    if any(max(pads[i], pads[i + k]) >= eff[i] for i in range(k)):
        raise GraphError(f"{op}: pads {pads} must be smaller than the kernel {eff}")
    out, extra = [], []
    for i, size in enumerate(sizes):
        span = size + pads[i] + pads[i + k] - eff[i]
        if span < 0:
            raise GraphError(f"{op}: kernel {eff} does not fit input {'x'.join(map(str, sizes))} with pads {pads}")
        o = (-(-span // strides[i]) if attrs["ceil_mode"] else span // strides[i]) + 1
        if attrs["ceil_mode"] and (o - 1) * strides[i] >= size + pads[i]:
            o -= 1  # the last window must start inside the input or its leading padding
        out.append(o)
        extra.append(max(0, (o - 1) * strides[i] + eff[i] - (size + pads[i] + pads[i + k])))
    return dict(
        kernel=kernel,
        strides=strides,
        dilations=dil,
        pads=pads,
        extra=extra,
        eff=eff,
        out=tuple(x_shape[:2]) + tuple(out),
    )


def conv_transpose_geometry(
    x_shape: Sequence[int], w_shape: Sequence[int], attrs: dict, spatial: Sequence[int] = (2,)
) -> dict:
    """Resolve strides, dilations, pads and the output size, following the ONNX formulas.

    `spatial`: how many spatial axes the caller computes (ConvTranspose: CONV_SPATIAL; the gradient
    rule, 2-D only, takes the default)."""
    k = spatial_rank("ConvTranspose", x_shape, w_shape, spatial, "(C, M/group, k1, ...)")
    n, c = x_shape[:2]
    ci, mg = w_shape[:2]
    kernel, sizes = list(w_shape[2:]), x_shape[2:]
    group = attrs["group"]
    if group < 1 or c != ci or c % group:
        raise GraphError(
            f"ConvTranspose: input has {c} channels but weight {w_shape} with group={group} needs "
            f"{ci} (a multiple of the group)"
        )
    if list(attrs["kernel_shape"] or kernel) != kernel:
        raise GraphError(f"ConvTranspose: kernel_shape {attrs['kernel_shape']} disagrees with the weight {w_shape}")
    strides = list(attrs["strides"] or [1] * k)
    dil = list(attrs["dilations"] or [1] * k)
    out_pad = list(attrs["output_padding"] or [0] * k)
    if len(strides) != k or len(dil) != k or len(out_pad) != k:
        raise GraphError(
            f"ConvTranspose: strides {strides}, dilations {dil} and output_padding {out_pad} "
            f"need {k} values each for input {x_shape}"
        )
    if min(strides) < 1 or min(dil) < 1:
        raise GraphError("ConvTranspose: strides and dilations must be at least 1")
    # PyTorch's rule; onnxruntime is stricter (output_padding < stride)
    if any(not 0 <= p < max(s, d) for p, s, d in zip(out_pad, strides, dil)):
        raise GraphError(
            f"ConvTranspose: output_padding {out_pad} must be non-negative and smaller than the "
            f"stride {strides} or the dilation {dil}"
        )
    eff = [(kk - 1) * d + 1 for kk, d in zip(kernel, dil)]
    full = [s * (i - 1) + e + p for s, i, e, p in zip(strides, sizes, eff, out_pad)]  # before cropping pads
    target = list(attrs["output_shape"])
    if attrs["auto_pad"] in ("SAME_UPPER", "SAME_LOWER") and not target:
        target = [i * s for i, s in zip(sizes, strides)]
    if target:
        if len(target) != k:
            raise GraphError(f"ConvTranspose: output_shape must give the {k} spatial sizes, got {target}")
        pads = [0] * (2 * k)
        for i in range(k):
            total = full[i] - target[i]
            if total < 0:
                raise GraphError(f"ConvTranspose: output_shape {target} is larger than the full output {full}")
            small, big = total // 2, total - total // 2
            # as ONNX: SAME_UPPER puts the odd pad at the end, otherwise at the start
            pads[i], pads[i + k] = (small, big) if attrs["auto_pad"] == "SAME_UPPER" else (big, small)
    elif attrs["auto_pad"] == "VALID":
        pads = [0] * (2 * k)
    else:
        pads = list(attrs["pads"] or [0] * (2 * k))
    if len(pads) != 2 * k or min(pads) < 0:
        raise GraphError(f"ConvTranspose: pads must be {2 * k} non-negative ints, got {pads}")
    out = [f - pads[i] - pads[i + k] for i, f in enumerate(full)]
    if min(out) < 1:
        raise GraphError(f"ConvTranspose: pads {pads} leave nothing of the {'x'.join(map(str, full))} output")
    return dict(
        kernel=kernel, strides=strides, dilations=dil, pads=pads, full=full, group=group, out=(n, mg * group, *out)
    )
