"""express.torch_more (gather, topk, sort, flip, cumsum, predicates, rounding, % and //, ...) against
PyTorch: values on odd shapes, and gradients where PyTorch has them."""

from __future__ import annotations

import numpy as np
import pytest

import mnn_core.torch as mt
from mnn_core.errors import MnnError

torch = pytest.importorskip("torch", reason="PyTorch is the reference these ops are compared with")

RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 5, 7))
IDX = RNG.integers(0, 5, (3, 4, 7))

CASES = {
    "gather": lambda t, x: t.gather(x, 1, t.from_numpy(IDX)),
    "gather-method": lambda t, x: x.gather(2, t.from_numpy(IDX[:, :, :3] % 7)),
    "index_select": lambda t, x: t.index_select(x, 1, t.tensor([4, 0, 0, 2])),
    "topk-values": lambda t, x: t.topk(x, 3, dim=1).values,
    "topk-smallest": lambda t, x: x.topk(2, dim=-1, largest=False).values,
    "sort": lambda t, x: t.sort(x, dim=2).values,
    "sort-desc": lambda t, x: x.sort(dim=0, descending=True).values,
    "flip": lambda t, x: t.flip(x, [0, 2]),
    "flip-method": lambda t, x: x.flip(1),
    "cumsum": lambda t, x: t.cumsum(x, dim=1),
    "cumsum-method": lambda t, x: x.cumsum(-1),
    "outer": lambda t, x: t.outer(x[0, 0], x[1, 1]),
    "square": lambda t, x: t.square(x),
    "rsqrt": lambda t, x: (x * x + 1).rsqrt(),
    "unbind": lambda t, x: t.unbind(x, 1)[3],
}


@pytest.mark.parametrize("name", CASES)
def test_differentiable_ops_match_pytorch(name):
    f = CASES[name]
    tx = torch.tensor(A, requires_grad=True)
    mx = mt.tensor(A, requires_grad=True)
    ty, my = f(torch, tx), f(mt, mx)
    np.testing.assert_allclose(my.numpy(), ty.detach().numpy(), rtol=1e-12, atol=1e-12)
    g = RNG.standard_normal(ty.shape)
    ty.backward(torch.tensor(g))
    my.backward(g)
    np.testing.assert_allclose(mx.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-12)


INDEX_CASES = {
    "topk-indices": lambda t, x: t.topk(x, 2, dim=1).indices,
    "argsort": lambda t, x: t.argsort(x, dim=-1),
    "argsort-desc": lambda t, x: x.argsort(dim=0, descending=True),
    "all": lambda t, x: t.all(x > -3),
    "all-dim": lambda t, x: (x > -1).all(dim=1),
    "any": lambda t, x: (x > 2).any(),
    "any-dim-keep": lambda t, x: t.any(x > 1, dim=2, keepdim=True),
    "any-float": lambda t, x: t.any(t.floor(x)),
    "isnan": lambda t, x: t.isnan(t.log(x)),
    "isinf": lambda t, x: t.isinf(x / t.floor(x)),
    "isfinite": lambda t, x: t.isfinite(t.log(x)),
    "floor": lambda t, x: t.floor(x * 3),
    "ceil": lambda t, x: (x * 3).ceil(),
    "round-half-even": lambda t, x: t.round(t.tensor([0.5, 1.5, 2.5, -0.5, -1.5, 0.49], dtype=t.float64)),
    "sign": lambda t, x: t.sign(t.floor(x)),
    "mod": lambda t, x: t.arange(-7, 8) % 3,
    "rmod": lambda t, x: 17 % t.arange(1, 6),
    "mod-neg": lambda t, x: t.arange(-7, 8) % -4,
    "mod-float": lambda t, x: t.remainder(x * 5, 1.5),
    "floordiv": lambda t, x: t.arange(-7, 8) // 3,
    "floordiv-neg": lambda t, x: t.arange(-7, 8) // -2,
    "floordiv-float": lambda t, x: (x * 5) // 2,
    "rfloordiv": lambda t, x: 20 // t.arange(1, 6),
    "prod": lambda t, x: t.arange(1, 7).view(2, 3).prod(dim=1),
    "prod-all": lambda t, x: t.prod(t.arange(1, 6)),
    "nonzero": lambda t, x: t.nonzero(x > 1),
    "nonzero-tuple": lambda t, x: (x > 1).nonzero(as_tuple=True)[2],
    "is_floating": lambda t, x: t.tensor([x.is_floating_point(), t.arange(3).is_floating_point()]),
    "typed": lambda t, x: t.LongTensor([1, 2, 3]) + t.FloatTensor([[1.5, 2.0]]).long().sum(),
}


@pytest.mark.parametrize("name", INDEX_CASES)
def test_index_and_predicate_ops_match_pytorch(name):
    f = INDEX_CASES[name]
    theirs, ours = f(torch, torch.tensor(A)), f(mt, mt.tensor(A))
    want = theirs.numpy()
    assert ours.dtype == want.dtype, (ours.dtype, want.dtype)
    np.testing.assert_array_equal(ours.numpy(), want)


def test_multinomial_draws_from_the_distribution():
    mt.manual_seed(0)
    probs = mt.tensor([[0.0, 1.0, 3.0], [5.0, 0.0, 0.0]])
    draws = mt.multinomial(probs, 4000, replacement=True)
    assert draws.shape == (2, 4000) and draws.dtype == np.int64
    counts = np.bincount(draws.numpy()[0], minlength=3) / 4000
    np.testing.assert_allclose(counts, [0, 0.25, 0.75], atol=0.03)
    assert set(draws.numpy()[1].tolist()) == {0}
    picks = mt.multinomial(mt.ones(6), 6).numpy()
    assert sorted(picks.tolist()) == list(range(6))
    with pytest.raises(MnnError, match="without replacement"):
        mt.multinomial(mt.ones(3), 4)
    with pytest.raises(MnnError, match="non-negative"):
        mt.multinomial(mt.tensor([1.0, -1.0]), 1)


def test_torch_namespace_extras():
    assert mt.Size([2, 3]) == (2, 3) and mt.randn(2, 3).size() == mt.Size([2, 3])
    mt.backends.cudnn.deterministic = True
    mt.backends.cudnn.benchmark = False
    mt.set_float32_matmul_precision("high")
    with pytest.raises(MnnError, match="integers"):
        mt.gather(mt.ones(2, 2), 1, mt.ones(2, 2))
