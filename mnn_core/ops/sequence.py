"""Sequence and optional values, with ONNX semantics.

A sequence is a Python list of arrays, an empty optional is None. These values live
outside the arena, so every op here is `dynamic`: a graph using them runs eagerly on
the reference backend (`mnn_core.graph.evaluate`). SequenceMap runs its body (a
closed sub-graph) once per element.
"""

from __future__ import annotations

import numpy as np

from ..errors import GraphError
from ..graph.ir import DTYPES, Graph, Node, OptionalInfo, SequenceInfo, TensorInfo, symbolic
from ._util import normalize_axis, rand
from .schema import Attr, OpSchema, Sample, register


def _seq_of(info, op: str) -> SequenceInfo:
    if not isinstance(info, SequenceInfo):
        raise GraphError(f"{op} takes a sequence, got {info}")
    return info


def _elem_info(seq: SequenceInfo, prefix: str) -> TensorInfo:
    if seq.elem is not None:
        return seq.elem
    return TensorInfo(symbolic(prefix, 0), seq.dtype)  # rank unknown: a scalar placeholder


def _merge(infos: list, dtype: str) -> SequenceInfo:
    """The sequence of these element infos: one shape if they agree, else only the dtype."""
    shapes = {i.shape for i in infos}
    return SequenceInfo(infos[0] if len(shapes) == 1 and infos else None, dtype)


def _position(pos, n: int, op: str, inserting: bool = False) -> int:
    p = int(np.asarray(pos).reshape(-1)[0])
    hi = n if inserting else n - 1
    if not -n <= p <= hi:
        raise GraphError(f"{op}: position {p} is out of range for a sequence of {n}")
    return p + n if p < 0 else p


def _construct_infer(ins, attrs):
    if not ins or any(not isinstance(i, TensorInfo) for i in ins):
        raise GraphError("SequenceConstruct takes one or more tensors")
    if len({i.dtype for i in ins}) != 1:
        raise GraphError(f"SequenceConstruct: tensors differ in dtype ({', '.join(i.dtype for i in ins)})")
    return [_merge(ins, ins[0].dtype)]


register(
    OpSchema(
        "SequenceConstruct",
        infer=_construct_infer,
        reference=lambda ins, attrs: [[np.asarray(x) for x in ins]],
        n_inputs=(1, 1 << 16),
        dynamic=True,
        doc="A sequence of the input tensors, in order.",
        samples=lambda rng: iter([Sample([rand(rng, 2, 3), rand(rng, 2, 3)]), Sample([rand(rng, 4)])]),
    )
)

register(
    OpSchema(
        "SequenceEmpty",
        infer=lambda ins, attrs: [SequenceInfo(None, attrs["dtype"])],
        reference=lambda ins, attrs: [[]],
        n_inputs=(0, 0),
        dynamic=True,
        attrs={"dtype": Attr("str", "float32", DTYPES)},
        doc="An empty sequence of dtype `dtype`.",
    )
)


def _at_infer(ins, attrs):
    return [_elem_info(_seq_of(ins[0], "SequenceAt"), "SequenceAt")]


register(
    OpSchema(
        "SequenceAt",
        infer=_at_infer,
        n_inputs=(2, 2),
        dynamic=True,
        reference=lambda ins, attrs: [ins[0][_position(ins[1], len(ins[0]), "SequenceAt")]],
        doc="The element at `position` (negative counts from the end).",
    )
)


def _insert_infer(ins, attrs):
    seq = _seq_of(ins[0], "SequenceInsert")
    if not isinstance(ins[1], TensorInfo) or ins[1].dtype != seq.dtype:
        raise GraphError(f"SequenceInsert: cannot insert {ins[1]} into {seq}")
    same = seq.elem is not None and seq.elem.shape == ins[1].shape
    return [SequenceInfo(seq.elem if same else None, seq.dtype)]


def _insert(ins, attrs):
    seq, x = list(ins[0]), np.asarray(ins[1])
    pos = len(seq) if len(ins) < 3 or ins[2] is None else _position(ins[2], len(seq), "SequenceInsert", True)
    seq.insert(pos, x)
    return [seq]


register(
    OpSchema(
        "SequenceInsert",
        infer=_insert_infer,
        reference=_insert,
        n_inputs=(2, 3),
        dynamic=True,
        doc="A new sequence with the tensor inserted at `position` (default: at the end).",
    )
)


