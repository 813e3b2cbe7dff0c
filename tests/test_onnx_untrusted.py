"""ONNX files as untrusted input: external data never leaves the model's folder, wherever the
reference sits, and sparse or dense tensors never allocate past the bytes that back them.
(The mutation fuzz of the importer is tests/test_onnx_fuzz.py.)"""

from __future__ import annotations

import os

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import mnn_core as mnn  # noqa: E402
from mnn_core.convert import onnx_tensors  # noqa: E402
from mnn_core.testing.deadline import fail_after  # noqa: E402

SECRET = np.arange(6, dtype=np.float32) + 1000.0
vi = helper.make_tensor_value_info


def external(name: str, location: str, offset: int = 0, length: int | None = 24, dims=(2, 3)) -> TensorProto:
    t = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=list(dims), data_location=TensorProto.EXTERNAL)
    t.external_data.add(key="location", value=location)
    t.external_data.add(key="offset", value=str(offset))
    if length is not None:
        t.external_data.add(key="length", value=str(length))
    return t


def model_with(where: str, tensor: TensorProto) -> onnx.ModelProto:
    """y = x + c, where c is `tensor` at one of the places a tensor can sit in a model."""
    x, y = vi("x", TensorProto.FLOAT, [2, 3]), vi("y", TensorProto.FLOAT, [2, 3])
    inits, sparse = [], []
    if where == "initializer":
        tensor.name = "c"
        inits, nodes = [tensor], [helper.make_node("Add", ["x", "c"], ["y"])]
    elif where == "constant":
        nodes = [helper.make_node("Constant", [], ["c"], value=tensor), helper.make_node("Add", ["x", "c"], ["y"])]
    elif where in ("if_initializer", "if_constant"):
        if where == "if_initializer":
            tensor.name = "c"
            branch = helper.make_graph(
                [helper.make_node("Add", ["x", "c"], ["t"])], "then", [], [vi("t", TensorProto.FLOAT, [2, 3])], [tensor]
            )
        else:
            branch = helper.make_graph(
                [helper.make_node("Constant", [], ["c"], value=tensor), helper.make_node("Add", ["x", "c"], ["t"])],
                "then",
                [],
                [vi("t", TensorProto.FLOAT, [2, 3])],
            )
        other = helper.make_graph(
            [helper.make_node("Neg", ["x"], ["e"])], "else", [], [vi("e", TensorProto.FLOAT, [2, 3])]
        )
        inits = [numpy_helper.from_array(np.bool_(True), "flag")]
        nodes = [helper.make_node("If", ["flag"], ["y"], then_branch=branch, else_branch=other)]
    elif where == "loop_constant":
        body = helper.make_graph(
            [
                helper.make_node("Constant", [], ["c"], value=tensor),
                helper.make_node("Add", ["acc", "c"], ["acc_out"]),
                helper.make_node("Identity", ["cond"], ["cond_out"]),
            ],
            "body",
            [vi("i", TensorProto.INT64, []), vi("cond", TensorProto.BOOL, []), vi("acc", TensorProto.FLOAT, [2, 3])],
            [vi("cond_out", TensorProto.BOOL, []), vi("acc_out", TensorProto.FLOAT, [2, 3])],
        )
        inits = [numpy_helper.from_array(np.int64(1), "trip"), numpy_helper.from_array(np.bool_(True), "go")]
        nodes = [helper.make_node("Loop", ["trip", "go", "x"], ["y"], body=body)]
    elif where == "sparse_values":
        tensor.name, tensor.dims[:] = "c", [6]
        index = numpy_helper.from_array(np.arange(6, dtype=np.int64), "c_idx")
        sparse = [helper.make_sparse_tensor(tensor, index, [2, 3])]
        nodes = [helper.make_node("Add", ["x", "c"], ["y"])]
    else:
        raise AssertionError(where)
    graph = helper.make_graph(nodes, "m", [x], [y], inits, sparse_initializer=sparse)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


WHERE = ["initializer", "constant", "if_initializer", "if_constant", "loop_constant", "sparse_values"]


@pytest.fixture
def layout(tmp_path):
    """tmp/model/ (the model's folder, with its data and hostile neighbours) and tmp/outside/secret.bin."""
    folder, outside = tmp_path / "model", tmp_path / "outside"
    folder.mkdir()
    outside.mkdir()
    (outside / "secret.bin").write_bytes(SECRET.tobytes())
    (folder / "data.bin").write_bytes(np.arange(6, dtype=np.float32).tobytes())
    (folder / "sub").mkdir()
    (folder / "sub" / "data.bin").write_bytes(np.arange(6, dtype=np.float32).tobytes())
    os.symlink("data.bin", folder / "inside_link")
    os.symlink("../outside/secret.bin", folder / "link_out")
    os.symlink(str(outside / "secret.bin"), folder / "abs_link")
    os.symlink("../outside", folder / "dir_link")
    os.symlink("/dev/zero", folder / "zero_link")
    os.mkfifo(folder / "fifo")
    return folder


