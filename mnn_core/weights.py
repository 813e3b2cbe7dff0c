"""Moved to mnn_core.runtime.weights (this path keeps working for one release)."""

import sys

from .runtime import weights as _moved

sys.modules[__name__] = _moved
