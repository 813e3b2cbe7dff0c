"""The "template" backend: what an mnn backend needs, and nothing more.

It claims four ops as data (KernelSpecs), prepares each placed op by creating
a C execution, and registers itself through the `mnn_register_backends` hook.
Everything it does not claim (or declines, like broadcasting Add) falls back.
"""

from __future__ import annotations

from mnn_core.backend import Backend, CExecution, DeviceInfo, KernelSpec, hookimpl

from . import _kernels


def _same_shapes(node, ins):
    return True if ins[0].shape == ins[1].shape else "only equal shapes (no broadcasting)"


class TemplateBackend(Backend):
    name = "template"

    def devices(self):
        return [DeviceInfo("scalar C", kind="cpu", peak_gflops=4.0, bandwidth_gbs=10.0, launch_us=0.2)]

    def kernels(self):
        return {
            "Relu": KernelSpec("Relu", inplace=True),
            "Add": KernelSpec("Add", supports=_same_shapes),
            "Mul": KernelSpec("Mul", supports=_same_shapes),
            "MatMul": KernelSpec(
                "MatMul",
                supports=lambda node, ins: (
                    len(ins[0].shape) == 2
                    and len(ins[1].shape) == 2
                    and node.attrs["activation"] == "none"
                    or "2-D without fused activation only"
                ),
            ),
        }

    def prepare(self, node, ins, outs, constants, ctx):
        kernel = _kernels.make(node.op)
        return CExecution(kernel.capsule(), owner=kernel, name=f"template.{node.op}")


@hookimpl
def mnn_register_backends(register):
    register(TemplateBackend())
