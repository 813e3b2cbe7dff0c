"""mnn on Ray, on a real two-node cluster on this machine (mnn_core.ray.LocalCluster: `ray start --head` and
a `ray start --address` node, one CPU each): Ray Data batch inference and the resumable `mnn batch` runner
against a local Session row by row (a worker killed mid-run included), Serve under concurrent HTTP
requests, and data-parallel training against one process on the whole batch."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

ray = pytest.importorskip("ray", reason="Ray is an optional extra: pip install 'mnn-core[ray]'")
pytest.importorskip("ray.data", reason="needs ray[data]")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

import mnn_core as mnn  # noqa: E402
import mnn_core.ray as mray  # noqa: E402
from mnn_core import express as E  # noqa: E402
from mnn_core import nn, optim  # noqa: E402
from mnn_core.errors import InputError, MnnError  # noqa: E402
from mnn_core.express import dispatch  # noqa: E402
from mnn_core.ray.cli_batch import run_batch  # noqa: E402
from mnn_core.ray.cluster import free_port  # noqa: E402

FEATURES = 24


def mlp_graph(seed: int = 0, name: str = "mlp"):
    """Rows of 24 features -> 10 class probabilities; row-independent, so tails may be padded."""
    rng = np.random.default_rng(seed)
    b = mnn.GraphBuilder(name)
    x = b.input("x", ("N", FEATURES))
    h = b.Relu(
        b.Add(
            b.MatMul(x, b.const(rng.standard_normal((FEATURES, 32)).astype("float32"))),
            b.const(rng.standard_normal(32).astype("float32")),
        )
    )
    b.output(b.Softmax(b.MatMul(h, b.const(rng.standard_normal((32, 10)).astype("float32"))), axis=-1), "probs")
    return b.build()


@pytest.fixture(scope="module")
def cluster():
    """Two Ray nodes of one CPU each, and this process connected as the driver."""
    if ray.is_initialized():
        ray.shutdown()
    with mray.LocalCluster(nodes=2, cpus_per_node=1) as c:
        saved = {k: os.environ.get(k) for k in c.env}
        c.connect()
        ctx = ray.data.DataContext.get_current()
        ctx.enable_progress_bars = False
        try:
            yield c
        finally:
            ray.shutdown()
            for k, v in saved.items():  # the token of a cluster that is gone must not stay in the environment
                os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    path = tmp_path_factory.mktemp("ray-model") / "mlp.mnn"
    mnn.save(mlp_graph(), path)
    return path


def local(model, x):
    return mnn.Session(str(model), backend="reference").run({"x": x})["probs"]


def rows(n, seed=0):
    return np.random.default_rng(seed).standard_normal((n, FEATURES)).astype(np.float32)


def test_the_core_does_not_import_ray():
    code = (
        "import sys, numpy as np, mnn_core as mnn, mnn_core.cli; from mnn_core import nn, optim, train; "
        "mnn.Session(mnn.load(sys.argv[1]), backend='reference').run({'x': np.zeros((2, 24), 'float32')}); "
        "assert not [m for m in sys.modules if m == 'ray' or m.startswith('ray.')], 'ray was imported'"
    )
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "m.mnn"
        mnn.save(mlp_graph(), path)
        done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]


def test_cluster_has_two_nodes(cluster):
    nodes = [n for n in ray.nodes() if n["Alive"]]
    assert len(nodes) == 2 and ray.cluster_resources()["CPU"] == 2


def test_predict_matches_a_local_session_row_by_row(cluster, model):
    x = rows(2003)  # an odd count: every block and the last sub-batch end short
    ds = ray.data.from_items([{"id": i, "x": r} for i, r in enumerate(x)], override_num_blocks=6)
    out = mray.predict(ds, str(model), backend="reference", workers=2, batch_size=256, sub_batch=64)
    got = out.to_pandas()
    assert len(got) == len(x) and sorted(got["id"]) == list(range(len(x)))  # each row once, ids kept
    order = np.argsort(got["id"].to_numpy())
    np.testing.assert_allclose(np.stack(got["probs"].to_numpy())[order], local(model, x), rtol=1e-6, atol=1e-7)


@ray.remote(num_cpus=0)
class PluginProbe:
    """A fresh actor process: which plugins a Predictor given `plugins` leaves loaded there."""

    def loaded(self, ref, plugins):
        from mnn_core.backend.plugins import get_plugins

        mray.Predictor(ref, backend="reference", plugins=plugins)
        return sorted(r.name for r in get_plugins().records)


def test_onnx_ships_as_mnn_and_an_actor_loads_only_the_plugins_it_needs(cluster, tmp_path):
    """Otherwise each actor of each run imports the ONNX importer and probes every installed backend."""
    from mnn_core.ray.resources import actor_plugins

    path = tmp_path / "mlp.onnx"
    mnn.save(mlp_graph(), path)
    ref = mray.ship(str(path))
    assert ref.suffix == ".mnn"
    x = rows(37)
    got = mnn.Session(ref.load(), backend="reference").run({"x": x})["probs"]
    np.testing.assert_allclose(got, local(path, x), rtol=1e-6, atol=1e-7)

    assert actor_plugins("reference") == ()
    assert actor_plugins("auto") is None and actor_plugins("no-such-backend") is None
    if "MNN_LOAD_PLUGINS" not in os.environ and "MNN_DISABLE_PLUGIN_AUTOLOAD" not in os.environ:
        probe = PluginProbe.remote()
        assert ray.get(probe.loaded.remote(ref, ())) == ["loaders", "reference"]  # the core's own only
        ray.kill(probe)


def test_predictor_pads_tails_and_passes_columns_through(model):
    p = mray.Predictor(str(model), backend="reference", sub_batch=16)  # no Ray needed: the class alone
    x = rows(37, seed=3)
    out = p({"x": x, "key": np.arange(37)})
    np.testing.assert_array_equal(out["key"], np.arange(37))
    np.testing.assert_allclose(out["probs"], local(model, x), rtol=1e-6, atol=1e-7)
    with pytest.raises(InputError, match="column 'x'"):
        p({"features": x})


def write_parquet(path: Path, x: np.ndarray, row_group: int = 250) -> None:
    pq.write_table(pa.table({"x": pa.FixedShapeTensorArray.from_numpy_ndarray(x)}), path, row_group_size=row_group)


def read_output(out: Path) -> tuple[np.ndarray, np.ndarray]:
    parts = sorted(out.glob("part-*.parquet"))
    table = pa.concat_tables([pq.read_table(p) for p in parts])
    return table.column("row").to_numpy(), table.column("probs").combine_chunks().to_numpy_ndarray()


def _block_workers(cluster) -> list[int]:
    """The pids of this cluster's BlockWorker actor processes (their title says the class)."""
    sessions = {p.pid for p in cluster._procs}
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.getsid(int(entry)) in sessions and b"BlockWorker" in Path(f"/proc/{entry}/cmdline").read_bytes():
                found.append(int(entry))
        except OSError:
            continue
    return found


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="finds the worker to kill through /proc")
def test_batch_runner_exact_after_a_killed_worker_and_resumes(cluster, model, tmp_path):
    x = rows(3001, seed=1)
    src = tmp_path / "in.parquet"
    write_parquet(src, x)
    out = tmp_path / "out"
    killed: list[int] = []

    def kill_one(index: int) -> None:  # once the first block is done, with blocks still queued on every actor
        if not killed:
            pids = _block_workers(cluster)
            assert pids, "no BlockWorker process found"
            os.kill(pids[0], signal.SIGKILL)
            killed.append(pids[0])

    report = run_batch(
        model, src, out, backend="reference", workers=2, block_rows=100, sub_batch=32, progress=False, on_block=kill_one
    )
    assert killed and report.rows == 3001 and report.blocks == 31 and report.skipped == 0
    row, probs = read_output(out)
    np.testing.assert_array_equal(row, np.arange(3001))  # every row once, in order
    np.testing.assert_allclose(probs, local(model, x), rtol=1e-6, atol=1e-7)

    # a rerun does only the blocks whose parts are missing
    for i in (3, 30):
        (out / f"part-{i:06d}.parquet").unlink()
    ran: list[int] = []
    again = run_batch(
        model, src, out, backend="reference", workers=2, block_rows=100, progress=False, on_block=ran.append
    )
    assert sorted(ran) == [3, 30] and again.skipped == 29 and again.rows == 101
    row2, probs2 = read_output(out)
    np.testing.assert_array_equal(row2, np.arange(3001))
    np.testing.assert_array_equal(probs2, probs)

    other = tmp_path / "other.mnn"
    mnn.save(mlp_graph(seed=5, name="other"), other)
    with pytest.raises(MnnError, match="another run"):  # the output folder of one run is not mixed with another's
        run_batch(other, src, out, backend="reference", block_rows=100, progress=False)


