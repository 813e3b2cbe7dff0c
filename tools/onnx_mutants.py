"""The mutants of tools/fuzz_onnx.py: its seed models, the folder each worker reads them from, and
the structured and byte-level damage done to a seed."""

from __future__ import annotations

import os
import random
from pathlib import Path

SECRET = b"MNN-FUZZ-SECRET:" * 64  # the file outside the folder; "SECRET" shows up in any 21 bytes of it
LOCATIONS = [
    "data.bin",
    "./data.bin",
    "inside_link",
    "sub/inner.bin",
    "link_out",
    "abs_link",
    "dir_link/secret.bin",
    "fifo",
    "zero_link",
    "sub",
    "missing.bin",
    "",
    "../outside/secret.bin",
    "/etc/passwd",
    "sub/../../outside/secret.bin",
    "..\\outside\\secret.bin",
    "C:/x",
    "data.bin\0x",
    "a" * 3000,
    ".",
]
NUMBERS = ["0", "-1", "abc", "", "7", str(2**63), "99999999999", " 5", "1e3", "64", "4096", "4097"]
HOSTILE_INTS = [-1, -2, 0, 1, 2, 3, 7, 2**31 - 1, 2**31, 2**32, 2**40, 2**62, -(2**63), 2**63 - 1]


# -- seeds -------------------------------------------------------------------------------------


