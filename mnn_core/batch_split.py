"""Moved to mnn_core.runtime.batch_split (this path keeps working for one release)."""

import sys

from .runtime import batch_split as _moved

sys.modules[__name__] = _moved
