"""Model file types the core opens: .mnn always, .onnx when onnx is installed."""

from __future__ import annotations

from ..backend.hookspecs import hookimpl


def _load_mnn(path, **options):
    from ..convert.mnn_official import is_official_mnn, load_official_mnn
    from ..format import load_mnn

    with open(path, "rb") as f:  # Alibaba MNN's files share the suffix; mnn's own start with b"MNNMODEL"
        head = f.read(4096)
    if is_official_mnn(head):
        return load_official_mnn(path)
    return load_mnn(path, **options)


def _load_onnx(path, **options):
    try:
        from ..convert.onnx_import import import_onnx
    except ImportError as exc:
        from ..errors import MnnError

        raise MnnError(f"opening {path} needs the ONNX importer: pip install 'mnn-core[onnx]' ({exc})") from None
    return import_onnx(path, **options)


@hookimpl
def mnn_register_loaders(register):
    register(".mnn", _load_mnn)
    register(".onnx", _load_onnx)