def save(folder, proto, name="m.onnx"):
    path = folder / name
    path.write_bytes(proto.SerializeToString())
    return path


@pytest.fixture
def alarm():
    """A test that would block (a FIFO opened for reading) fails after 20 s instead of hanging."""
    with fail_after(20, "blocked: the importer waited on a FIFO or a device"):
        yield


@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize("location", ["data.bin", "./data.bin", "sub/data.bin", "inside_link"])
def test_external_data_inside_the_folder_loads_from_it_wherever_it_sits(layout, where, location, monkeypatch):
    monkeypatch.chdir(layout.parent / "outside")  # never read relative to the working directory
    graph = mnn.load(save(layout, model_with(where, external("c", location))))
    x = np.ones((2, 3), np.float32)
    y = mnn.Session(graph, backend="reference").run({"x": x})["y"]
    np.testing.assert_array_equal(y, x + np.arange(6, dtype=np.float32).reshape(2, 3))


@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize(
    "location, why",
    [
        ("../outside/secret.bin", "'..'"),
        ("sub/../../outside/secret.bin", "'..'"),
        ("ABSOLUTE", "absolute"),
        ("/etc/passwd", "absolute"),
        ("link_out", "outside"),
        ("abs_link", "outside"),
        ("dir_link/secret.bin", "outside"),
        ("zero_link", "outside"),
        ("fifo", "not a regular file"),
        ("sub", "not a regular file"),
        ("missing.bin", "cannot be read"),
        ("", "empty"),
    ],
)
def test_external_data_escaping_the_folder_is_refused(layout, where, location, why, monkeypatch, alarm):
    if location == "ABSOLUTE":
        location = str(layout.parent / "outside" / "secret.bin")
    monkeypatch.chdir(layout.parent / "outside")  # secret.bin is right here: a relative read would find it
    path = save(layout, model_with(where, external("c", location)))
    with pytest.raises(mnn.MnnError, match=why) as info:
        mnn.load(path)
    message = str(info.value)  # names the file, the tensor and the reference
    assert "m.onnx" in message and "'c'" in message and repr(location) in message, message


@pytest.mark.parametrize(
    "offset, length, why",
    [
        (0, 25, "past its end"),
        (20, 8, "past its end"),
        (25, None, "less than its offset"),
        ("-1", 24, "non-negative integer"),
        ("abc", 24, "non-negative integer"),
        (0, "1e3", "non-negative integer"),
    ],
)
def test_external_data_offsets_stay_inside_the_file(layout, offset, length, why):
    t = external("c", "data.bin", length=None)
    del t.external_data[1:]
    t.external_data.add(key="offset", value=str(offset))
    if length is not None:
        t.external_data.add(key="length", value=str(length))
    with pytest.raises(mnn.MnnError, match=why):
        mnn.load(save(layout, model_with("initializer", t)))


def test_external_data_of_the_wrong_size_is_an_error(layout):
    with pytest.raises(mnn.MnnError, match="cannot be read"):
        mnn.load(save(layout, model_with("initializer", external("c", "data.bin", length=20))))


def test_every_reference_is_checked_before_any_is_read(layout, monkeypatch):
    reads = []
    monkeypatch.setattr(onnx_tensors, "_pread_exactly", lambda *a: reads.append(a) or b"")
    proto = model_with("initializer", external("c", "data.bin"))
    proto.graph.node.append(helper.make_node("Constant", [], ["unused"], value=external("k", "link_out")))
    with pytest.raises(mnn.MnnError, match="outside"):
        mnn.load(save(layout, proto))
    assert reads == []


def test_external_data_of_a_model_given_as_bytes_needs_its_folder(layout):
    proto = model_with("constant", external("c", "data.bin"))
    with pytest.raises(mnn.MnnError, match="base_dir"):
        mnn.convert.import_onnx(proto.SerializeToString())
    graph = mnn.convert.import_onnx(proto.SerializeToString(), base_dir=layout)
    assert graph.nodes


def test_a_model_path_that_is_a_fifo_is_refused(layout, alarm):
    os.mkfifo(layout / "pipe.onnx")
    with pytest.raises(mnn.MnnError, match="not a regular file"):
        mnn.load(layout / "pipe.onnx")


def test_negative_dims_are_refused():
    t = numpy_helper.from_array(np.arange(6, dtype=np.float32), "c")
    t.dims[:] = [-1]  # numpy would infer it: 6 elements
    with pytest.raises(mnn.MnnError, match="negative dimension"):
        mnn.convert.import_onnx(model_with("initializer", t))


def test_text_that_is_not_utf8_is_an_error():
    proto = model_with("initializer", numpy_helper.from_array(np.ones((2, 3), np.float32), "c"))
    data = proto.SerializeToString().replace(b"Add", b"A\xffd")
    with pytest.raises(mnn.MnnError, match="not UTF-8"):
        mnn.convert.import_onnx(data)


# -- sparse tensors --------------------------------------------------------------------------------