def build_seeds(folder: Path) -> dict[str, bytes]:
    """The seed models (serialized); their external data goes to folder/data.bin."""
    import warnings

    import numpy as np
    import onnx
    import torch
    from onnx import TensorProto, helper, numpy_helper

    seeds = {}

    class ConvNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.body = torch.nn.Sequential(
                torch.nn.Conv2d(3, 8, 3, padding=1),
                torch.nn.BatchNorm2d(8),
                torch.nn.ReLU(),
                torch.nn.MaxPool2d(2),
                torch.nn.Conv2d(8, 8, 3, padding=1, groups=2),
                torch.nn.AdaptiveAvgPool2d(1),
                torch.nn.Flatten(),
                torch.nn.Linear(8, 4),
                torch.nn.Softmax(-1),
            )

        def forward(self, x):
            return self.body(x)

    class Lstm(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = torch.nn.LSTM(6, 8, batch_first=True)
            self.fc = torch.nn.Linear(8, 3)

        def forward(self, x):
            return self.fc(self.lstm(x)[0][:, -1])

    torch.manual_seed(0)
    for name, module, x, axes in [
        ("convnet", ConvNet(), torch.randn(1, 3, 16, 16), {"x": {0: "N"}}),
        ("lstm", Lstm(), torch.randn(2, 5, 6), None),
    ]:
        path = folder / f"{name}.onnx"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                module.eval(),
                (x,),
                str(path),
                dynamo=False,
                input_names=["x"],
                output_names=["y"],
                dynamic_axes=axes,
                opset_version=17,
            )
        seeds[name] = path.read_bytes()

    rng = np.random.default_rng(0)
    f32 = lambda *shape: rng.standard_normal(shape).astype(np.float32)  # noqa: E731
    vi = helper.make_tensor_value_info
    opset = [helper.make_opsetid("", 17)]

    # If and Loop, with initializers and Constant nodes inside their bodies
    then_g = helper.make_graph(
        [
            helper.make_node("Constant", [], ["c1"], value=numpy_helper.from_array(f32(2, 3))),
            helper.make_node("Add", ["x", "tw"], ["t0"]),
            helper.make_node("Mul", ["t0", "c1"], ["t"]),
        ],
        "then",
        [],
        [vi("t", TensorProto.FLOAT, [2, 3])],
        [numpy_helper.from_array(f32(2, 3), "tw")],
    )
    else_g = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["e"])], "else", [], [vi("e", TensorProto.FLOAT, [2, 3])]
    )
    loop_g = helper.make_graph(
        [
            helper.make_node("Constant", [], ["step"], value=numpy_helper.from_array(np.float32(0.5).reshape(()))),
            helper.make_node("Add", ["acc", "lw"], ["a0"]),
            helper.make_node("Mul", ["a0", "step"], ["acc_out"]),
            helper.make_node("Identity", ["cond"], ["cond_out"]),
        ],
        "body",
        [vi("i", TensorProto.INT64, []), vi("cond", TensorProto.BOOL, []), vi("acc", TensorProto.FLOAT, [2, 3])],
        [vi("cond_out", TensorProto.BOOL, []), vi("acc_out", TensorProto.FLOAT, [2, 3])],
        [numpy_helper.from_array(f32(2, 3), "lw")],
    )
    graph = helper.make_graph(
        [
            helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
            helper.make_node("Greater", ["s", "zero"], ["c"]),
            helper.make_node("If", ["c"], ["b"], then_branch=then_g, else_branch=else_g),
            helper.make_node("Loop", ["trip", "true", "b"], ["y"], body=loop_g),
        ],
        "control",
        [vi("x", TensorProto.FLOAT, [2, 3])],
        [vi("y", TensorProto.FLOAT, [2, 3])],
        [
            numpy_helper.from_array(np.float32(0), "zero"),
            numpy_helper.from_array(np.int64(3), "trip"),
            numpy_helper.from_array(np.bool_(True), "true"),
        ],
    )
    seeds["control"] = helper.make_model(graph, opset_imports=opset).SerializeToString()

    # sparse initializers (linear and coordinate indices) and external data everywhere
    blobs, data = {}, bytearray()

    def external(array, name):
        t = numpy_helper.from_array(array, name)
        raw = t.raw_data
        t.ClearField("raw_data")
        t.data_location = TensorProto.EXTERNAL
        for key, value in (("location", "data.bin"), ("offset", str(len(data))), ("length", str(len(raw)))):
            t.external_data.add(key=key, value=value)
        data.extend(raw)
        data.extend(b"\0" * (-len(data) % 16))
        blobs[name] = array
        return t

    w_index = numpy_helper.from_array(np.array([0, 7, 8, 15, 23], np.int64), "w_idx")
    w_sparse = helper.make_sparse_tensor(numpy_helper.from_array(f32(5), "w"), w_index, [4, 6])
    v_sparse = helper.make_sparse_tensor(
        numpy_helper.from_array(f32(3), "v"),
        numpy_helper.from_array(np.array([[0, 1], [1, 5], [1, 2]], np.int64), "v_idx"),
        [2, 6],
    )
    ext_then = helper.make_graph(
        [helper.make_node("Add", ["m", "bw"], ["t"])],
        "then",
        [],
        [vi("t", TensorProto.FLOAT, [2, 6])],
        [external(f32(2, 6), "bw")],
    )
    ext_else = helper.make_graph(
        [helper.make_node("Constant", [], ["e"], value=external(f32(2, 6), "ec"))],
        "else",
        [],
        [vi("e", TensorProto.FLOAT, [2, 6])],
    )
    graph = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "w"], ["m0"]),
            helper.make_node("Add", ["m0", "v"], ["m1"]),
            helper.make_node("Constant", [], ["k"], value=external(f32(2, 6), "k_value")),
            helper.make_node("Add", ["m1", "k"], ["m2"]),
            helper.make_node("Add", ["m2", "b"], ["m"]),
            helper.make_node("If", ["flag"], ["y"], then_branch=ext_then, else_branch=ext_else),
        ],
        "sparse_external",
        [vi("x", TensorProto.FLOAT, [2, 4]), vi("flag", TensorProto.BOOL, [])],
        [vi("y", TensorProto.FLOAT, [2, 6])],
        [external(f32(6), "b")],
        sparse_initializer=[w_sparse, v_sparse],
    )
    seeds["sparse_external"] = helper.make_model(graph, opset_imports=opset).SerializeToString()
    (folder / "data.bin").write_bytes(bytes(data))

    # int8 QDQ around a convolution (the importer rewrites it into QLinearConv first)
    q = lambda v, name, dt=np.int8: numpy_helper.from_array(np.asarray(v, dt), name)  # noqa: E731
    graph = helper.make_graph(
        [
            helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
            helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
            helper.make_node("DequantizeLinear", ["wq", "ws", "wz"], ["wd"]),
            helper.make_node("Conv", ["xd", "wd"], ["c"], pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["c"], ["r"]),
            helper.make_node("QuantizeLinear", ["r", "ys", "yz"], ["yq"]),
            helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["y"]),
        ],
        "qdq",
        [vi("x", TensorProto.FLOAT, [1, 2, 6, 6])],
        [vi("y", TensorProto.FLOAT, [1, 4, 6, 6])],
        [
            q(rng.integers(-100, 100, (4, 2, 3, 3)), "wq"),
            q(0, "wz"),
            q(0, "xz"),
            q(0, "yz"),
            numpy_helper.from_array(np.float32(0.02), "xs"),
            numpy_helper.from_array(np.float32(0.01), "ws"),
            numpy_helper.from_array(np.float32(0.05), "ys"),
        ],
    )
    seeds["qdq"] = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString()
    onnx.ModelProto.FromString(seeds["qdq"])
    return seeds


