"""Data movement on x86 (_movement.pyx, csrc/movement/): copies, selections and conversions of
elements of any dtype."""

from __future__ import annotations

from mnn_core.graph.ir import DTYPES

from . import _movement
from ._common import kernel


@kernel("Identity", dtypes=DTYPES, inplace=True, efficiency=0.5)
def prepare_identity(node, ins, outs, constants, ctx, isa):
    return _movement.copy(isa, ctx.threads, "x86.Identity")
