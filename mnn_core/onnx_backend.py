"""Moved to mnn_core.convert.onnx_backend (this path keeps working for one release)."""

import sys

from .convert import onnx_backend as _moved

sys.modules[__name__] = _moved
