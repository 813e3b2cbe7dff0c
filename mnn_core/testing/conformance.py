"""The machinery behind mnn_core.testing.BackendConformance."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..backend.plugins import get_plugins
from ..graph.ir import Graph, Node, TensorInfo
from ..ops import all_schemas, run_reference

#: ops whose inputs after the first are weights: constants, so backends may pre-pack them
WEIGHT_OPS = frozenset(
    {
        "Conv",
        "ConvTranspose",
        "Gemm",
        "MatMul",
        "BatchNormalization",
        "LayerNormalization",
        "InstanceNormalization",
        "DynamicQuantizeLSTM",
    }
)


@dataclass
class ConformanceCase:
    op: str
    index: int
    graph: Graph
    feeds: dict
    expected: list
    label: str

    @property
    def id(self) -> str:
        return f"{self.op}-{self.index}"


def one_node_graph(
    op: str, inputs: list, attrs: dict, constant=(), outputs=("out",), name: str | None = None
) -> tuple[Graph, dict]:
    """A graph of one `op` node and its feeds: input i is in{i} (None: an absent optional input), an
    initializer where i is in `constant`, else a graph input fed by that name."""
    graph = Graph(name=name or op)
    feeds = {}
    names = []
    for i, arr in enumerate(inputs):
        if arr is None:
            names.append("")
            continue
        names.append(f"in{i}")
        if i in constant:
            graph.initializers[names[-1]] = np.asarray(arr, order="C")
        else:
            graph.inputs[names[-1]] = TensorInfo(arr.shape, str(arr.dtype))
            feeds[names[-1]] = arr
    graph.nodes.append(Node(op, names, list(outputs), dict(attrs), op.lower()))
    graph.outputs = list(outputs)
    return graph, feeds


def conformance_graph(op: str, inputs: list, attrs: dict, constant_weights: bool = False) -> tuple[Graph, dict]:
    """The graph a conformance case runs: one_node_graph with every output the reference gives and,
    with `constant_weights`, every input after the first constant; at least one input stays a graph
    input so the op is not folded away."""
    n_out = len(run_reference(op, list(inputs), attrs))
    constant = range(1, len(inputs)) if constant_weights else ()
    outputs = [f"out{i}" for i in range(n_out)]
    graph, feeds = one_node_graph(op, inputs, attrs, constant, outputs, name=f"conformance_{op}")
    if not graph.inputs:
        first = graph.nodes[0].inputs[0]
        graph.inputs[first] = TensorInfo(inputs[0].shape, str(inputs[0].dtype))
        feeds[first] = graph.initializers.pop(first)
    return graph, feeds


#: ops with auto_pad, and where their window's kernel sizes come from (an input's shape, or kernel_shape)
SAME_PADDED = {
    "Conv": 1,
    "ConvInteger": 1,
    "QLinearConv": 3,
    "ConvTranspose": 1,
    "MaxPool": None,
    "AveragePool": None,
    "LpPool": None,
}


def explicit_same_pads(op: str, inputs: list, attrs: dict) -> dict | None:
    """`attrs` with auto_pad SAME_UPPER/SAME_LOWER replaced by the explicit pads the ONNX spec gives,
    worked out here rather than by the backend kit's geometry that both the reference and the
    backends use (a fault there would otherwise agree with itself). None where nothing applies."""
    mode = attrs.get("auto_pad", "NOTSET")
    if op not in SAME_PADDED or mode not in ("SAME_UPPER", "SAME_LOWER") or attrs.get("ceil_mode"):
        return None
    if attrs.get("output_padding") or attrs.get("output_shape"):
        return None  # ConvTranspose's output size then comes from these, not from SAME
    sizes = inputs[0].shape[2:]
    where = SAME_PADDED[op]
    kernel = list(attrs["kernel_shape"]) if where is None else list(inputs[where].shape[2:])
    strides = list(attrs.get("strides") or [1] * len(sizes))
    dilations = list(attrs.get("dilations") or [1] * len(sizes))
    begins, ends = [], []
    for size, k, s, d in zip(sizes, kernel, strides, dilations):
        extent = d * (k - 1) + 1
        if op == "ConvTranspose":  # the output is size * stride; pads crop the full output to it
            total = s * (size - 1) + extent - size * s
        else:  # the output is ceil(size / stride); pads make the last window fit
            total = max(0, (-(-size // s) - 1) * s + extent - size)
        begin = total // 2 if mode == "SAME_UPPER" else total - total // 2
        begins.append(begin)
        ends.append(total - begin)
    return {**attrs, "auto_pad": "NOTSET", "pads": begins + ends}


def conformance_cases(ops=None, seed: int = 0, deep: bool = True) -> list[ConformanceCase]:
    """Every sample of every (selected) op as a runnable one-node graph; `deep`: with deep_samples' cases
    past the GEMM blocking thresholds after each op's own."""
    from .deep_samples import deep_samples

    cases = []
    for op, schema in all_schemas().items():
        if ops is not None and op not in ops or schema.samples is None or schema.dynamic:
            continue  # (dynamic ops run eagerly on the reference kernels only: nothing to compare)
        rng = np.random.default_rng(seed)
        samples = list(schema.samples(rng))
        for sample in samples + (deep_samples(op, np.random.default_rng(seed)) if deep else []):
            variants = [op in WEIGHT_OPS] + ([False] if op == "MatMul" else [])
            for constant in variants:
                graph, feeds = conformance_graph(op, sample.inputs, sample.attrs, constant)
                explicit = explicit_same_pads(op, sample.inputs, sample.attrs)
                expected = run_reference(op, list(sample.inputs), explicit or sample.attrs)
                label = sample.label + (" (runtime weights)" if op == "MatMul" and not constant else "")
                label += " (judged with explicit pads)" if explicit else ""
                cases.append(ConformanceCase(op, len([c for c in cases if c.op == op]), graph, feeds, expected, label))
    return cases