def make_folder(folder: Path, data: bytes) -> None:
    """A worker's folder: the real external data, a symlink inside, and hostile neighbours
    (symlinks out of the folder to a secret file, /etc/passwd and /dev/zero, a FIFO, a folder)."""
    outside = folder.parent / "outside"
    outside.mkdir(exist_ok=True)
    (outside / "secret.bin").write_bytes(SECRET)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "data.bin").write_bytes(data)
    (folder / "sub").mkdir(exist_ok=True)
    (folder / "sub" / "inner.bin").write_bytes(data)
    for name, target in [
        ("inside_link", "data.bin"),
        ("link_out", "../outside/secret.bin"),
        ("abs_link", "/etc/passwd"),
        ("dir_link", "../outside"),
        ("zero_link", "/dev/zero"),
    ]:
        if not os.path.lexists(folder / name):
            os.symlink(target, folder / name)
    if not os.path.exists(folder / "fifo"):
        os.mkfifo(folder / "fifo")


# -- mutations -----------------------------------------------------------------------------------


def _bodies(graph):
    from onnx import AttributeProto

    out, stack = [], [graph]
    while stack:
        g = stack.pop()
        out.append(g)
        for node in g.node:
            for a in node.attribute:
                if a.type == AttributeProto.GRAPH:
                    stack.append(a.g)
                stack.extend(a.graphs)
    return out


def _tensors(model):
    from mnn_core.convert.onnx_tensors import all_tensors

    return [t for _, t in all_tensors(model)]


def _mutate_tensor(rng: random.Random, t) -> None:
    from onnx import TensorProto

    kind = rng.randrange(6)
    if kind == 0 and t.dims:  # one hostile dimension
        t.dims[rng.randrange(len(t.dims))] = rng.choice(HOSTILE_INTS)
    elif kind == 1:  # a dimension more or less
        if t.dims and rng.random() < 0.5:
            del t.dims[rng.randrange(len(t.dims))]
        else:
            t.dims.append(rng.choice([1, 2, 0, 2**33]))
    elif kind == 2:
        t.data_type = rng.randrange(0, 30)
    elif kind == 3:  # the bytes do not match the dims
        raw = t.raw_data
        cut = raw and rng.random() < 0.6
        t.raw_data = raw[: rng.randrange(len(raw) + 1)] if cut else raw + bytes(rng.randrange(1, 9))
    else:  # external data, anywhere
        raw_len = len(t.raw_data)
        t.ClearField("raw_data")
        t.data_location = TensorProto.EXTERNAL
        del t.external_data[:]
        t.external_data.add(key="location", value=rng.choice(LOCATIONS))
        if rng.random() < 0.7:
            t.external_data.add(key="offset", value=rng.choice(NUMBERS + ["0"] * 4))
        if rng.random() < 0.7:
            t.external_data.add(key="length", value=rng.choice(NUMBERS + [str(raw_len)] * 4))


def _mutate_sparse(rng: random.Random, s) -> None:
    import numpy as np
    from onnx import numpy_helper

    kind = rng.randrange(4)
    if kind == 0 and s.dims:
        s.dims[rng.randrange(len(s.dims))] = rng.choice(HOSTILE_INTS + [1 << 20, 1 << 24])
    elif kind == 1 and not s.indices.external_data:
        try:
            idx = numpy_helper.to_array(s.indices).copy()
        except Exception:  # noqa: BLE001  an earlier mutation damaged them already
            return
        if idx.size:
            idx.reshape(-1)[rng.randrange(idx.size)] = rng.choice(HOSTILE_INTS)
        s.indices.CopyFrom(numpy_helper.from_array(idx.astype(np.int64), s.indices.name))
    elif kind == 2:  # indices of another shape or type
        shape = rng.choice([(2, 2, 2), (7,), (5, 3), (0,), (1, 1)])
        s.indices.CopyFrom(
            numpy_helper.from_array(np.ones(shape, rng.choice([np.int64, np.int32, np.float32])), s.indices.name)
        )
    else:
        _mutate_tensor(rng, rng.choice([s.values, s.indices]))


