"""The ONNX importer's bodies: ops ONNX defines by a function (inlined), If branches inlined in
place, and Loop/Scan/If bodies imported as closed sub-graphs. A mixin of the importer (onnx_import.py),
whose state (values, constants, problems) the methods share."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from ..graph.ir import Graph, OptionalInfo, SequenceInfo, TensorInfo
from .onnx_common import DEFAULT_DOMAIN, NodeUnsupported, OnnxImportError, require_onnx

if TYPE_CHECKING:
    from .onnx_import import OnnxNode

MAX_FUNCTION_DEPTH = 8


class _Reported(Exception):
    """A node whose problems (inside its sub-graph, or upstream) are already on the list."""


class BodyImport:
    """Function inlining and sub-graph import, mixed into the importer."""

    # -- functions: ops ONNX defines by a body of other ops --------------------------------

    def _function(self, proto, opset: int):
        domain = proto.domain or DEFAULT_DOMAIN
        local = self.functions.get((proto.domain, proto.op_type))
        if local is not None:
            return local
        onnx = require_onnx("inlining ONNX functions")
        try:
            schema = onnx.defs.get_schema(proto.op_type, opset, "" if domain == DEFAULT_DOMAIN else domain)
        except Exception:
            return None
        if schema.has_function or schema.has_context_dependent_function:
            return schema
        return None

    def _inline_function(self, node: OnnxNode, depth: int) -> bool:
        if depth >= MAX_FUNCTION_DEPTH:
            raise NodeUnsupported("function bodies nest too deeply")
        fn = self._function(node.proto, node.opset)
        if fn is None:
            return False
        onnx = require_onnx("inlining ONNX functions")
        if isinstance(fn, onnx.FunctionProto):
            body, formal_in, formal_out = fn, list(fn.input), list(fn.output)
            opsets = {(o.domain or DEFAULT_DOMAIN): o.version for o in fn.opset_import}
        else:
            body = self._schema_function(onnx, fn, node)
            if not body.node:
                return False
            formal_in = list(body.input)
            formal_out = list(body.output)
            opsets = {(o.domain or DEFAULT_DOMAIN): o.version for o in body.opset_import}
        opsets = {**self.opsets, **opsets}
        prefix = f"{node.name}/"
        mapping = {f: (node.inputs[i] if i < len(node.inputs) else "") for i, f in enumerate(formal_in)}
        mapping.update(
            {
                f: (node.outputs[i] if i < len(node.outputs) else self.fresh(prefix + f))
                for i, f in enumerate(formal_out)
            }
        )
        self.scopes.append(mapping)  # an If branch in the body may read the body's values
        try:
            self._inline_body(onnx, fn, body, node, mapping, opsets, prefix, depth)
        finally:
            self.scopes.pop()
        for i, out in enumerate(node.outputs):
            if i < len(formal_out) and mapping[formal_out[i]] != out:
                self.rename[out] = mapping[formal_out[i]]
        return True

    def _inline_body(self, onnx, fn, body, node, mapping, opsets, prefix, depth) -> None:
        attr_values = {a.name: a for a in node.proto.attribute}
        if isinstance(fn, onnx.FunctionProto):
            defaults = {a.name: a for a in fn.attribute_proto}
        else:
            defaults = {k: a.default_value for k, a in fn.attributes.items() if a.default_value.type}
        for inner in body.node:
            sub = onnx.NodeProto()
            sub.CopyFrom(inner)
            for i, v in enumerate(sub.input):
                sub.input[i] = mapping.setdefault(v, self.fresh(prefix + v)) if v else ""
            for i, v in enumerate(sub.output):
                sub.output[i] = mapping.setdefault(v, self.fresh(prefix + v)) if v else ""
            _bind_attribute_refs(onnx, sub, attr_values, defaults)
            sub.name = f"{prefix}{inner.name or inner.op_type}"
            self.import_node(sub, opsets, prefix, depth + 1)

    def inline_graph(self, node: OnnxNode, body, depth: int = 0) -> None:
        """Import a sub-graph (an If branch) in place: its own values renamed, outer ones shared."""
        prefix = f"{node.name}/"
        mapping: dict[str, str] = {}
        for tensor in body.initializer:
            mapping[tensor.name] = self.fresh(prefix + tensor.name)
            self.consts[mapping[tensor.name]] = self._tensor(tensor)
        for sparse in body.sparse_initializer:
            mapping[sparse.values.name] = self.fresh(prefix + sparse.values.name)
            self.consts[mapping[sparse.values.name]] = self._sparse(sparse)
        onnx = require_onnx("inlining ONNX sub-graphs")
        self.scopes.append(mapping)
        try:
            self._inline_branch(onnx, body, mapping, prefix, depth)
        finally:
            self.scopes.pop()
        for out, inner in zip(node.outputs, body.output):
            src = self.resolve(mapping.get(inner.name) or self._outer_name(inner.name))
            if src in self.consts:
                self.consts[out] = self.consts[src]
            else:
                self.rename[out] = src

    def _inline_branch(self, onnx, body, mapping: dict, prefix: str, depth: int) -> None:
        for inner in body.node:
            sub = onnx.NodeProto()
            sub.CopyFrom(inner)
            for i, v in enumerate(sub.input):
                sub.input[i] = mapping.get(v) or self._outer_name(v)
            for i, v in enumerate(sub.output):
                if v:
                    mapping[v] = self.fresh(prefix + v)
                    sub.output[i] = mapping[v]
            sub.name = f"{prefix}{inner.name or inner.op_type}"
            self.import_node(sub, prefix=prefix, depth=depth + 1)

    def import_subgraph(self, body, formal: list, where: str) -> tuple[Graph, list[str]]:
        """A control-flow body as a closed mnn Graph, and the outer values it reads.

        `formal` gives the info of each of the body's own inputs (None: as the body declares).
        What the body reads from enclosing scopes becomes trailing graph inputs (constants are
        bound instead); the returned names are the outer values to pass as the node's trailing
        inputs, in that order. Problems inside the body are reported as this model's problems."""
        onnx = require_onnx("importing ONNX sub-graphs")
        free = _free_names(body)
        captures, bound, infos = [], {}, {}
        for inner in free:
            outer = self.resolve(self._outer_name(inner))
            if outer in self.unknown:
                raise _Reported()  # its producer's problem is reported already
            if outer in self.consts:
                bound[inner] = self.consts[outer]
                continue
            captures.append((inner, outer))
            infos[inner] = self.info(outer)
        sub = onnx.GraphProto()
        sub.CopyFrom(body)
        del sub.input[:]
        for value, info in zip(body.input, formal):
            sub.input.append(self._value_info_proto(onnx, value.name, info) if info is not None else value)
        for inner, _ in captures:
            sub.input.append(self._value_info_proto(onnx, inner, infos[inner]))
        for inner in bound:
            sub.input.append(onnx.helper.make_empty_tensor_value_info(inner))
        model = onnx.ModelProto()
        model.ir_version = self.proto.ir_version or 8
        model.opset_import.extend(self.proto.opset_import)
        model.functions.extend(self.proto.functions)
        model.graph.CopyFrom(sub)
        model.graph.name = where
        importer = type(self)(model, f"{self.source} ({where})", {}, bound)
        importer.eager = True
        importer.budget = self.budget
        try:
            graph = importer.run()
        except OnnxImportError as exc:
            # (values a body's problems need are the body's own, never this graph's inputs)
            self.problems.extend(dataclasses.replace(u, needs=()) for u in exc.unsupported)
            raise _Reported() from None
        return graph, [outer for _, outer in captures]

    def _value_info_proto(self, onnx, name: str, info):
        tp = onnx.TypeProto()
        self._fill_type(tp, info, name)
        vi = onnx.ValueInfoProto()
        vi.name = name
        vi.type.CopyFrom(tp)
        return vi

    def _fill_type(self, tp, info, name: str) -> None:
        from .onnx_common import numpy_to_onnx

        if isinstance(info, TensorInfo):
            tp.tensor_type.elem_type = numpy_to_onnx(info.dtype)
            if info.shape is None:
                return  # rank unknown: no shape
            shape = tp.tensor_type.shape
            shape.SetInParent()
            for i, d in enumerate(info.shape):
                dim = shape.dim.add()
                if isinstance(d, str):
                    dim.dim_param = d if d != "?" else f"{name}[{i}]"
                else:
                    dim.dim_value = int(d)
        elif isinstance(info, SequenceInfo):
            elem = tp.sequence_type.elem_type
            if info.elem is not None:
                self._fill_type(elem, info.elem, name)
            else:
                elem.tensor_type.elem_type = numpy_to_onnx(info.dtype)
        elif isinstance(info, OptionalInfo):
            self._fill_type(tp.optional_type.elem_type, info.elem, name)

    def declared_info(self, value, outer: str):
        """A body input's info as its ValueInfoProto declares it (unknown sizes as symbols), or
        when it declares no shape, the info of the outer value that feeds it."""
        tp = value.type
        if tp.WhichOneof("value") == "tensor_type" and tp.tensor_type.HasField("shape") and tp.tensor_type.elem_type:
            try:
                info = self._value_kind(tp, value.name)
            except NodeUnsupported:
                info = None
            if isinstance(info, TensorInfo):
                return info
        return self.value_info(outer)

    def value_info(self, name: str):
        """The info of a value for a body's formal input (dynamic sizes as their symbols)."""
        return self.info(name)

    def _outer_name(self, name: str) -> str:
        """A name a sub-graph reads from its enclosing function body (or the graph itself)."""
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return name

    def _schema_function(self, onnx, schema, node: OnnxNode):
        # a body written for a later opset still defines this op version (same schema)
        versions = list(
            schema.function_opset_versions if schema.has_function else schema.context_dependent_function_opset_versions
        )
        older = [v for v in versions if v <= node.opset]
        version = max(older) if older else min(versions, default=node.opset)
        if schema.has_function:
            raw = schema.get_function_with_opset_version(version)
            if isinstance(raw, bytes):
                fn = onnx.FunctionProto()
                fn.ParseFromString(raw)
                return fn
            return raw
        types = []
        for name in node.inputs:
            tp = onnx.TypeProto()
            if name:
                dtype = self.dtype(name)
                from .onnx_common import numpy_to_onnx

                tp.tensor_type.elem_type = numpy_to_onnx(dtype)
                shape = self.info(name).shape
                for d in shape if shape is not None else ():
                    dim = tp.tensor_type.shape.dim.add()
                    if isinstance(d, str):
                        dim.dim_param = str(d)
                    else:
                        dim.dim_value = d
            types.append(tp.SerializeToString())
        raw = schema.get_context_dependent_function_with_opset_version(version, node.proto.SerializeToString(), types)
        fn = onnx.FunctionProto()
        fn.ParseFromString(raw if isinstance(raw, bytes) else raw.SerializeToString())
        return fn


