"""Static view of the micro-kernels: the inner loops of the cross-compiled
path objects, with their instruction mix.

    plugins/mnn-arm/tests/harness/build.sh /tmp/hb && python plugins/mnn-arm/tools/inner_loops.py /tmp/hb

A loop is the span from a backward branch's target to the branch; loops with at
least 8 fmla (fp32, fp16) or sdot (int8_dot) and under 120 instructions are shown.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

OBJECTS = (("fp32.o", "fmla"), ("fp16.o", "fmla"), ("fp16h.o", "fmla"), ("int8_dot.o", "sdot"))


def instructions(obj: Path) -> list[tuple[int, str, str]]:
    out = subprocess.run(
        ["aarch64-linux-gnu-objdump", "-d", "--no-show-raw-insn", str(obj)], capture_output=True, text=True, check=True
    ).stdout
    found = []
    for line in out.splitlines():
        m = re.match(r"\s+([0-9a-f]+):\s+(\S+)\s*(.*)", line)
        if m:
            found.append((int(m.group(1), 16), m.group(2), m.group(3)))
    return found


def loops(obj: Path, mnemonic: str) -> set[tuple[int, int, tuple]]:
    insns = instructions(obj)
    result = set()
    for addr, op, args in insns:
        if not op.startswith("b") or op in ("bl", "blr", "br", "bic", "bif", "bit", "bsl"):
            continue
        target = re.match(r"([0-9a-f]+)\s", args.split(",")[-1].strip() + " ")
        if not target or int(target.group(1), 16) >= addr:
            continue
        body = [x[1] for x in insns if int(target.group(1), 16) <= x[0] <= addr]
        hits = body.count(mnemonic)
        if hits >= 8 and len(body) < 120:
            result.add((len(body), hits, tuple(Counter(body).most_common(8))))
    return result


def main() -> None:
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/hb")
    for name, mnemonic in OBJECTS:
        for size, hits, mix in sorted(loops(folder / name, mnemonic), key=lambda r: -r[1])[:3]:
            print(f"{name:11s} loop of {size:3d} instructions, {hits:2d} {mnemonic}: {dict(mix)}")


if __name__ == "__main__":
    main()
