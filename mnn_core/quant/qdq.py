"""ONNX QDQ models (onnxruntime.quantization.quantize_static, QuantFormat.QDQ) as int8 graphs.

A QDQ model computes in float between QuantizeLinear/DequantizeLinear pairs. Before import this
rewrites, on the ONNX graph itself (where the int8 weights are still int8):

- DequantizeLinear(x) and DequantizeLinear(int8 weight) [and DequantizeLinear(int32 bias)] into
  Conv, then [Relu or Clip(0, hi), when QuantizeLinear saturation computes it] then QuantizeLinear,
  into one QLinearConv;
- the same around MatMul (2-D constant weight) into QLinearMatMul, and around Gemm into a 1x1
  QLinearConv between two Reshapes (mnn's int8 fully connected layer, docs/QUANT.md);
- DequantizeLinear x2 -> Add [-> Relu] -> QuantizeLinear (per tensor) into one QLinearAdd (ONNX
  Runtime's com.microsoft op, which mnn imports);
- DequantizeLinear -> MaxPool/Flatten/Reshape/... -> QuantizeLinear with the same scale and zero
  point into the op on the int8 tensor;
- QuantizeLinear(DequantizeLinear(q)) with the same parameters into q.

Anything else stays as it was (and runs in float through the QDQ ops). QLinearConv/QLinearMatMul
models (QuantFormat.QOperator) need no rewrite.
"""

from __future__ import annotations

import numpy as np

PASSTHROUGH = ("MaxPool", "Flatten", "Reshape", "Squeeze", "Unsqueeze", "Transpose", "Identity")
_QMIN = {np.dtype("uint8"): 0, np.dtype("int8"): -128}


def fuse_qdq(proto):
    """The ModelProto with QDQ patterns turned into int8 ops (the argument is not modified)."""
    g = proto.graph
    if not any(n.op_type == "QuantizeLinear" and n.domain in ("", "ai.onnx") for n in g.node):
        return proto
    import onnx

    out = onnx.ModelProto()
    out.CopyFrom(proto)
    _Fuser(out.graph).run()
    if any(n.domain == "com.microsoft" for n in out.graph.node) and not any(
        o.domain == "com.microsoft" for o in out.opset_import
    ):
        out.opset_import.append(onnx.helper.make_opsetid("com.microsoft", 1))
    return out