def _tolerance(dtype, rtol, atol):
    return (rtol, atol) if np.issubdtype(np.dtype(dtype), np.floating) else (0, 0)


def run_case(
    case: ConformanceCase,
    backend: str,
    rtol: float = 1e-4,
    atol: float = 1e-5,
    options: dict | None = None,
    threads: int = 1,
    precision: str = "normal",
) -> str | None:
    """Run one case on `backend` (fallback off). Return a skip reason, or None when it
    ran and matched; raise AssertionError on a mismatch."""
    from ..errors import UnsupportedOpError
    from ..runtime.session import Session

    try:
        sess = Session(
            case.graph,
            backend=backend,
            fallback=False,
            optimize=False,
            options=options,
            threads=threads,
            precision=precision,
        )
        for attempt in range(2):  # twice: a kernel must not depend on leftover state
            outs = sess.run(dict(case.feeds))
            for name, want in zip(case.graph.outputs, case.expected):
                got = outs[name]
                assert got.shape == want.shape, f"{case.op} [{case.label}]: shape {got.shape}, want {want.shape}"
                assert got.dtype == want.dtype, f"{case.op} [{case.label}]: dtype {got.dtype}, want {want.dtype}"
                r, a = _tolerance(want.dtype, rtol, atol)
                np.testing.assert_allclose(
                    got, want, rtol=r, atol=a, err_msg=f"{case.op} [{case.label}] on {backend}, run {attempt + 1}"
                )
    except UnsupportedOpError as exc:
        return f"declined: {exc}"
    return None


class BackendConformance:
    """Subclass with `backend = "name"`; pytest collects one test per op sample."""

    backend: str = ""
    rtol: float = 1e-4
    atol: float = 1e-5
    options: dict = {}
    threads: int = 1
    precision: str = "normal"
    #: restrict to these ops (default: every op the backend claims)
    ops: tuple[str, ...] | None = None
    #: run only the first this many cases of each op (default: all); for suites that test plumbing, not kernels
    cases_per_op: int | None = None

    def pytest_generate_tests(self, metafunc):
        if "conformance_case" not in metafunc.fixturenames:
            return
        backend = get_plugins().backends.get(self.backend)
        if backend is None or not backend.availability():
            metafunc.parametrize("conformance_case", [None], ids=["unavailable"])
            return
        claimed = set(backend.kernels())
        ops = claimed if self.ops is None else claimed & set(self.ops)
        cases = conformance_cases(ops, deep=self.precision != "low")
        if self.cases_per_op is not None:
            cases = [c for c in cases if c.index < self.cases_per_op]
        metafunc.parametrize("conformance_case", cases, ids=[c.id for c in cases])

    def test_op_matches_reference(self, conformance_case):
        import pytest

        if conformance_case is None:
            backend = get_plugins().backends.get(self.backend)
            reason = backend.availability().reason if backend else "not installed"
            pytest.skip(f"backend {self.backend!r} unavailable: {reason}")
        reason = run_case(
            conformance_case, self.backend, self.rtol, self.atol, self.options, self.threads, self.precision
        )
        if reason:
            pytest.skip(reason)
