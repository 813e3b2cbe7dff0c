"""Moved to mnn_core.backend.plugins (this path keeps working for one release)."""

import sys

from .backend import plugins as _moved

sys.modules[__name__] = _moved
