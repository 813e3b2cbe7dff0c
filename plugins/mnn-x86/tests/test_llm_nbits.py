"""MatMulNBits on x86 (ops_llm.py, csrc/llm/) against the reference backend: 4- and 8-bit weights,
blocks of 16 to 256, with and without zero points and bias, odd K (partial last blocks) and N, one row
(decode) and many (prefill), 1 and 2 threads, each ISA level and each way to multiply (float, the
float GEMM on dequantized panels, and int8 at accuracy_level 4 in dots or, for many rows, integer
tiles; int8's error is bounded by A's rounding to int8 per block)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ISAS, one_op_graph
from mnn_x86 import _llm, ops_llm

from mnn_core.ops import run_reference
from mnn_core.ops.matmul_nbits import dequantize_nbits, random_nbits
from mnn_core.session import Session

# (leading dims of A, K, N)
SHAPES = [((1,), 64, 33), ((1, 1), 200, 17), ((7,), 96, 40), ((2, 5), 130, 9), ((1,), 1000, 70), ((32,), 257, 65)]
SHAPES += [((70,), 200, 13), ((3, 11), 96, 64)]  # several panels of rows, the last partial
BLOCKS = [(4, 32), (4, 64), (4, 128), (8, 32), (8, 64), (8, 128), (4, 256)]


def _case(rng, lead, k, n, bits, block, zp, bias):
    b, scales, zero = random_nbits(rng, k, n, bits, block, zp)
    a = rng.standard_normal(lead + (k,)).astype(np.float32)
    ins = [a, b, scales]
    if zp or bias:
        ins.append(zero)
    if bias:
        ins += [None, rng.standard_normal(n).astype(np.float32)]
    return ins, {"K": k, "N": n, "bits": bits, "block_size": block}


def _run(ins, attrs, isa, threads):
    graph, feeds = one_op_graph("MatMulNBits", ins, attrs, constant=(1, 2, 3, 5))
    sess = Session(graph, backend="x86", fallback=False, optimize=False, threads=threads, options={"x86.isa": isa})
    outs = [sess.run(feeds)["out"] for _ in range(2)]
    np.testing.assert_array_equal(outs[0], outs[1])
    return outs[0]


def _magnitude(ins, attrs):
    """|A| @ |W|^T: what float rounding is relative to."""
    w = dequantize_nbits(
        ins[1], ins[2], ins[3] if len(ins) > 3 else None, attrs["K"], attrs["N"], attrs["bits"], attrs["block_size"]
    )
    return np.abs(ins[0].astype(np.float64)) @ np.abs(w).T, w


def _int8_bound(a, w, block):
    """The most A's rounding to int8 (half a step, amax / 127 per block of each row) can move each output."""
    k = a.shape[-1]
    rows = a.reshape(-1, k).astype(np.float64)
    nb = -(-k // block)
    bound = np.zeros((rows.shape[0], w.shape[0]))
    for b in range(nb):
        lo, hi = b * block, min(k, (b + 1) * block)
        step = np.abs(rows[:, lo:hi]).max(axis=1) / 127.0
        bound += (step / 2)[:, None] * np.abs(w[:, lo:hi]).sum(axis=1)[None, :]
    return bound.reshape(a.shape[:-1] + (w.shape[0],))


def _tiles(isa, bits, rows):
    """whether the integer tiles multiply these rows at accuracy_level 4 (_llm.matmul_nbits)"""
    if ops_llm.QGEMM_ROWS <= 0:
        return False
    if _llm.int8_path(isa) == "vnni":
        return rows >= ops_llm.QGEMM_ROWS
    return _llm.int8_path(isa) == "avx2" and bits == 4 and rows >= max(ops_llm.QGEMM_ROWS, _llm.QGEMM_ROWS_AVX2)


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("bits,block", BLOCKS)
@pytest.mark.parametrize("accuracy", [0, 4])
@pytest.mark.parametrize("path", ["qgemm", "gemm", "dots"])
def test_matmul_nbits(isa, bits, block, accuracy, path, monkeypatch):
    if path != "qgemm":  # many rows through the float GEMM, or through the dots too
        monkeypatch.setattr(ops_llm, "QGEMM_ROWS", 0)
    if path == "dots":
        monkeypatch.setattr(ops_llm, "GEMM_ROWS", 0)
    gemm = path == "gemm"
    rng = np.random.default_rng(bits * 1000 + block + accuracy)
    for i, (lead, k, n) in enumerate(SHAPES):
        ins, attrs = _case(rng, lead, k, n, bits, block, zp=i % 2 == 1, bias=i % 3 == 2)
        attrs["accuracy_level"] = accuracy
        want = run_reference("MatMulNBits", ins, attrs)[0]
        mag, w = _magnitude(ins, attrs)
        slack = 1e-5 * mag + 1e-6
        rows = len(want.reshape(-1, attrs["N"]))
        dots = not gemm or rows < _llm.GEMM_ROWS or _tiles(isa, bits, rows)
        if accuracy == 4 and _llm.int8_path(isa) != "float" and block >= 32 and dots:
            slack = slack + _int8_bound(ins[0], w, block) * 1.001
        for threads in (1, 2):
            got = _run(ins, attrs, isa, threads)
            assert got.shape == want.shape and got.dtype == np.float32
            err = np.abs(got.astype(np.float64) - want)
            assert (err <= slack).all(), f"{attrs} A{ins[0].shape} {isa} t{threads}: {err.max()} > {slack.max()}"


def test_blocks_of_16_multiply_in_float(rng):
    ins, attrs = _case(rng, (3,), 50, 7, 4, 16, zp=True, bias=True)
    attrs["accuracy_level"] = 4
    want = run_reference("MatMulNBits", ins, attrs)[0]
    np.testing.assert_allclose(_run(ins, attrs, "avx2", 1), want, rtol=1e-5, atol=1e-5)


def test_int8_rounding_is_what_the_bound_allows(rng):
    """The int8 path is not the float one: its error is A's rounding, which the bound above must reach
    a good share of (so a bound loose enough to hide a wrong kernel would fail here)."""
    if _llm.int8_path("avx2") == "float":
        pytest.skip("no int8 path on this CPU")
    ins, attrs = _case(rng, (4,), 512, 64, 8, 64, zp=True, bias=False)
    want = run_reference("MatMulNBits", ins, {**attrs, "accuracy_level": 0})[0]
    got = _run(ins, {**attrs, "accuracy_level": 4}, "avx2", 1)
    _, w = _magnitude(ins, attrs)
    err = np.abs(got - want)
    assert err.max() > 0
    assert err.max() < 0.25 * _int8_bound(ins[0], w, 64).max()


@pytest.mark.parametrize("isa,bits", [("avx2", 4), ("avx512", 4), ("avx512", 8)])
def test_int8_tiles_round_as_the_bound_allows(rng, isa, bits):
    """The prefill tiles (many rows) round A like the dots: within the bound, and reaching a good share
    of it."""
    if not _tiles(isa, bits, 40):
        pytest.skip(f"no integer tiles at {isa} on this CPU")
    ins, attrs = _case(rng, (40,), 515, 70, bits, 32, zp=True, bias=True)
    want = run_reference("MatMulNBits", ins, {**attrs, "accuracy_level": 0})[0]
    got = _run(ins, {**attrs, "accuracy_level": 4}, isa, 1)
    _, w = _magnitude(ins, attrs)
    err, bound = np.abs(got - want), _int8_bound(ins[0], w, 32)
    assert (err <= bound * 1.001 + 1e-4).all()
    assert err.max() > 0.02 * bound.max()


def test_sessions_on_two_threads_keep_their_scratch_apart(rng):
    """The run's scratch is the calling thread's: two sessions running at once on two threads (a GEMM
    and a dot path, of different sizes) each get their own product."""
    from concurrent.futures import ThreadPoolExecutor

    cases = []
    for lead, k, n in (((9,), 300, 70), ((1,), 520, 33)):
        ins, attrs = _case(rng, lead, k, n, 4, 64, zp=True, bias=True)
        attrs["accuracy_level"] = 0
        graph, feeds = one_op_graph("MatMulNBits", ins, attrs, constant=(1, 2, 3, 5))
        sess = Session(graph, backend="x86", fallback=False, threads=1)
        cases.append((sess, feeds, run_reference("MatMulNBits", ins, attrs)[0]))

    def work(case):
        sess, feeds, want = case
        for _ in range(30):
            np.testing.assert_allclose(sess.run(feeds)["out"], want, rtol=1e-4, atol=1e-4)

    with ThreadPoolExecutor(2) as pool:
        list(pool.map(work, cases * 2))