def _erase(ins, attrs):
    seq = list(ins[0])
    if not seq:
        raise GraphError("SequenceErase: the sequence is empty")
    pos = len(seq) - 1 if len(ins) < 2 or ins[1] is None else _position(ins[1], len(seq), "SequenceErase")
    del seq[pos]
    return [seq]


register(
    OpSchema(
        "SequenceErase",
        infer=lambda ins, attrs: [_seq_of(ins[0], "SequenceErase")],
        reference=_erase,
        n_inputs=(1, 2),
        dynamic=True,
        doc="A new sequence without the element at `position` (default: the last).",
    )
)

register(
    OpSchema(
        "SequenceLength",
        infer=lambda ins, attrs: [_seq_of(ins[0], "SequenceLength") and TensorInfo((), "int64")],
        reference=lambda ins, attrs: [np.array(len(ins[0]), np.int64)],
        dynamic=True,
        doc="The number of elements, an int64 scalar.",
    )
)


def _split_infer(ins, attrs):
    x = ins[0]
    axis = normalize_axis(attrs["axis"], len(x.shape), "SplitToSequence")
    shape = list(x.shape)
    if len(ins) < 2 or ins[1] is None:
        if not attrs["keepdims"]:
            del shape[axis]
        else:
            shape[axis] = 1
        return [SequenceInfo(TensorInfo(tuple(shape), x.dtype), x.dtype)]
    return [SequenceInfo(None, x.dtype)]


def _split(ins, attrs):
    x = np.asarray(ins[0])
    axis = normalize_axis(attrs["axis"], x.ndim, "SplitToSequence")
    split = None if len(ins) < 2 or ins[1] is None else np.asarray(ins[1])
    n = x.shape[axis]
    if split is None:
        parts = np.split(x, n, axis=axis) if n else []
        return [[p if attrs["keepdims"] else np.squeeze(p, axis) for p in parts]]
    if split.ndim == 0:
        step = int(split)
        if step <= 0:
            raise GraphError(f"SplitToSequence: split must be positive, got {step}")
        cuts = list(range(step, n, step))
    else:
        sizes = [int(s) for s in split]
        if sum(sizes) != n or any(s < 0 for s in sizes):
            raise GraphError(f"SplitToSequence: split {sizes} does not add up to the axis size {n}")
        cuts = list(np.cumsum(sizes)[:-1])
    return [list(np.split(x, cuts, axis=axis))]


register(
    OpSchema(
        "SplitToSequence",
        infer=_split_infer,
        reference=_split,
        n_inputs=(1, 2),
        dynamic=True,
        attrs={"axis": Attr("int", 0), "keepdims": Attr("int", 1, (0, 1))},
        doc="Split along `axis` into a sequence: parts of `split` sizes, chunks of a scalar `split`, or "
        "single slices (squeezed when keepdims=0) without one.",
        samples=lambda rng: iter(
            [
                Sample([rand(rng, 5, 3)], {"axis": 0, "keepdims": 0}),
                Sample([rand(rng, 3, 7), np.int64(3)], {"axis": 1}),
                Sample([rand(rng, 6, 2), np.array([1, 2, 3], np.int64)], {"axis": 0}),
            ]
        ),
    )
)


def _concat_infer(ins, attrs):
    seq = _seq_of(ins[0], "ConcatFromSequence")
    elem = seq.elem
    if elem is None:
        return [TensorInfo(symbolic("ConcatFromSequence", 1), seq.dtype)]  # rank unknown without elements
    rank = len(elem.shape) + (1 if attrs["new_axis"] else 0)
    axis = normalize_axis(attrs["axis"], rank, "ConcatFromSequence")
    shape = list(elem.shape)
    if attrs["new_axis"]:
        shape.insert(axis, "ConcatFromSequence_n")
    else:
        shape[axis] = "ConcatFromSequence_n"
    return [TensorInfo(tuple(shape), seq.dtype)]


def _concat(ins, attrs):
    seq = [np.asarray(x) for x in ins[0]]
    if not seq:
        raise GraphError("ConcatFromSequence: the sequence is empty")
    if attrs["new_axis"]:
        return [np.stack(seq, axis=normalize_axis(attrs["axis"], seq[0].ndim + 1, "ConcatFromSequence"))]
    return [np.concatenate(seq, axis=normalize_axis(attrs["axis"], seq[0].ndim, "ConcatFromSequence"))]


