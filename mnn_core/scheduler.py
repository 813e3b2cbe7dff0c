"""Moved to mnn_core.runtime.scheduler (this path keeps working for one release)."""

import sys

from .runtime import scheduler as _moved

sys.modules[__name__] = _moved
