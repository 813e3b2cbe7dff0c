"""Moved to mnn_core.runtime.loader (this path keeps working for one release)."""

import sys

from .runtime import loader as _moved

sys.modules[__name__] = _moved
