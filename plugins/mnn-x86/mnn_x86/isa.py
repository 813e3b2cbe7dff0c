"""Which instruction set the kernels use: cpuid, overridden by env or option.

Order of precedence: Session(options={"x86.isa": ...}), then the MNN_X86_ISA
environment variable, then the widest level this CPU runs. Asking for a level
the CPU lacks is an error that says so, never a SIGILL.
"""

from __future__ import annotations

import functools
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


#: the AVX-512 fp32 GEMM's register tile, per process: 14x32 where the core has two 512-bit FMA
#: units (Intel's server cores, Zen 5: a tile twice as tall halves the B loads per FMA; whole models
#: 3-8 % faster on this project's Intel VM, 5-20 % on its Zen 5 one), 6x32 where a 512-bit FMA costs
#: two 256-bit ones (Zen 4 splits it in halves, and there the smaller tile's per-tile work won:
#: vec_avx512.h). csrc/dispatch.c decides with a probe that times both widths of FMA (about 0.5 ms,
#: once per process: _x86.fma512_cost_ratio); this variable overrides it. 8x48 is the tile
#: single layers get under 14x32 (few rows, many columns: _x86.pyx, T8_*); as the process' tile it
#: is there to test and compare, every kernel compiled with it.
TILE_ENV = "MNN_X86_AVX512_TILE"
TILES = {"auto": 0, "6x32": 6, "14x32": 14, "8x48": 8}


def apply_tile_env() -> None:
    """Set the AVX-512 tile from MNN_X86_AVX512_TILE (6x32, 14x32, 8x48, or auto: by the FMA probe)."""
    from . import _x86

    value = os.environ.get(TILE_ENV, "").strip().lower() or "auto"
    if value not in TILES:
        raise BackendError(f"x86: {TILE_ENV}={value!r}; expected one of {', '.join(TILES)}")
    _x86.set_avx512_rows(TILES[value])


#: what l3_cache_bytes() says where the kernel does not tell (a common size of one CCX's or socket's L3)
DEFAULT_L3_BYTES = 32 << 20


@functools.cache
def l3_cache_bytes() -> int:
    """The last-level (L3) cache of the CPU this process runs on, from sysfs (glibc's sysconf reads
    cpuid, which a VM may fill with the host's figure: 320 MB on this project's 32 MB Zen 4 VM)."""
    base = "/sys/devices/system/cpu/cpu0/cache"
    try:
        for index in sorted(os.listdir(base)):
            with open(f"{base}/{index}/level") as f:
                if f.read().strip() != "3":
                    continue
            with open(f"{base}/{index}/size") as f:
                size = f.read().strip().upper()
            scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(size[-1:], 1)
            return int(size.rstrip("KMG")) * scale
    except (OSError, ValueError):
        pass
    return DEFAULT_L3_BYTES


def max_threads() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1
