"""mnn_core.torch, PyTorch's top-level namespace: constructors and dtypes as PyTorch makes them, the
import aliases, save/load without pickle, the tensor DataLoader, state dicts across the two."""

from __future__ import annotations

import io

import numpy as np
import pytest

import mnn_core.torch as mt
from mnn_core.errors import MnnError

torch = pytest.importorskip("torch", reason="PyTorch is the reference this namespace is compared with")


def _same(ours, theirs):
    assert isinstance(ours, mt.Tensor)
    assert ours.dtype == np.dtype(str(theirs.dtype).removeprefix("torch.")), (ours.dtype, theirs.dtype)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize(
    "make",
    [
        lambda t: t.tensor([1, 2, 3]),
        lambda t: t.tensor([[1.5, 2.0]]),
        lambda t: t.tensor(3),
        lambda t: t.tensor([True, False]),
        lambda t: t.zeros(2, 3),
        lambda t: t.ones((4,), dtype=t.long),
        lambda t: t.full((2, 2), 7),
        lambda t: t.full((3,), 0.5),
        lambda t: t.arange(5),
        lambda t: t.arange(1, 10, 3),
        lambda t: t.arange(0.0, 1.0, 0.25),
        lambda t: t.linspace(0, 1, 5),
        lambda t: t.eye(3, 2),
        lambda t: t.zeros_like(t.ones(2, 5, dtype=t.int32)),
        lambda t: t.full_like(t.ones(3), 2.5),
        lambda t: t.ones(3).to(t.float64),
        lambda t: t.arange(6).view(2, 3).float(),
        lambda t: t.triu(t.full((4, 4), float("-inf")), diagonal=1),
        lambda t: t.cat([t.zeros(2, 2), t.ones(1, 2)]),
        lambda t: t.stack([t.arange(3), t.arange(3)], dim=1),
        lambda t: t.argmax(t.tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 1.0]]), dim=1),
        lambda t: t.max(t.tensor([[1.0, 5.0], [7.0, 0.0]]), 1).indices,
        lambda t: t.clamp(t.arange(-3.0, 3.0), min=-1, max=1.5),
        lambda t: t.from_numpy(np.arange(4, dtype=np.int32)),
    ],
    ids=lambda f: None,
)
def test_constructors_match_pytorch(make):
    _same(make(mt), make(torch))


def test_from_numpy_shares_memory():
    a = np.zeros(3, np.float32)
    t = mt.from_numpy(a)
    a[1] = 5
    assert t.numpy()[1] == 5
    with pytest.raises(MnnError, match="numpy.ndarray"):
        mt.from_numpy([1, 2])


def test_random_constructors_follow_manual_seed():
    mt.manual_seed(3)
    a = (mt.randn(2, 3), mt.rand(4), mt.randint(0, 5, (6,)), mt.randperm(7))
    mt.manual_seed(3)
    b = (mt.randn(2, 3), mt.rand(4), mt.randint(0, 5, (6,)), mt.randperm(7))
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x.numpy(), y.numpy())
    assert a[0].dtype == np.float32 and a[2].dtype == np.int64
    assert 0 <= a[1].numpy().min() and a[1].numpy().max() < 1
    assert sorted(a[3].tolist()) == list(range(7))


def test_dtypes_and_devices():
    assert mt.float32 is np.float32 and mt.long is np.int64 and mt.bool is np.bool_
    x = mt.ones(2)
    assert x.dtype == mt.float32 and x.long().dtype == mt.int64
    assert str(mt.device("cpu")) == "cpu" and not mt.cuda.is_available()
    with pytest.raises(MnnError, match="CUDA"):
        mt.device("cuda")


def test_import_aliases():
    import mnn_core.torch.nn as tnn
    import mnn_core.torch.nn.functional as F
    from mnn_core.torch.nn.utils import clip_grad_norm_
    from mnn_core.torch.optim import lr_scheduler

    from mnn_core import nn, optim
    from mnn_core.torch.utils.data import DataLoader, TensorDataset  # noqa: F401

    assert tnn is nn and mt.nn is nn and mt.optim is optim and F is nn.functional
    assert lr_scheduler is optim.lr_scheduler and clip_grad_norm_ is nn.utils.clip_grad_norm_


def test_no_grad_context_and_decorator():
    w = mt.ones(2, requires_grad=True)
    with mt.no_grad():
        assert not (w * 2).requires_grad

    @mt.no_grad()
    def f():
        return w * 2

    assert not f().requires_grad and (w * 2).requires_grad


def _checkpoint(model, opt):
    return {
        "model": model.state_dict(),
        "optimizer": opt.state_dict(),
        "epoch": 7,
        "note": "resume",
        "history": [1.5, 0.75],
        "shape": (2, 3),
        "none": None,
    }


