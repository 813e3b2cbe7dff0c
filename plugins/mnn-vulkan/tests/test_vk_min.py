"""The vendored Vulkan declarations (csrc/vk_min.h) match the Khronos header.

Every struct and enum value of vk_min.h is compiled twice, once against
vk_min.h and once against <vulkan/vulkan_core.h>, printing sizes, field
offsets and values; both must agree. Needs a C compiler and the Vulkan headers (libvulkan-dev)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import mnn_vulkan
import pytest

CSRC = os.path.join(os.path.dirname(mnn_vulkan.__file__), "csrc")
SYSTEM_HEADER = "/usr/include/vulkan/vulkan_core.h"
CC = shutil.which("cc") or shutil.which("gcc")


def _structs(text: str) -> dict[str, list[str]]:
    out = {}
    for name, body in re.findall(r"typedef struct (\w+) \{(.*?)\} \1;", text, re.S):
        fields = re.findall(r"(\w+)(?:\[[^\]]*\])?;", body)
        out[name] = fields
    return out


def _layout(tmp_path, include: str, structs: dict, enums: list, tag: str) -> str:
    lines = [include, "#include <stddef.h>", "#include <stdio.h>", "int main(void) {"]
    lines += [f'    printf("{e} %lld\\n", (long long){e});' for e in enums]
    for name, fields in structs.items():
        lines.append(f'    printf("{name} %zu\\n", sizeof({name}));')
        lines += [f'    printf("{name}.{f} %zu\\n", offsetof({name}, {f}));' for f in fields]
    lines += ["    return 0;", "}"]
    src, exe = tmp_path / f"{tag}.c", tmp_path / tag
    src.write_text("\n".join(lines))
    subprocess.run([CC, "-std=c11", "-I", CSRC, str(src), "-o", str(exe)], check=True, capture_output=True)
    return subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout


@pytest.mark.skipif(
    CC is None or not os.path.exists(SYSTEM_HEADER) or not os.path.exists(CSRC),
    reason="needs a C compiler and the Vulkan headers (apt-get install libvulkan-dev)",
)
def test_vendored_structs_match_the_khronos_header(tmp_path):
    with open(os.path.join(CSRC, "vk_min.h")) as f:
        text = f.read()
    structs = _structs(text)
    enums = [e for e in re.findall(r"^\s+(VK_\w+) = ", text, re.M) if not e.endswith("_MAX_ENUM")]
    assert len(structs) > 40 and len(enums) > 50
    ours = _layout(tmp_path, '#include "vk_min.h"', structs, enums, "ours")
    theirs = _layout(tmp_path, "#include <vulkan/vulkan_core.h>", structs, enums, "khronos")
    assert ours == theirs