def _free_names(body) -> list[str]:
    """Names a GraphProto reads but does not define (from enclosing scopes), nested bodies included."""
    from onnx import AttributeProto

    defined = {v.name for v in body.input} | {t.name for t in body.initializer}
    defined |= {t.values.name for t in body.sparse_initializer}
    free: list[str] = []

    def read(name):
        if name and name not in defined and name not in free:
            free.append(name)

    for node in body.node:
        for name in node.input:
            read(name)
        for attr in node.attribute:
            inner = [attr.g] if attr.type == AttributeProto.GRAPH else list(attr.graphs)
            for g in inner:
                for name in _free_names(g):
                    read(name)
        defined.update(o for o in node.output if o)
    for value in body.output:
        read(value.name)
    return free


def _bind_attribute_refs(onnx, node, values: dict, defaults: dict) -> None:
    """Replace attributes that refer to the calling node's (ref_attr_name) by their values."""
    kept = []
    for attr in node.attribute:
        if attr.ref_attr_name:
            src = values.get(attr.ref_attr_name) or defaults.get(attr.ref_attr_name)
            if src is None or not src.type:
                continue  # not given and no default: the attribute is absent
            new = onnx.AttributeProto()
            new.CopyFrom(src)
            new.name = attr.name
            kept.append(new)
        else:
            kept.append(attr)
    del node.attribute[:]
    node.attribute.extend(kept)