def _mutate_node(rng: random.Random, graph, op_types: list[str]) -> None:
    from onnx import AttributeProto

    if not graph.node:
        return
    node = rng.choice(graph.node)
    kind = rng.randrange(5)
    if kind == 0 and node.attribute:
        a = rng.choice(node.attribute)
        if a.type == AttributeProto.INT:
            a.i = rng.choice(HOSTILE_INTS)
        elif a.type == AttributeProto.INTS and a.ints:
            a.ints[rng.randrange(len(a.ints))] = rng.choice(HOSTILE_INTS)
        elif a.type == AttributeProto.FLOAT:
            a.f = rng.choice([float("nan"), float("inf"), -1e30, 0.0])
        elif a.type == AttributeProto.STRING:
            a.s = rng.choice([b"", b"\xff\xfe", b"nonsense", b"x" * 1000])
        elif a.type == AttributeProto.TENSOR:
            _mutate_tensor(rng, a.t)
        else:
            a.type = rng.randrange(0, 15)  # a type that does not match the field set
    elif kind == 1:
        node.op_type = rng.choice(op_types)
    elif kind == 2:
        if node.input and rng.random() < 0.5:
            del node.input[rng.randrange(len(node.input))]
        else:
            node.input.append(rng.choice(["", "x", "nonexistent", node.output[0] if node.output else "y"]))
    elif kind == 3 and node.input:
        other = node.output[0] if node.output else "x"
        node.input[rng.randrange(len(node.input))] = rng.choice(["", "nonexistent", other])
    else:
        node.domain = rng.choice(["", "ai.onnx", "com.microsoft", "ai.onnx.ml", "nonsense"])


def _mutate_io(rng: random.Random, graph) -> None:
    values = list(graph.input) + list(graph.output)
    if not values:
        return
    v = rng.choice(values)
    tt = v.type.tensor_type
    if rng.random() < 0.3:
        tt.elem_type = rng.randrange(0, 30)
    elif tt.shape.dim:
        d = tt.shape.dim[rng.randrange(len(tt.shape.dim))]
        if rng.random() < 0.7:
            d.dim_value = rng.choice(HOSTILE_INTS)
        else:
            d.dim_param = rng.choice(["N", "", "x" * 300])
    else:
        tt.shape.dim.add().dim_value = rng.choice(HOSTILE_INTS)


def mutate(rng: random.Random, seed: bytes, op_types: list[str]) -> bytes:
    """One mutant of a seed: structured damage, byte damage, or both."""
    import onnx

    data = seed
    if rng.random() < 0.75:
        model = onnx.ModelProto.FromString(seed)
        for _ in range(rng.choice([1, 1, 1, 2, 3])):
            kind = rng.randrange(7)
            bodies = _bodies(model.graph)
            if kind <= 1:
                tensors = _tensors(model)
                if tensors:
                    _mutate_tensor(rng, rng.choice(tensors))
            elif kind == 2:
                sparse = [s for g in bodies for s in g.sparse_initializer]
                if sparse:
                    _mutate_sparse(rng, rng.choice(sparse))
                else:
                    _mutate_node(rng, rng.choice(bodies), op_types)
            elif kind <= 4:
                _mutate_node(rng, rng.choice(bodies), op_types)
            elif kind == 5:
                _mutate_io(rng, rng.choice(bodies))
            else:
                opset = model.opset_import[0] if model.opset_import else model.opset_import.add()
                opset.version = rng.choice([0, 1, 6, 9, 11, 13, 18, 21, 99, -1])
        data = model.SerializeToString()
        if rng.random() < 0.7:
            return data
    out = bytearray(data)
    kind = rng.randrange(5)
    if kind == 0:
        return bytes(out[: rng.randrange(len(out))])
    if kind == 1:
        for _ in range(rng.randint(1, 8)):
            at = rng.randrange(len(out))
            out[at] ^= 1 << rng.randrange(8)
    elif kind == 2:
        for _ in range(rng.randint(1, 8)):
            out[rng.randrange(len(out))] = rng.choice([0, 0xFF, 0x7F, 0x80, rng.randrange(256)])
    elif kind == 3:
        at = rng.randrange(len(out) + 1)
        out[at:at] = rng.choice(
            [
                bytes(rng.randrange(256) for _ in range(rng.randint(1, 16))),
                b"\xff" * 10,
                b"\x08\xff\xff\xff\xff\xff\xff\xff\xff\x7f",
            ]
        )
    else:  # a chunk repeated (repeated fields, duplicated nodes)
        at = rng.randrange(len(out))
        n = rng.randint(1, 64)
        out[at:at] = out[at : at + n]
    return bytes(out)
