"""Host copies of float16 tensors (precision="low"): float32 is narrowed to float16 on
the way into the device and widened on the way back, in C (F16C where the CPU has it,
else a portable path: MNN_VULKAN_NO_F16C=1 forces that one, in a fresh interpreter).
Both must round exactly like numpy's float16 cast, through the mapping and the
staging buffer alike."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from vulkan_testing import needs_vulkan

pytestmark = needs_vulkan

CHECK = r"""
import sys
import numpy as np
from mnn_vulkan import _vulkan
from mnn_vulkan.device import choose

rng = np.random.default_rng(0)
special = np.array([0.0, -0.0, 1.0, -1.0, 65504.0, 65519.99, 65520.0, 65536.0, 1e9, -1e9, np.inf, -np.inf, np.nan,
                    2.0**-14, 2.0**-15, 2.0**-24, 2.0**-25, 2.0**-25 * 1.0001, 2.0**-26, 1e-30, -3e-6,
                    1.0 + 2.0**-11, 1.0 + 3 * 2.0**-11, 2049.0, 2051.0], np.float32)
scaled = rng.standard_normal(1001) * 10.0 ** rng.integers(-8, 5, 1001)
bits = rng.integers(0, 2**32, 3000, dtype=np.uint64).astype(np.uint32).view(np.float32)  # every class of float
x = np.concatenate([special, scaled.astype(np.float32), bits])
with np.errstate(over="ignore"):
    want = x.astype(np.float16)
dev = choose(None)
for mapped in ((True, False) if dev.host_shared else (False,)):
    buf = _vulkan.Buffer(dev.context, x.size * 2 + 64, mapped)
    buf.write(2, x, True)
    raw = np.empty(x.size, np.float16)
    buf.read(2, raw)
    same = (raw.view(np.uint16) == want.view(np.uint16)) | (np.isnan(raw) & np.isnan(want))
    assert same.all(), (mapped, x[~same][:5], raw[~same][:5], want[~same][:5])
    back = np.empty(x.size, np.float32)
    buf.read(2, back, True)
    np.testing.assert_array_equal(back, want.astype(np.float32))
print("ok")
"""


@pytest.mark.parametrize("portable", [False, True], ids=["native", "portable"])
def test_narrow_and_widen_round_like_numpy(portable):
    env = dict(os.environ, MNN_VULKAN_NO_F16C="1" if portable else "0")
    proc = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stderr[-3000:]