def sparse_model(values, indices, dims, out_shape=None, extra=()) -> onnx.ModelProto:
    s = helper.make_sparse_tensor(
        numpy_helper.from_array(np.asarray(values), "w"),
        numpy_helper.from_array(np.asarray(indices), "w_idx"),
        list(dims),
    )
    graph = helper.make_graph(
        [helper.make_node("Identity", ["w"], ["y"])],
        "sparse",
        [],
        [vi("y", TensorProto.FLOAT, out_shape)],
        sparse_initializer=[s, *extra],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("indices", [[1, 5, 11], [[0, 1], [1, 1], [2, 3]]], ids=["linear", "coordinates"])
def test_sparse_initializers_load_as_dense(indices):
    graph = mnn.convert.import_onnx(sparse_model(np.float32([1, 2, 3]), np.int64(indices), [3, 4]))
    want = np.zeros(12, np.float32)
    want[[1, 5, 11]] = [1, 2, 3]
    got = mnn.Session(graph, backend="reference").run({})["y"]
    np.testing.assert_array_equal(got, want.reshape(3, 4))


@pytest.mark.parametrize(
    "values, indices, dims, why",
    [
        ([1.0], [0], [1 << 40, 1 << 20], "more than this model may allocate"),
        ([1.0], [0], [1 << 62, 4], "more than this model may allocate"),
        ([1.0], [0], [-4, 3], "negative dimension"),
        ([1.0, 2.0], [0, 12], [3, 4], "out of range"),
        ([1.0, 2.0], [0, -1], [3, 4], "out of range"),
        ([1.0], [[0, 4]], [3, 4], "out of range"),
        ([1.0], [[0, -1]], [3, 4], "out of range"),
        ([1.0, 2.0], [0], [3, 4], "indices have shape"),
        ([1.0], [[0, 1, 2]], [3, 4], "indices have shape"),
        ([[1.0, 2.0]], [0], [3, 4], "1-D"),
        ([1.0], [0.5], [3, 4], "not integers"),
        ([1.0], [2**63 - 1], [3, 4], "out of range"),
    ],
)
def test_bad_sparse_initializers_are_one_clear_error(values, indices, dims, why):
    proto = sparse_model(np.float32(values), np.asarray(indices), dims)
    with pytest.raises(mnn.MnnError, match=why):
        mnn.convert.import_onnx(proto)


def test_sparse_tensors_share_one_budget():
    # each alone fits the fixed slack; together they do not
    each = onnx_tensors.SPARSE_SLACK_BYTES // 4 // 2 + 1
    extra = [
        helper.make_sparse_tensor(
            numpy_helper.from_array(np.float32([1]), f"w{i}"),
            numpy_helper.from_array(np.int64([0]), f"w{i}_idx"),
            [each],
        )
        for i in range(2)
    ]
    proto = sparse_model(np.float32([1]), np.int64([0]), [each], extra=extra)
    with pytest.raises(mnn.MnnError, match="more than this model may allocate"):
        mnn.convert.import_onnx(proto)


@pytest.mark.parametrize("command", ["info", "convert"])
def test_cli_prints_one_line_for_a_hostile_sparse_file(tmp_path, capsys, command):
    from mnn_core.cli import main

    path = tmp_path / "bad.onnx"
    path.write_bytes(sparse_model(np.float32([1.0]), np.int64([0]), [1 << 40, 1 << 20]).SerializeToString())
    args = [command, str(path)] + (["-o", str(tmp_path / "x.mnn")] if command == "convert" else [])
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("mnnx: error:") and err.count("\n") == 1 and "Traceback" not in err, err


def test_a_plan_too_large_for_memory_is_an_mnn_error(tmp_path):
    """Valid shapes past what the process may allocate (pads of 2**17 give a 256 GiB output):
    Session creation fails with an MnnError naming the arena, not a raw MemoryError. (A
    child under RLIMIT_AS: without it, Linux's overcommit might hand the arena out lazily.)"""
    import subprocess
    import sys
    import textwrap

    pad = 1 << 17
    graph = helper.make_graph(
        [helper.make_node("Pad", ["x", "pads"], ["y"])],
        "pad",
        [vi("x", TensorProto.FLOAT, [1, 1])],
        [vi("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.int64([pad, pad, pad, pad]), "pads")],
    )
    path = tmp_path / "big.onnx"
    path.write_bytes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString())
    script = textwrap.dedent(f"""
        import resource
        import numpy as np
        import mnn_core as mnn
        graph = mnn.load({str(path)!r})
        with open("/proc/self/status") as f:
            vm = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
        resource.setrlimit(resource.RLIMIT_AS, (vm + (2 << 30), resource.RLIM_INFINITY))
        try:
            mnn.Session(graph, backend="reference").run({{"x": np.ones((1, 1), np.float32)}})
        except mnn.MnnError as exc:
            print("MnnError:", exc)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.startswith("MnnError:") and "arena" in out.stdout, out.stderr[-2000:]
