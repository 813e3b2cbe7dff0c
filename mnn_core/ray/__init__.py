"""mnn on Ray: batch inference (Ray Data) and `mnn batch`.

    pip install "mnn-core[ray]"

    import ray, mnn_core.ray as mray
    ds = ray.data.read_parquet("images.parquet")
    out = mray.predict(ds, "model.mnn", backend="x86", threads=1, workers=2)   # Ray Data (batch.py)
    serve.run(mray.serve_app("model.mnn", max_batch_size=32))                  # Ray Serve (serve.py)
    mray.DataParallel(make_model, make_optimizer, loss, workers=2)             # training (train.py)

The model travels once through Ray's object store (`ship`), so no worker reads a shared path for it;
each actor opens one Session.
Nothing in mnn_core imports this package: Ray is an optional extra.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import MnnError

try:
    import ray as _ray  # noqa: F401
except ImportError as exc:  # one clear line instead of a traceback from deep inside an import
    raise MnnError(f"mnn_core.ray needs Ray: pip install 'mnn-core[ray]' ({exc})") from None

if TYPE_CHECKING:
    from .batch import Predictor, predict
    from .cluster import LocalCluster
    from .model import ModelRef, ship
    from .resources import actor_resources
    from .serve import MnnModel, serve_app
    from .train import DataParallel

_WHERE = {
    "Predictor": ".batch",
    "predict": ".batch",
    "LocalCluster": ".cluster",
    "ModelRef": ".model",
    "ship": ".model",
    "actor_resources": ".resources",
    "MnnModel": ".serve",
    "serve_app": ".serve",
    "DataParallel": ".train",
}


def __getattr__(name: str):
    """Each part loads on first use: Serve and Ray Data are heavy imports a trainer does not need."""
    import importlib

    if name in _WHERE:
        value = getattr(importlib.import_module(_WHERE[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'mnn_core.ray' has no attribute {name!r}")


__all__ = [
    "DataParallel",
    "LocalCluster",
    "MnnModel",
    "ModelRef",
    "Predictor",
    "actor_resources",
    "predict",
    "serve_app",
    "ship",
]
