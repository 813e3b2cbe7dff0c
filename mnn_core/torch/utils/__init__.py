"""torch.utils: `from mnn_core.torch.utils.data import DataLoader` (data is the only part mnn has)."""

from . import data

__all__ = ["data"]
