"""Spectral ops with ONNX semantics: DFT and STFT. Complex values are a last axis of
size 2 (real, imaginary); real signals have a last axis of size 1."""

from __future__ import annotations

import numpy as np

from ..errors import GraphError
from ..graph.ir import TensorInfo
from ._util import normalize_axis, rand
from .schema import Attr, OpSchema, Sample, register


def _complex(x: np.ndarray) -> np.ndarray:
    # in the input's precision: numpy's FFT then rounds as other float32 implementations do
    x = x.astype(np.float32) if x.dtype == np.float16 else x
    return x[..., 0] if x.shape[-1] == 1 else x[..., 0] + 1j * x[..., 1]


def _as_pairs(z: np.ndarray) -> np.ndarray:
    return np.stack([np.real(z), np.imag(z)], axis=-1)


def _dft_geometry(shape, attrs):
    if len(shape) < 2 or shape[-1] not in (1, 2):
        raise GraphError(f"DFT: input must end in a real (1) or complex (2) axis, got {shape}")
    axis = normalize_axis(attrs["axis"], len(shape), "DFT")
    if axis == len(shape) - 1:
        raise GraphError("DFT: the transformed axis cannot be the last (real/imaginary) axis")
    n = attrs["dft_length"] or (2 * (shape[axis] - 1) if attrs["inverse"] and attrs["onesided"] else shape[axis])
    return axis, n


def _dft_infer(ins, attrs):
    shape = list(ins[0].shape)
    axis, n = _dft_geometry(shape, attrs)
    if attrs["inverse"] and attrs["onesided"]:
        shape[axis], shape[-1] = n, 1
    else:
        shape[axis] = n // 2 + 1 if attrs["onesided"] else n
        shape[-1] = 2
    return [TensorInfo(tuple(shape), ins[0].dtype)]


def _dft(ins, attrs):
    x = ins[0]
    axis, n = _dft_geometry(x.shape, attrs)
    z = _complex(x)
    if attrs["inverse"]:
        if attrs["onesided"]:
            return [np.fft.irfft(z, n=n, axis=axis)[..., None].astype(x.dtype)]
        return [_as_pairs(np.fft.ifft(z, n=n, axis=axis)).astype(x.dtype)]
    y = np.fft.fft(z, n=n, axis=axis)
    if attrs["onesided"]:
        y = np.take(y, range(n // 2 + 1), axis=axis)
    return [_as_pairs(y).astype(x.dtype)]


register(
    OpSchema(
        "DFT",
        infer=_dft_infer,
        reference=_dft,
        value_inputs={1: "dft_length", 2: "axis"},
        attrs={
            "axis": Attr("int", 1),
            "inverse": Attr("int", 0, (0, 1)),
            "onesided": Attr("int", 0, (0, 1)),
            "dft_length": Attr("int", 0, doc="ONNX's second input; 0: the axis's size"),
        },
        doc="Discrete Fourier transform (or its inverse) along one axis.",
        samples=lambda rng: iter(
            [
                Sample([rand(rng, 2, 8, 1)], {"axis": 1}),
                Sample([rand(rng, 3, 5, 2)], {"axis": 1, "inverse": 1}),
                Sample([rand(rng, 2, 10, 1)], {"axis": 1, "onesided": 1, "dft_length": 12}),
                Sample([rand(rng, 2, 5, 2)], {"axis": -2, "inverse": 1, "onesided": 1}),
            ]
        ),
    )
)


def _stft_geometry(ins, attrs):
    x = ins[0]
    window = ins[1] if len(ins) > 1 else None
    length = attrs["frame_length"] or (window.shape[0] if window is not None else x.shape[-2])
    if len(x.shape) != 3 or x.shape[-1] not in (1, 2) or length > x.shape[1] or attrs["frame_step"] < 1:
        raise GraphError(f"STFT: signal {x.shape} (want [batch, length, 1|2]) does not fit frames of {length}")
    frames = 1 + (x.shape[1] - length) // attrs["frame_step"]
    bins = length // 2 + 1 if attrs["onesided"] else length
    return length, frames, bins


def _stft_infer(ins, attrs):
    _, frames, bins = _stft_geometry(ins, attrs)
    return [TensorInfo((ins[0].shape[0], frames, bins, 2), ins[0].dtype)]


def _stft(ins, attrs):
    x = ins[0]
    length, frames, bins = _stft_geometry(ins, attrs)
    window = ins[1].astype(np.float64) if len(ins) > 1 and ins[1] is not None else np.ones(length)
    z = _complex(x)
    step = attrs["frame_step"]
    framed = np.stack([z[:, f * step : f * step + length] * window for f in range(frames)], axis=1)
    y = np.fft.fft(framed, n=length, axis=-1)[..., :bins]
    return [_as_pairs(y).astype(x.dtype)]


register(
    OpSchema(
        "STFT",
        infer=_stft_infer,
        reference=_stft,
        n_inputs=(1, 2),
        value_inputs={2: "frame_step", 3: "frame_length"},  # (after the window, which ONNX has third)
        attrs={
            "frame_step": Attr("int", doc="ONNX's second input"),
            "frame_length": Attr("int", 0),
            "onesided": Attr("int", 1, (0, 1)),
        },
        doc="Short-time Fourier transform of windowed frames (the window is the optional second input).",
        samples=lambda rng: iter(
            [
                Sample([rand(rng, 1, 32, 1), np.hanning(8).astype(np.float32)], {"frame_step": 4}),
                Sample([rand(rng, 2, 20, 2)], {"frame_step": 3, "frame_length": 6, "onesided": 0}),
            ]
        ),
    )
)
