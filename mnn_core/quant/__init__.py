"""Quantization: post-training (calibrated int8) and quantization-aware training.

    from mnn_core import quant
    res = quant.quantize("model.mnn", "calib.npz", method="kl")   # PTQ
    print(res.report())                                          # per-layer error
    mnn_core.format.save_mnn(res.graph, "model.int8.mnn")

    qat_model = quant.prepare_qat(model)      # fake-quant, BN folded; train as usual
    res = quant.convert(qat_model, (1, 1, 28, 28))               # same int8 format

The int8 representation and its rounding rules: docs/QUANT.md.
"""

from .calibrate import METHODS, load_calibration
from .params import activation_params, quantize_weight, weight_scales
from .ptq import QuantResult, calibrate, quantize
from .qat import convert, prepare_qat

__all__ = [
    "METHODS",
    "QuantResult",
    "activation_params",
    "calibrate",
    "convert",
    "load_calibration",
    "prepare_qat",
    "quantize",
    "quantize_weight",
    "weight_scales",
]