def test_batch_runner_reads_npy_and_npz_folders(cluster, model, tmp_path):
    x = rows(23, seed=2)
    for kind in ("npy", "npz"):
        src = tmp_path / kind
        src.mkdir()
        for i, r in enumerate(x):
            (np.save(src / f"{i:03d}.npy", r) if kind == "npy" else np.savez(src / f"{i:03d}.npz", x=r))
        report = run_batch(
            model, src, tmp_path / f"out-{kind}", backend="reference", workers=2, block_rows=5, progress=False
        )
        assert report.rows == 23 and report.blocks == 5
        row, probs = read_output(tmp_path / f"out-{kind}")
        np.testing.assert_array_equal(row, np.arange(23))
        np.testing.assert_allclose(probs, local(model, x), rtol=1e-6, atol=1e-7)


def test_bad_model_and_bad_input_are_clear_errors(cluster, model, tmp_path):
    bad = tmp_path / "bad.mnn"
    bad.write_bytes(b"this is not a model" * 10)
    ds = ray.data.from_items([{"x": r} for r in rows(4)])
    with pytest.raises(MnnError, match=r"bad\.mnn cannot be loaded"):
        mray.predict(ds, str(bad), backend="reference")
    with pytest.raises(MnnError, match="does not exist"):
        mray.predict(ds, str(tmp_path / "missing.mnn"), backend="reference")
    src = tmp_path / "in.parquet"
    write_parquet(src, rows(10))
    with pytest.raises(MnnError, match=r"bad\.mnn cannot be loaded"):
        run_batch(bad, src, tmp_path / "out", backend="reference", progress=False)
    wrong = tmp_path / "wrong"
    wrong.mkdir()
    for i in range(3):
        np.save(wrong / f"{i}.npy", np.zeros(FEATURES + 1, np.float32))  # rows one feature too long
    with pytest.raises(MnnError, match="block 0"):
        run_batch(model, wrong, tmp_path / "out2", backend="reference", progress=False)
    with pytest.raises(MnnError, match="threads"):
        mray.actor_resources("reference", threads=8)  # more CPUs than the cluster has: an error, not a hang