register(
    OpSchema(
        "ConcatFromSequence",
        infer=_concat_infer,
        reference=_concat,
        dynamic=True,
        samples=lambda rng: iter(
            [
                Sample([[rand(rng, 2, 3), rand(rng, 4, 3)]], {"axis": 0}),
                Sample([[rand(rng, 2, 3), rand(rng, 2, 3)]], {"axis": -1, "new_axis": 1}),
            ]
        ),
        attrs={"axis": Attr("int"), "new_axis": Attr("int", 0, (0, 1))},
        doc="Concatenate the elements along `axis` (stack them on a new axis with new_axis=1).",
    )
)


# -- optionals ----------------------------------------------------------------------------------------


def _optional_infer(ins, attrs):
    if ins and ins[0] is not None:
        return [OptionalInfo(ins[0])]
    return [OptionalInfo(None)]


register(
    OpSchema(
        "Optional",
        infer=_optional_infer,
        reference=lambda ins, attrs: [ins[0] if ins else None],
        n_inputs=(0, 1),
        dynamic=True,
        doc="An optional holding the input, or an empty one without it.",
    )
)

register(
    OpSchema(
        "OptionalHasElement",
        infer=lambda ins, attrs: [TensorInfo((), "bool")],
        n_inputs=(0, 1),
        dynamic=True,
        reference=lambda ins, attrs: [np.array(bool(ins) and ins[0] is not None)],
        doc="True when the optional (or the optional input itself) holds a value.",
    )
)


def _get_infer(ins, attrs):
    info = ins[0]
    if isinstance(info, OptionalInfo):
        if info.elem is None:
            raise GraphError("OptionalGetElement of an optional whose element type is unknown")
        return [info.elem]
    return [info]


def _get(ins, attrs):
    if ins[0] is None:
        raise GraphError("OptionalGetElement: the optional is empty")
    return [ins[0]]


register(
    OpSchema(
        "OptionalGetElement",
        infer=_get_infer,
        reference=_get,
        dynamic=True,
        doc="The value an optional holds (an error when it is empty); a tensor or sequence passes through.",
    )
)


# -- SequenceMap: a body per element --------------------------------------------------------------------


def _map_infer(ins, attrs):
    body: Graph = attrs["body"]
    n_out = len(body.outputs)
    outs = body.infer()
    return [SequenceInfo(None, outs[o].dtype if isinstance(outs[o], TensorInfo) else "float32") for o in body.outputs][
        :n_out
    ]


def _map(ins, attrs):
    from ..graph.evaluate import evaluate

    body: Graph = attrs["body"]
    n_seq = len(ins) - attrs["num_captures"]
    seqs = [x for x in ins[:n_seq] if isinstance(x, list)]
    n = len(seqs[0]) if seqs else 0
    if any(len(s) != n for s in seqs):
        raise GraphError(f"SequenceMap: input sequences differ in length ({', '.join(str(len(s)) for s in seqs)})")
    names = list(body.inputs)
    results: list[list] = [[] for _ in body.outputs]
    for i in range(n):
        feeds = {}
        for k, (name, value) in enumerate(zip(names, ins)):
            feeds[name] = value[i] if k < n_seq and isinstance(value, list) else value
        out = evaluate(body, feeds)
        for r, name in zip(results, body.outputs):
            r.append(np.asarray(out[name]))
    return results


def _map_samples(rng):
    e = TensorInfo(("n",))
    body = Graph(inputs={"e": e, "w": TensorInfo(())}, outputs=["y"], nodes=[Node("Mul", ["e", "w"], ["y"])])
    yield Sample([[rand(rng, 2), rand(rng, 5)], rand(rng)], {"body": body, "num_captures": 1})


register(
    OpSchema(
        "SequenceMap",
        infer=_map_infer,
        samples=_map_samples,
        reference=_map,
        n_inputs=(1, 1 << 16),
        n_outputs=1 << 16,
        dynamic=True,
        attrs={
            "body": Attr("graph"),
            "num_captures": Attr("int", 0, doc="trailing inputs the body reads from outside"),
        },
        doc="Run `body` once per element of the input sequences (tensor inputs go to every run); each body "
        "output becomes a sequence.",
    )
)
