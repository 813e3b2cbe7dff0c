"""Which kernel path a session uses, from the CPU's hardware capabilities.

Float ops: fp16 when the session asks for precision="low" and the CPU reports
asimdhp (getauxval(AT_HWCAP)); fp32 otherwise. Int8 ops: the sdot path when
the CPU reports asimddp, else the plain NEON int8 path. The option
"arm.path" (or MNN_ARM_PATH) forces a float path; asking for one the CPU
lacks is an error that says so, never a SIGILL.
"""

from __future__ import annotations

import os
import platform

from mnn_core.errors import BackendError

FLOAT_PATHS = ("fp32", "fp16")
OPTION = "arm.path"
ENV_VAR = "MNN_ARM_PATH"
_NEEDS = {"fp16": "asimdhp (ARMv8.2 half-precision arithmetic)", "int8_dot": "asimddp (the sdot instruction)"}


def is_arm_machine() -> bool:
    return platform.machine().lower() in ("aarch64", "arm64")


def runnable(path: str) -> bool:
    from . import _arm

    return _arm.runnable(path)


def supported() -> tuple[str, ...]:
    return tuple(p for p in ("fp32", "fp16", "int8", "int8_dot") if runnable(p))


def float_path(precision: str = "normal", options: dict | None = None) -> str:
    value = (options or {}).get(OPTION) or os.environ.get(ENV_VAR, "")
    value = str(value).strip().lower()
    if value:
        if value not in FLOAT_PATHS:
            raise BackendError(f"arm: {OPTION}={value!r}; expected one of {', '.join(FLOAT_PATHS)}")
        if not runnable(value):
            raise BackendError(f"arm: {OPTION}={value!r}, but this CPU lacks {_NEEDS[value]}; use fp32")
        return value
    return "fp16" if precision == "low" and runnable("fp16") else "fp32"


WINOGRAD_OPTION = "arm.winograd"
WINOGRAD_ENV_VAR = "MNN_ARM_WINOGRAD"
_ON, _OFF = ("1", "on", "true", "yes"), ("0", "off", "false", "no")


def winograd_setting(options: dict | None = None) -> str:
    """The Winograd setting from option "arm.winograd" or MNN_ARM_WINOGRAD: "auto" (default: F(2x2, 3x3)
    where it is cheaper), "on" (wherever it applies) or "off"."""
    value = (options or {}).get(WINOGRAD_OPTION)
    if value is None:
        value = os.environ.get(WINOGRAD_ENV_VAR, "")
    value = str(value).strip().lower()
    if value in ("", "auto"):
        return "auto"
    if value in _ON:
        return "on"
    if value in _OFF:
        return "off"
    raise BackendError(f"arm: {WINOGRAD_OPTION}={value!r}; expected auto, on or off")


def int8_path() -> str:
    return "int8_dot" if runnable("int8_dot") else "int8"
