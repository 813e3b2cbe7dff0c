"""The C kernel harness, cross-compiled for aarch64 and run under qemu-user on
three CPU models: cortex-a53 (ARMv8.0: fp32 and plain int8 only; the fp16 (and
fp16h: fp16 activations) and sdot paths must not be offered, and are never called), cortex-a76 (ARMv8.2
with asimdhp and asimddp: every path) and max (everything qemu emulates).

Runs on any Linux machine with gcc-aarch64-linux-gnu and qemu-user-static;
skipped with the reason otherwise (and needs no mnn-arm install)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

HARNESS = Path(__file__).parent / "harness"
CC = "aarch64-linux-gnu-gcc"
QEMU = "qemu-aarch64-static"

needs_cross = pytest.mark.skipif(
    shutil.which(CC) is None or shutil.which(QEMU) is None,
    reason=f"needs {CC} and {QEMU} (apt-get install gcc-aarch64-linux-gnu qemu-user-static)",
)


@pytest.fixture(scope="module")
def harness(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("arm-harness")
    proc = subprocess.run(["bash", str(HARNESS / "build.sh"), str(out)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"cross build failed:\n{proc.stdout}\n{proc.stderr}"
    return out / "harness"


#: -cpu model -> (has asimdhp, has asimddp)
CPUS = {"cortex-a53": (0, 0), "cortex-a72": (0, 0), "cortex-a76": (1, 1), "neoverse-n1": (1, 1), "max": (1, 1)}


@needs_cross
@pytest.mark.parametrize("cpu", ["cortex-a53", "cortex-a76", "max"])
def test_kernels_on_emulated_cpu(harness, cpu):
    fp16, dot = CPUS[cpu]
    proc = subprocess.run(
        [QEMU, "-cpu", cpu, str(harness), "--expect-fp16", str(fp16), "--expect-dot", str(dot)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"harness failed on -cpu {cpu} (rc {proc.returncode}):\n{out}"
    summary = re.search(r"harness: (\d+) checks, 0 failed", out)
    assert summary, out
    ran = {p for p in ("fp32", "fp16", "fp16h", "int8", "int8_dot") if re.search(rf"^ok\s+{p} ", out, re.M)}
    want = {"fp32", "int8"} | ({"fp16", "fp16h"} if fp16 else set()) | ({"int8_dot"} if dot else set())
    assert ran == want, f"-cpu {cpu}: paths run {sorted(ran)}, expected {sorted(want)}\n{out}"


@needs_cross
def test_fp16_and_sdot_paths_are_not_offered_on_armv8_0(harness):
    """Telling the harness to expect fp16 on a Cortex-A53 must fail: proves the check can fail."""
    proc = subprocess.run(
        [QEMU, "-cpu", "cortex-a53", str(harness), "--expect-fp16", "1"], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 1
    assert "FAIL dispatch: offers fp16" in proc.stdout
