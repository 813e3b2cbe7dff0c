"""Moved to mnn_core.runtime.session (this path keeps working for one release)."""

import sys

from .runtime import session as _moved

sys.modules[__name__] = _moved