def test_save_load_round_trip(tmp_path):
    model = mt.nn.Sequential(mt.nn.Linear(3, 4), mt.nn.BatchNorm1d(4))
    opt = mt.optim.Adam(model.parameters(), lr=0.01)
    model(mt.randn(5, 3)).sum().backward()
    opt.step()
    path = tmp_path / "ckpt.pt"
    mt.save(_checkpoint(model, opt), path)
    assert path.exists() and not (tmp_path / "ckpt.pt.npz").exists()
    back = mt.load(path, map_location="cpu", weights_only=True)
    assert back["epoch"] == 7 and back["note"] == "resume" and back["history"] == [1.5, 0.75]
    assert back["shape"] == (2, 3) and back["none"] is None
    assert list(back["model"]) == list(model.state_dict())
    assert set(back["optimizer"]["state"]) == {0, 1, 2, 3}  # int keys stay ints
    assert back["optimizer"]["param_groups"][0]["betas"] == (0.9, 0.999)
    fresh = mt.nn.Sequential(mt.nn.Linear(3, 4), mt.nn.BatchNorm1d(4))
    fresh.load_state_dict(back["model"])
    for k, v in model.state_dict().items():
        np.testing.assert_array_equal(fresh.state_dict()[k], v)
    opt2 = mt.optim.Adam(fresh.parameters(), lr=0.5)
    opt2.load_state_dict(back["optimizer"])
    assert opt2.param_groups[0]["lr"] == 0.01


def test_save_refuses_objects_and_load_refuses_others(tmp_path):
    with pytest.raises(MnnError, match="never pickled"):
        mt.save({"model": object()}, io.BytesIO())
    bad = tmp_path / "x.pt"
    bad.write_bytes(b"not a zip")
    with pytest.raises(MnnError, match="not a file written by"):
        mt.load(bad)
    with pytest.raises(MnnError, match="no such file"):
        mt.load(tmp_path / "missing.pt")
    np.savez(tmp_path / "plain.npz", a=np.ones(2))
    with pytest.raises(MnnError, match="numpy.load"):
        mt.load(tmp_path / "plain.npz")
    theirs = tmp_path / "torch.pt"
    torch.save({"w": torch.ones(2)}, theirs)
    with pytest.raises(MnnError, match="PyTorch"):
        mt.load(theirs)


def test_saves_torch_tensors_too():
    buf = io.BytesIO()
    mt.save({"w": torch.arange(4.0), "v": mt.ones(2)}, buf)
    buf.seek(0)
    back = mt.load(buf)
    np.testing.assert_array_equal(back["w"], [0, 1, 2, 3])
    np.testing.assert_array_equal(back["v"], [1, 1])


