"""Moved to mnn_core.backend.hookspecs (this path keeps working for one release)."""

import sys

from .backend import hookspecs as _moved

sys.modules[__name__] = _moved
