"""Moved to mnn_core.backend.status, the table behind `mnnx backends` (this path keeps working for one release)."""

import sys

from .backend import status as _moved

sys.modules[__name__] = _moved
