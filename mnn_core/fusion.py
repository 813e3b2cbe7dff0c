"""Moved to mnn_core.runtime.fusion (this path keeps working for one release)."""

import sys

from .runtime import fusion as _moved

sys.modules[__name__] = _moved
