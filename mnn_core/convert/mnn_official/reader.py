"""The Net table of an MNN model, op by op, into mnn's graph."""

from __future__ import annotations

import re

from ...errors import MnnFormatError
from ...graph.ir import Graph, TensorInfo
from . import ops_nn, ops_tensor  # noqa: F401  (registers the handlers)
from . import schema as S
from .context import Context
from .flatbuf import Buffer
from .record import HANDLERS, OpRecord

MAX_OPS = 1 << 20
MAX_TENSORS = 1 << 22


def _tensor_names(ctx: Context, net) -> list[str]:
    names = net.strings(S.NET["tensorName"], "tensorName")
    if len(names) > MAX_TENSORS:
        raise ctx.fail(f"{len(names)} tensors is past the limit of {MAX_TENSORS}")
    seen, out = set(), []
    for i, n in enumerate(names):
        n = n if n and n not in seen else f"t{i}"  # names are not promised unique or present
        seen.add(n)
        out.append(n)
    return out


def _record(ctx: Context, op, names: list[str], k: int) -> OpRecord:
    code = op.scalar(S.OP["type"], "int32")
    type_ = S.OP_TYPES.get(code, f"OpType {code}")
    param_code, param = op.union(S.OP["main_type"], f"op {k}'s parameter")

    def refs(field: str) -> list[str]:
        idx = op.ints(S.OP[field], f"op {k}'s {field}")
        bad = [i for i in idx if not -1 <= i < len(names)]
        if bad:
            raise ctx.fail(f"op {k} ({type_}) refers to tensor {bad[0]}, and the model has {len(names)}")
        return [names[i] if i >= 0 else "" for i in idx]

    name = op.string(S.OP["name"], f"op {k}'s name") or f"op{k}"
    return OpRecord(type_, S.PARAM_TYPES.get(param_code), param, refs("inputIndexes"), refs("outputIndexes"), name)


def _input(ctx: Context, op: OpRecord) -> None:
    dims, dtype = [], "float32"
    if op.param is not None and op.param_type == "Input":
        dims = op.p_ints(S.INPUT["dims"])
        dtype = S.DATA_TYPES.get(op.p_scalar(S.INPUT["dtype"], "int32", 1))
        if dtype is None:
            raise ctx.fail(f"input {op.outputs[0]!r} has a data type mnn does not hold")
    shape = tuple(d if d >= 0 else f"{re.sub(r'[^A-Za-z0-9_]', '_', op.outputs[0])}_d{i}" for i, d in enumerate(dims))
    ctx.add_input(op.outputs[0], TensorInfo(shape if dims else None, dtype))


def read_net(data: bytes, where: str) -> Graph:
    buf = Buffer(data, where)
    ctx = Context(where)
    try:
        net = buf.root()
        names = _tensor_names(ctx, net)
        if net.tables(S.NET["subgraphs"], "subgraphs"):
            raise ctx.fail("the model has subgraphs (control flow), which mnn does not read from MNN files")
        ops = net.tables(S.NET["oplists"], "oplists")
        if not ops or len(ops) > MAX_OPS:
            raise ctx.fail(f"{len(ops)} ops: not a model mnn can read")
        records = [_record(ctx, op, names, k) for k, op in enumerate(ops)]
        outputs = net.strings(S.NET["outputName"], "outputName")
    except RecursionError:
        raise buf.fail("tables nest too deep") from None
    if not outputs:  # outputs named nowhere: the values no op reads
        read = {i for r in records for i in r.inputs}
        outputs = [o for r in records for o in r.outputs if o not in read]
    ctx.graph.outputs = list(outputs)
    for op in records:
        if any(o == "" for o in op.outputs) or not op.outputs:
            raise ctx.fail(f"op {op.name!r} ({op.type}) has no output")
        if op.type == "Input":
            _input(ctx, op)
            continue
        missing = [i for i in op.inputs if i and i not in ctx.infos]
        if missing:
            raise ctx.fail(f"op {op.name!r} ({op.type}) reads {missing[0]!r} before any op writes it")
        handler = HANDLERS.get(op.type)
        if handler is None:
            raise ctx.fail(
                f"op {op.name!r} is {op.type}, which mnn does not read from MNN files (it reads: "
                f"{', '.join(sorted(set(HANDLERS)))})"
            )
        try:
            handler(ctx, op)
        except MnnFormatError:
            raise
        except (IndexError, ValueError, TypeError, KeyError, ArithmeticError) as exc:
            raise ctx.fail(f"op {op.name!r} ({op.type}) cannot be read: {exc}") from None
    unknown = [o for o in ctx.graph.outputs if o not in ctx.infos]
    if unknown:
        raise ctx.fail(f"output {unknown[0]!r} is written by no op")
    for o in ctx.graph.outputs:  # an output folded into a constant still needs a node to produce it
        if o in ctx.graph.initializers:
            raise ctx.fail(f"output {o!r} is a constant; mnn needs a model whose outputs follow its inputs")
    return ctx.graph
