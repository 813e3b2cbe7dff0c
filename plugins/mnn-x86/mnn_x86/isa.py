"""Which instruction set the kernels use: cpuid, overridden by env or option.

Order of precedence: Session(options={"x86.isa": ...}), then the MNN_X86_ISA
environment variable, then the widest level this CPU runs. Asking for a level
the CPU lacks is an error that says so, never a SIGILL.
"""

from __future__ import annotations

import os
import platform

from mnn_core.errors import BackendError

#: narrowest first
ISAS = ("scalar", "avx2", "avx512")
ENV_VAR = "MNN_X86_ISA"
OPTION = "x86.isa"
_NEEDS = {"scalar": "nothing", "avx2": "AVX2 and FMA", "avx512": "AVX-512 F/BW/VL/DQ and FMA"}


def is_x86_machine() -> bool:
    return platform.machine().lower() in ("x86_64", "amd64", "i386", "i686", "x86")


def supported() -> tuple[str, ...]:
    """ISA levels this binary has and this CPU runs, narrowest first."""
    from . import _x86

    return tuple(isa for isa in ISAS if _x86.cpu_supports(isa))


def best() -> str:
    return supported()[-1]


def _check(isa: str, source: str) -> str:
    if isa not in ISAS:
        raise BackendError(f"x86: {source} is {isa!r}; expected one of {', '.join(ISAS)}")
    have = supported()
    if isa not in have:
        raise BackendError(
            f"x86: {source} asks for {isa}, but this CPU lacks {_NEEDS[isa]}; "
            f"it runs {', '.join(have)}. Choose one of those, or unset it to pick the best automatically"
        )
    return isa


def env_choice() -> str:
    """The level MNN_X86_ISA asks for (validated), else the best one."""
    value = os.environ.get(ENV_VAR, "").strip().lower()
    return _check(value, f"{ENV_VAR}={value}") if value else best()


def choose(options: dict | None = None) -> str:
    """The level for a session: its "x86.isa" option, else env_choice()."""
    value = (options or {}).get(OPTION)
    if value is not None and str(value).strip():
        return _check(str(value).strip().lower(), f"option {OPTION}={value!r}")
    return env_choice()


def max_threads() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1
