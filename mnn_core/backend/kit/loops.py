"""Mesa's software drivers' loop budget. llvmpipe (OpenGL) and lavapipe (Vulkan) compile shaders
with gallivm, which ends loops without a word once one invocation has made 65535 loop passes in
all: the count is shared by every loop of the shader, nested or one after another (the pass that
leaves a loop counts; loops of a constant trip count are unrolled and do not). After it runs out
each further loop makes one pass. A kernel whose loops follow the data therefore either shares a
long loop among a work group's invocations (`group_size`) or declines what would still run past
the budget (`LoopBudget.budgeted`). GPU drivers and PoCL (OpenCL) have no such limit."""

from __future__ import annotations

from typing import Any, Callable

from ...errors import BackendError

LLVMPIPE_LOOP_PASSES = 65535
#: passes kept back for the short fixed loops around a kernel's long one (dims, tree steps)
MARGIN = 1024
#: a loop this long runs in one invocation; a longer one is shared by a work group
SHORT_LOOP = 4096


def budget_of(device_name: str | None) -> int | None:
    """The loop passes one invocation may make on the device of this name (a GL renderer or a
    Vulkan device name: lavapipe calls itself "llvmpipe (LLVM ...)"), or None where unlimited."""
    return LLVMPIPE_LOOP_PASSES - MARGIN if device_name and "llvmpipe" in device_name.lower() else None


def group_size(count: int) -> int:
    """Invocations that share one loop of `count` passes: one where it is short, so many outputs
    fill the device; 64 or 256 where one invocation alone would loop too long."""
    return 1 if count <= SHORT_LOOP else 64 if count <= 64 * SHORT_LOOP else 256


def group_passes(count: int, per_pass: int = 1) -> int:
    """Loop passes of one invocation of a group sharing `count` passes (`per_pass` each)."""
    return -(-count // group_size(count)) * per_pass


class LoopBudget:
    """A backend's loop budget: `device_name()` names its default device (a GL renderer, a Vulkan
    device name), None or a BackendError where there is none (then there is no budget either)."""

    def __init__(self, device_name: Callable[[], str | None]) -> None:
        self.device_name = device_name

    def passes(self) -> int | None:
        """The loop passes one invocation may make on the default device, or None where unlimited."""
        try:
            name = self.device_name()
        except BackendError:
            return None
        return budget_of(name)

    def within(self, passes: int, what: str) -> bool | str:
        """True where one invocation's `passes` loop passes run to the end here, else the reason."""
        budget = self.passes()
        if budget is None or passes <= budget:
            return True
        return (
            f"{what} takes {passes} loop passes in one invocation, past llvmpipe's {LLVMPIPE_LOOP_PASSES} "
            "(it would end the loops early without an error)"
        )

    def budgeted(self, supports: Callable | None, passes: Callable[..., int]) -> Callable:
        """`supports`, then the loop budget: `passes(node, ins)` counts one invocation's loop passes."""

        def check(node: Any, ins: Any) -> bool | str:
            found = supports(node, ins) if supports is not None else True
            return found if found is not True else self.within(passes(node, ins), f"this {node.op}")

        return check
