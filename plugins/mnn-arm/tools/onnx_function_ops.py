"""ONNX ops that mnn imports by inlining their ONNX function bodies (Attention of opset 23,
GroupNormalization of opset 21) on Arm: `export DIR` (host: needs onnx and onnxruntime) writes each case
as DIR/<case>.mnn with its inputs (<case>.npz) and ONNX Runtime's outputs (<case>.ort.npz), in odd sizes,
masks, causal, grouped-query heads, 3-D inputs, softcap, past key/value, and GroupNormalization of rank
3, 4 and 5. tests/test_onnx_function_ops.py runs them under qemu with backend="arm", fallback=False;
tools/arm_rootfs_test.sh exports them first when the host has onnx and onnxruntime.

    python plugins/mnn-arm/tools/onnx_function_ops.py export /tmp/onnx-ops
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np


def _model(op, inputs, outputs, attrs, opset, consts=()):
    from onnx import TensorProto, helper, numpy_helper

    elem = {np.dtype("float32"): TensorProto.FLOAT, np.dtype("bool"): TensorProto.BOOL}
    vin = [helper.make_tensor_value_info(n, elem[a.dtype], list(a.shape)) for n, a in inputs]
    vout = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outputs]
    names = [n for n, _ in inputs] + [n for n, _ in consts]
    node = helper.make_node(op, names, list(outputs), **attrs)
    graph = helper.make_graph([node], op.lower(), vin, vout, [numpy_helper.from_array(a, n) for n, a in consts])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 10
    return m


def cases(seed: int = 5) -> dict:
    """name -> (ONNX model, feeds)"""
    rng = np.random.default_rng(seed)

    def r(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    out = {}

    def attention(name, q, k, v, attrs=None, mask=None, past=None, outputs=("Y",)):
        inputs = [("Q", q), ("K", k), ("V", v)]
        names = ["Q", "K", "V"]
        if mask is not None:
            inputs.append(("attn_mask", mask))
        if past is not None:
            if mask is None:  # inputs are positional: an empty name where no mask is given
                inputs.append(("", None))
            inputs += [("past_key", past[0]), ("past_value", past[1])]
        feeds = {n: a for n, a in inputs if n}
        from onnx import TensorProto, helper

        elem = {np.dtype("float32"): TensorProto.FLOAT, np.dtype("bool"): TensorProto.BOOL}
        vin = [helper.make_tensor_value_info(n, elem[a.dtype], list(a.shape)) for n, a in inputs if n]
        vout = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outputs]
        node = helper.make_node("Attention", [n for n, _ in inputs], list(outputs), **(attrs or {}))
        graph = helper.make_graph([node], "attention", vin, vout)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
        m.ir_version = 10
        del names
        out[f"attention-{name}"] = (m, feeds)

    attention("4d", r(2, 4, 7, 8), r(2, 4, 9, 8), r(2, 4, 9, 8))
    attention("3d-heads", r(2, 7, 32), r(2, 9, 32), r(2, 9, 24), {"q_num_heads": 4, "kv_num_heads": 4})
    attention("gqa", r(1, 6, 5, 16), r(1, 2, 11, 16), r(1, 2, 11, 16))
    attention("causal-odd", r(2, 3, 7, 13), r(2, 3, 7, 13), r(2, 3, 7, 13), {"is_causal": 1})
    attention("float-mask", r(1, 2, 7, 8), r(1, 2, 9, 8), r(1, 2, 9, 5), mask=r(7, 9))
    attention(
        "bool-mask-scale",
        r(2, 2, 5, 8),
        r(2, 2, 6, 8),
        r(2, 2, 6, 8),
        {"scale": 0.3},
        mask=rng.random((2, 1, 5, 6)) > 0.3,
    )
    attention("softcap", r(1, 3, 9, 8), r(1, 3, 9, 8), r(1, 3, 9, 8), {"softcap": 5.0})
    attention(
        "past-kv",
        r(2, 4, 3, 8),
        r(2, 4, 5, 8),
        r(2, 4, 5, 8),
        past=(r(2, 4, 6, 8), r(2, 4, 6, 8)),
        outputs=("Y", "present_key", "present_value"),
    )

    def group_norm(name, shape, groups, eps=1e-5):
        c = shape[1]
        consts = [("scale", r(c)), ("bias", r(c))]
        m = _model("GroupNormalization", [("X", r(*shape))], ["Y"], {"num_groups": groups, "epsilon": eps}, 21, consts)
        out[f"groupnorm-{name}"] = (m, {"X": r(*shape) * 3 + 1})

    group_norm("4d", (2, 6, 5, 7), 3)
    group_norm("3d", (3, 10, 17), 5, 1e-3)
    group_norm("5d", (1, 8, 3, 5, 7), 2)
    group_norm("per-channel", (2, 12, 9, 9), 12)
    group_norm("one-group", (2, 9, 11, 13), 1)
    return out


def export(out: Path) -> int:
    import onnxruntime as ort

    import mnn_core as mnn
    from mnn_core.convert.onnx_import import import_onnx

    out.mkdir(parents=True, exist_ok=True)
    for name, (model, feeds) in cases().items():
        graph = import_onnx(model)
        mnn.save(graph, out / f"{name}.mnn")
        np.savez(out / f"{name}.npz", **feeds)
        options = ort.SessionOptions()
        options.log_severity_level = 3
        sess = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
        names = [o.name for o in sess.get_outputs()]
        np.savez(out / f"{name}.ort.npz", **dict(zip(names, sess.run(names, feeds))))
        print(f"{name}: {len(graph.nodes)} nodes ({', '.join(sorted({n.op for n in graph.nodes}))})")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "export":
        sys.exit(__doc__)
    sys.exit(export(Path(sys.argv[2])))