class _Net:
    """The same network, built from either namespace, with the same layer names."""

    @staticmethod
    def build(t):
        class Net(t.nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = t.nn.Conv2d(1, 4, 3)
                self.bn = t.nn.BatchNorm2d(4)
                self.rnn = t.nn.GRU(4, 5, batch_first=True)
                self.fc = t.nn.Linear(5, 2)

            def forward(self, x):
                x = t.relu(self.bn(self.conv(x))).mean(dim=(2,))
                out, _ = self.rnn(x.transpose(1, 2))
                return self.fc(out[:, -1])

        return Net()


def test_torch_state_dict_loads_into_mnn_module():
    torch.manual_seed(0)
    theirs, ours = _Net.build(torch), _Net.build(mt)
    theirs.train()
    theirs(torch.randn(3, 1, 6, 6))  # running statistics move; num_batches_tracked appears
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    theirs.eval()
    ours.eval()
    x = np.random.default_rng(0).standard_normal((2, 1, 6, 6)).astype(np.float32)
    with torch.no_grad():
        want = theirs(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(ours(mt.from_numpy(x)).numpy(), want, rtol=1e-5, atol=1e-6)
    # and back: mnn's state dict into the PyTorch model
    theirs2 = _Net.build(torch)
    theirs2.load_state_dict({k: torch.from_numpy(v) for k, v in ours.state_dict().items()}, strict=False)
    theirs2.eval()
    with torch.no_grad():
        np.testing.assert_allclose(theirs2(torch.from_numpy(x)).numpy(), want, rtol=1e-6)


def test_state_dict_names_mismatch_is_clear():
    ours = _Net.build(mt)
    sd = {k.replace("fc.", "head."): v for k, v in ours.state_dict().items()}
    with pytest.raises(MnnError, match="missing keys.*fc.weight.*unexpected keys.*head.weight"):
        ours.load_state_dict(sd)


def test_dataloader_yields_tensors():
    from mnn_core.torch.utils.data import DataLoader, Dataset, TensorDataset

    x, y = mt.arange(20.0).view(10, 2), mt.arange(10)
    batches = list(DataLoader(TensorDataset(x, y), batch_size=4, num_workers=2, pin_memory=True))
    assert [b[0].size(0) for b in batches] == [4, 4, 2]
    assert all(isinstance(t, mt.Tensor) for b in batches for t in b)
    np.testing.assert_array_equal(batches[1][1].numpy(), [4, 5, 6, 7])

    class Squares(Dataset):
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return mt.tensor([float(i)]), i * i

    mt.manual_seed(1)
    first = [b[1].tolist() for b in DataLoader(Squares(), batch_size=2, shuffle=True, drop_last=True)]
    mt.manual_seed(1)
    again = [b[1].tolist() for b in DataLoader(Squares(), batch_size=2, shuffle=True, drop_last=True)]
    assert first == again and len(first) == 2
    assert set(sum(first, [])) <= {0, 1, 4, 9, 16} and len(set(sum(first, []))) == 4
    with pytest.raises(MnnError, match="sampler"):
        DataLoader(Squares(), sampler=[0, 1])


@pytest.mark.parametrize(
    "expr",
    [
        lambda t, a, b: ~(a > 0),
        lambda t, a, b: (a > 0) & (b > 0),
        lambda t, a, b: (a > 0) | (b < 0),
        lambda t, a, b: (a > 0) ^ (b > 0),
        lambda t, a, b: ~a.long(),
        lambda t, a, b: a.long() & 6,
        lambda t, a, b: 5 | b.long(),
        lambda t, a, b: (a > 0).logical_not(),
        lambda t, a, b: (~(a > 0)).float().sum(dim=1),
    ],
    ids=lambda f: None,
)
def test_mask_operators_match_pytorch(expr):
    rng = np.random.default_rng(0)
    a, b = rng.integers(-4, 5, (3, 5)).astype(np.float32), rng.integers(-4, 5, (3, 5)).astype(np.float32)
    _same(expr(mt, mt.from_numpy(a), mt.from_numpy(b)), expr(torch, torch.from_numpy(a), torch.from_numpy(b)))
    with pytest.raises(MnnError, match="bool or integer"):
        ~mt.from_numpy(a)


def test_load_state_dict_returns_incompatible_keys_like_pytorch():
    ours, theirs = mt.nn.Linear(2, 3), torch.nn.Linear(2, 3)
    sd = {"bias": np.zeros(3, np.float32), "extra": np.ones(1, np.float32)}
    got = ours.load_state_dict(sd, strict=False)
    want = theirs.load_state_dict({k: torch.from_numpy(v) for k, v in sd.items()}, strict=False)
    assert (got.missing_keys, got.unexpected_keys) == (want.missing_keys, want.unexpected_keys)
    missing, unexpected = ours.load_state_dict(ours.state_dict())
    assert missing == [] and unexpected == []


def test_dataloader_collates_like_pytorch():
    """Dicts, tuples, lists, numbers and strings in items: the same batches (fields, dtypes, values)."""

    def items(t):
        class Items(t.utils.data.Dataset):
            def __len__(self):
                return 5

            def __getitem__(self, i):
                return {"x": t.ones(3) * i, "y": i, "w": i / 2, "name": f"n{i}", "pair": (i, [float(i), 1.0])}

        return list(t.utils.data.DataLoader(Items(), batch_size=2))

    def flat(batch, path=""):
        if isinstance(batch, dict):
            return [f for k in batch for f in flat(batch[k], f"{path}.{k}")]
        if isinstance(batch, (tuple, list)) and batch and not isinstance(batch[0], str):
            return [f for i, b in enumerate(batch) for f in flat(b, f"{path}[{i}]")]
        return [(path, batch)]

    for ours, theirs in zip(items(mt), items(torch), strict=True):
        for (p, a), (q, b) in zip(flat(ours), flat(theirs), strict=True):
            assert p == q
            if isinstance(b, list):
                assert a == b
            else:
                assert a.dtype == np.dtype(str(b.dtype).removeprefix("torch.")), p
                np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.filterwarnings("ignore:Length of split")  # PyTorch's, on an empty part of 3 items
@pytest.mark.parametrize("n", [10, 17, 3])
def test_random_split_lengths_and_generators(n):
    from mnn_core.torch.utils.data import DataLoader, TensorDataset, random_split

    ds = TensorDataset(mt.arange(n))
    for lengths in ([0.33, 0.33, 0.34], [0.8, 0.2], [n - 1, 1]):
        ours = [len(s) for s in random_split(ds, lengths)]
        theirs = [len(s) for s in torch.utils.data.random_split(range(n), lengths)]
        assert ours == theirs, lengths
    parts = [random_split(ds, [0.5, 0.5], generator=mt.Generator().manual_seed(7)) for _ in range(2)]
    assert [list(p.indices) for p in parts[0]] == [list(p.indices) for p in parts[1]]
    assert sorted(np.concatenate([p.indices for p in parts[0]]).tolist()) == list(range(n))
    orders = [
        [b[0].tolist() for b in DataLoader(ds, batch_size=2, shuffle=True, generator=mt.Generator().manual_seed(3))]
        for _ in range(2)
    ]
    assert orders[0] == orders[1]
    with pytest.raises(MnnError, match="add up"):
        random_split(ds, [n, 1])
    with pytest.raises(MnnError, match="Generator"):
        DataLoader(ds, generator=5)
