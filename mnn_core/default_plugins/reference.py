"""The reference backend: every op, in numpy, written for clarity.

It is the oracle every other backend is tested against and the last resort of
fallback. Its kernels are the op schemas' `reference` functions; an execution
runs the kernel and copies the result into the arena-backed output arrays.
"""

from __future__ import annotations

import functools

import numpy as np

from ..backend import Backend, DeviceInfo, KernelSpec, PyExecution
from ..backend.hookspecs import hookimpl
from ..errors import BackendError
from ..graph.ir import DTYPES, LOW_PRECISION_DTYPES
from ..ops import all_schemas
from ..ops.lowp import run_widened


class ReferenceBackend(Backend):
    name = "reference"
    priority = -100  # chosen last when costs tie
    options = ()

    def devices(self):
        # numpy on one core: slow per call, modest throughput
        return [DeviceInfo(name="numpy", kind="cpu", peak_gflops=2.0, bandwidth_gbs=4.0, launch_us=20.0)]

    def kernels(self):
        return {op: KernelSpec(op, dtypes=DTYPES, efficiency=0.3) for op in all_schemas()}

    def prepare(self, node, ins, outs, constants, ctx):
        kernel = all_schemas()[node.op].reference
        attrs = node.attrs
        if any(i is not None and i.dtype in LOW_PRECISION_DTYPES for i in ins):
            kernel = functools.partial(run_widened, node.op, kernel)

        def run(inputs, outputs):
            results = kernel(inputs, attrs)
            for out, res in zip(outputs, results):
                if out.shape != res.shape:
                    raise BackendError(
                        f"reference kernel for {node.op} ({node.name}) produced shape {res.shape}, "
                        f"inference said {out.shape}"
                    )
                np.copyto(out, res, casting="unsafe")

        return PyExecution(run, name=f"reference.{node.op}")


@hookimpl
def mnn_register_backends(register):
    register(ReferenceBackend())