# -- Serve ----------------------------------------------------------------------------------------


def test_serve_answers_concurrent_http_requests_like_a_local_session(cluster, model):
    serve = pytest.importorskip("ray.serve", reason="needs ray[serve]")
    pytest.importorskip("starlette")
    port = free_port()
    serve.start(http_options={"host": "127.0.0.1", "port": port}, proxy_location="HeadOnly")
    try:
        app = mray.serve_app(
            str(model), backend="reference", max_batch_size=8, batch_wait_timeout_s=0.05, num_replicas=2, name="mlp"
        )
        handle = serve.run(app, name="mlp", route_prefix="/mlp")
        x = rows(60, seed=4)
        sizes = [1 + i % 3 for i in range(24)]  # requests of 1 to 3 rows
        starts = np.concatenate([[0], np.cumsum(sizes)])

        def post(i):
            body = json.dumps({"x": x[starts[i] : starts[i + 1]].tolist()}).encode()
            req = urllib.request.Request(
                f"http://127.0.0.1:{port}/mlp", data=body, headers={"Content-Type": "application/json"}
            )
            with urllib.request.urlopen(req, timeout=60) as r:
                return np.asarray(json.loads(r.read())["probs"], np.float32)

        with ThreadPoolExecutor(12) as pool:
            got = list(pool.map(post, range(len(sizes))))
        want = local(model, x[: starts[-1]])
        for i, g in enumerate(got):  # each request has its own rows back
            np.testing.assert_allclose(g, want[starts[i] : starts[i + 1]], rtol=1e-6, atol=1e-7)
        stats = [handle.stats.remote().result() for _ in range(8)]
        assert max(s["max_requests_per_batch"] for s in stats) > 1  # requests were batched together

        direct = handle.predict.remote({"x": x[:5]}).result()
        np.testing.assert_allclose(direct["probs"], want[:5], rtol=1e-6, atol=1e-7)
        with pytest.raises(urllib.error.HTTPError) as err:  # a malformed request: 400 with the reason
            urllib.request.urlopen(
                urllib.request.Request(f"http://127.0.0.1:{port}/mlp", data=json.dumps({"x": [[1.0, 2.0]]}).encode()),
                timeout=60,
            )
        assert err.value.code == 400 and "rows of shape" in json.loads(err.value.read())["error"]
    finally:
        serve.shutdown()