class _Fuser:
    def __init__(self, graph):
        from onnx import numpy_helper

        self.g = graph
        self.nh = numpy_helper
        self.init = {t.name: t for t in graph.initializer}
        self.names = {o for n in graph.node for o in n.output} | set(self.init) | {i.name for i in graph.input}
        self.outputs = {o.name for o in graph.output}

    # -- helpers ------------------------------------------------------------------------------
    def arr(self, name: str):
        from ..convert.onnx_tensors import tensor_array  # (a damaged tensor: an MnnError naming it)

        t = self.init.get(name)
        return None if t is None else tensor_array(t)

    def add_init(self, base: str, value: np.ndarray) -> str:
        name, i = base, 0
        while name in self.names:
            i += 1
            name = f"{base}_{i}"
        self.names.add(name)
        t = self.nh.from_array(np.ascontiguousarray(value), name)
        self.g.initializer.append(t)
        self.init[name] = t
        return name

    def maps(self):
        prod = {o: n for n in self.g.node for o in n.output}
        users: dict[str, list] = {}
        for n in self.g.node:
            for i in n.input:
                users.setdefault(i, []).append(n)
        return prod, users

    def dq(self, name, prod, scalar=True):
        """(q, scale, zero point, axis) of a DequantizeLinear producing `name`, with constant parameters."""
        n = prod.get(name)
        while n is not None and n.op_type == "Identity":  # quantize_static shares a DequantizeLinear this way
            n = prod.get(n.input[0])
        if n is None or n.op_type != "DequantizeLinear" or n.domain not in ("", "ai.onnx"):
            return None
        s = self.arr(n.input[1])
        z = self.arr(n.input[2]) if len(n.input) > 2 and n.input[2] else None
        if s is None or (len(n.input) > 2 and n.input[2] and z is None) or (scalar and s.size != 1):
            return None
        axis = next((a.i for a in n.attribute if a.name == "axis"), 1)
        if any(a.name == "block_size" and a.i for a in n.attribute):
            return None
        return n.input[0], n.input[1], (n.input[2] if len(n.input) > 2 else ""), axis

    def single_q(self, name, users):
        """The QuantizeLinear that alone reads `name` (a constant scalar scale and zero point)."""
        us = users.get(name, [])
        if len(us) != 1 or name in self.outputs:
            return None
        q = us[0]
        if q.op_type != "QuantizeLinear" or len(q.input) < 3 or not q.input[2]:
            return None
        s, z = self.arr(q.input[1]), self.arr(q.input[2])
        if s is None or z is None or s.size != 1 or z.size != 1:
            return None
        return q

    # -- the rewrite ----------------------------------------------------------------------------
    def run(self) -> None:
        changed = True
        while changed:
            changed = False
            prod, users = self.maps()
            for node in list(self.g.node):
                if node.op_type in ("Conv", "Gemm", "MatMul") and self.layer(node, prod, users):
                    changed = True
                    break
                if node.op_type == "Add" and self.add(node, prod, users):
                    changed = True
                    break
                if node.op_type in PASSTHROUGH and self.passthrough(node, prod, users):
                    changed = True
                    break
        self.drop_requantize_pairs()
        self.drop_dead()

    def _out_q(self, node, users):
        """(QuantizeLinear, the Relu in between or None) after a layer."""
        y = node.output[0]
        q = self.single_q(y, users)
        if q is not None:
            return q, None
        us = users.get(y, [])
        if len(us) == 1 and us[0].op_type in ("Relu", "Clip") and y not in self.outputs:
            q = self.single_q(us[0].output[0], users)
            if q is not None and self._saturation_is(us[0], q):
                return q, us[0]
        return None, None

    def _saturation_is(self, act, q) -> bool:
        """Whether QuantizeLinear's saturation alone computes Q(act(v)): Relu/Clip(lo, hi) with lo <= 0 mapping
        to the zero point at the type's minimum, and Q(hi) saturating at the maximum."""
        zp, scale = self.arr(q.input[2]), self.arr(q.input[1])
        if zp.dtype not in _QMIN or int(zp.reshape(())) != _QMIN[zp.dtype]:
            return False
        if act.op_type == "Relu":
            return True
        lo = self.arr(act.input[1]) if len(act.input) > 1 and act.input[1] else None
        hi = self.arr(act.input[2]) if len(act.input) > 2 and act.input[2] else None
        attrs = {a.name: a.f for a in act.attribute}
        lo = float(lo.reshape(())) if lo is not None else attrs.get("min", -np.inf)
        hi = float(hi.reshape(())) if hi is not None else attrs.get("max", np.inf)
        qmax = 255 if zp.dtype == np.uint8 else 127
        q_hi = (
            np.rint(np.float32(hi) / np.float32(scale.reshape(()))) + float(zp.reshape(()))
            if np.isfinite(hi)
            else np.inf
        )
        return lo == 0.0 and q_hi >= qmax

    def layer(self, node, prod, users) -> bool:
        x = self.dq(node.input[0], prod)
        w = self.dq(node.input[1], prod, scalar=False) if len(node.input) > 1 else None
        if x is None or w is None:
            return False
        wq = self.arr(w[0])
        if wq is None or wq.dtype != np.int8:
            return False
        q, relu = self._out_q(node, users)
        if q is None:
            return False
        attrs = {a.name: a for a in node.attribute}
        sx, sw = self.arr(x[1]), self.arr(w[1])
        zw = self.arr(w[2]) if w[2] else np.zeros(sw.shape, np.int8)
        if node.op_type == "MatMul":
            if wq.ndim != 2 or (sw.size > 1 and w[3] not in (1, -1)):
                return False
            new = self._node(
                "QLinearMatMul",
                [x[0], x[1], x[2], w[0], w[1], w[2] or self.add_init("wzp", zw), q.input[1], q.input[2]],
                [q.output[0]],
                node.name,
            )
            self._replace(node, q, relu, [new])
            return True
        if node.op_type == "Gemm":
            if (
                any(attrs[k].i for k in ("transA",) if k in attrs)
                or any(k in attrs and attrs[k].f != 1.0 for k in ("alpha", "beta"))
                or wq.ndim != 2
            ):
                return False
            trans_b = attrs["transB"].i if "transB" in attrs else 0
            if sw.size > 1 and w[3] % 2 != (0 if trans_b else 1):
                return False  # scales not along the output channels
            wm = wq if trans_b else wq.T
            wm = wm.reshape(wm.shape + (1, 1))
        else:
            if wq.ndim != 4 or (sw.size > 1 and w[3] not in (0, -4)):
                return False
            wm = wq
        bias = self._bias(node, prod, sx, sw, wm.shape[0])
        if bias is False:
            return False
        wname = w[0] if wm is wq else self.add_init(f"{node.name}_weight_oihw", wm)
        ins = [x[0], x[1], x[2], wname, w[1], w[2] or self.add_init("wzp", zw), q.input[1], q.input[2]]
        if bias is not None:
            ins.append(bias)
        if node.op_type == "Conv":
            new = self._node("QLinearConv", ins, [q.output[0]], node.name, node.attribute)
            self._replace(node, q, relu, [new])
            return True
        m, k = wm.shape[:2]
        r1, r2 = (
            self.add_init(f"{node.name}_nk11", np.array([-1, k, 1, 1], np.int64)),
            self.add_init(f"{node.name}_nm", np.array([-1, m], np.int64)),
        )
        t1, t2 = self.fresh(f"{node.name}_x_nk11"), self.fresh(f"{node.name}_y_nm11")
        nodes = [
            self._node("Reshape", [x[0], r1], [t1], f"{node.name}_to_nchw"),
            self._node("QLinearConv", [t1] + ins[1:], [t2], node.name),
            self._node("Reshape", [t2, r2], [q.output[0]], f"{node.name}_to_nm"),
        ]
        self._replace(node, q, relu, nodes)
        return True

    def add(self, node, prod, users) -> bool:
        """DequantizeLinear x2 -> Add [-> Relu] -> QuantizeLinear, all per tensor, into one QLinearAdd."""
        a, b = (self.dq(i, prod) for i in node.input)
        if a is None or b is None or not a[2] or not b[2]:
            return False
        q, relu = self._out_q(node, users)
        if q is None or (relu is not None and relu.op_type != "Relu"):
            return False
        types = {self.arr(z).dtype for z in (a[2], b[2], q.input[2])}
        if len(types) != 1 or types.pop() not in _QMIN:
            return False
        new = self._node(
            "QLinearAdd", [a[0], a[1], a[2], b[0], b[1], b[2], q.input[1], q.input[2]], [q.output[0]], node.name
        )
        new.domain = "com.microsoft"
        self._replace(node, q, relu, [new])
        return True

    def _bias(self, node, prod, sx, sw, m):
        """The int32 bias (an initializer name), None without one, False when it is not constant."""
        if len(node.input) < 3 or not node.input[2]:
            return None
        unit = (np.float32(sx.reshape(())) * sw.astype(np.float32).reshape(-1)).astype(np.float32)
        b = self.dq(node.input[2], prod, scalar=False)
        if b is not None:
            bq, sb = self.arr(b[0]), self.arr(b[1])
            zb = self.arr(b[2]) if b[2] else None
            if bq is None:
                return False
            if (
                bq.dtype == np.int32
                and (zb is None or not zb.any())
                and np.array_equal(np.broadcast_to(sb.astype(np.float32).reshape(-1), unit.shape), unit)
            ):
                return b[0] if bq.size == m else self.add_init(f"{node.name}_bias_q", np.broadcast_to(bq, (m,)))
            bf = (bq.astype(np.float64) - (0 if zb is None else zb.astype(np.float64))) * sb.astype(np.float64)
        else:
            bf = self.arr(node.input[2])
            if bf is None:  # a float bias computed by the graph (or an Identity of a constant)
                return False
        bf = np.broadcast_to(np.asarray(bf, np.float64).reshape(-1), (m,))
        bint = np.clip(np.rint(bf / unit.astype(np.float64)), -(2**31), 2**31 - 1).astype(np.int32)
        return self.add_init(f"{node.name}_bias_q", bint)

    def passthrough(self, node, prod, users) -> bool:
        x = self.dq(node.input[0], prod)
        if x is None or len(node.output) != 1:
            return False
        q = self.single_q(node.output[0], users)
        if q is None:
            return False
        same = (
            np.array_equal(self.arr(x[1]), self.arr(q.input[1]))
            and x[2]
            and np.array_equal(self.arr(x[2]), self.arr(q.input[2]))
            and self.arr(x[2]).dtype == self.arr(q.input[2]).dtype
        )
        if not same:
            return False
        new = self._node(node.op_type, [x[0]] + list(node.input[1:]), [q.output[0]], node.name, node.attribute)
        self._replace(node, q, None, [new])
        return True

    def drop_requantize_pairs(self) -> None:
        """QuantizeLinear(DequantizeLinear(q)) with equal parameters is q."""
        prod, users = self.maps()
        rename = {}
        for n in self.g.node:
            if n.op_type != "QuantizeLinear" or n.output[0] in self.outputs:
                continue
            x = self.dq(n.input[0], prod)
            if x is None or len(n.input) < 3 or not x[2]:
                continue
            if (
                np.array_equal(self.arr(x[1]), self.arr(n.input[1]))
                and self.arr(n.input[2]) is not None
                and np.array_equal(self.arr(x[2]), self.arr(n.input[2]))
                and self.arr(x[2]).dtype == self.arr(n.input[2]).dtype
            ):
                rename[n.output[0]] = x[0]
        for n in self.g.node:
            for i, name in enumerate(n.input):
                if name in rename:
                    n.input[i] = rename[name]

    def drop_dead(self) -> None:
        while True:
            used = {i for n in self.g.node for i in n.input} | self.outputs
            keep = [i for i, n in enumerate(self.g.node) if any(o in used for o in n.output)]
            if len(keep) == len(self.g.node):
                break
            for i in sorted(set(range(len(self.g.node))) - set(keep), reverse=True):
                del self.g.node[i]
        used = {i for n in self.g.node for i in n.input}
        for i in reversed(range(len(self.g.initializer))):
            if self.g.initializer[i].name not in used and self.g.initializer[i].name not in self.outputs:
                del self.g.initializer[i]

    # -- node surgery ---------------------------------------------------------------------------------
    def fresh(self, base: str) -> str:
        name, i = base, 0
        while name in self.names:
            i += 1
            name = f"{base}_{i}"
        self.names.add(name)
        return name

    def _node(self, op, inputs, outputs, name, attributes=()):
        import onnx

        n = onnx.NodeProto()
        n.op_type, n.name = op, self.fresh(f"{name}_int8" if name else op)
        n.input.extend(inputs)
        n.output.extend(outputs)
        n.attribute.extend(list(attributes))
        return n

    def _replace(self, node, q, relu, new_nodes) -> None:
        """Put new_nodes where `node` was; drop node, the Relu and the QuantizeLinear."""
        import onnx

        def key(n):
            return n.op_type, tuple(n.output)

        drop = {key(node), key(q)} | ({key(relu)} if relu is not None else set())
        out = []
        for n in self.g.node:
            if key(n) == key(node):
                out.extend(new_nodes)
            if key(n) not in drop:
                c = onnx.NodeProto()
                c.CopyFrom(n)
                out.append(c)
        del self.g.node[:]
        self.g.node.extend(out)