# -- data-parallel training -----------------------------------------------------------------------


def factories():
    """The model and optimizer builders, as local functions: Ray pickles those by value, so the workers
    need not import this test module."""

    def make_model():
        E.manual_seed(7)
        return nn.Sequential(nn.Linear(FEATURES, 16), nn.Tanh(), nn.Linear(16, 5))

    def make_bn_model():
        return nn.Sequential(nn.Linear(FEATURES, 8), nn.BatchNorm1d(8), nn.Linear(8, 5))

    def make_adam(params):
        return optim.Adam(params, lr=0.01)

    return make_model, make_bn_model, make_adam


def test_data_parallel_matches_one_process_on_the_whole_batch(cluster):
    make_model, _, make_adam = factories()
    rng = np.random.default_rng(5)
    batches = [(rng.standard_normal((21, FEATURES)).astype(np.float32), rng.integers(0, 5, 21)) for _ in range(5)]
    with mray.DataParallel(make_model, make_adam, nn.CrossEntropyLoss(), workers=2) as dp:
        losses = dp.fit(batches)
        got = dp.state_dict()
    ref = make_model()
    opt, loss_fn, want = make_adam(ref.parameters()), nn.CrossEntropyLoss(), []
    with dispatch.using("reference"):
        for x, y in batches:
            opt.zero_grad()
            loss = loss_fn(ref(x), y)
            loss.backward()
            opt.step()
            want.append(loss.item())
    np.testing.assert_allclose(losses, want, rtol=1e-5, atol=1e-6)
    moved = 0.0
    for name, value in ref.state_dict().items():
        np.testing.assert_allclose(got[name], np.asarray(value), rtol=1e-5, atol=1e-5, err_msg=name)
        moved = max(moved, float(np.abs(np.asarray(value) - np.asarray(make_model().state_dict()[name])).max()))
    assert moved > 1e-3  # training changed the weights: the comparison is not of two untouched models


def test_data_parallel_refuses_batchnorm_and_sum_losses(cluster):
    make_model, make_bn_model, make_adam = factories()
    with pytest.raises(MnnError, match="BatchNorm"):
        mray.DataParallel(make_bn_model, make_adam, nn.CrossEntropyLoss(), workers=2)
    with pytest.raises(MnnError, match="reduction"):
        mray.DataParallel(make_model, make_adam, nn.CrossEntropyLoss(reduction="sum"), workers=2)
