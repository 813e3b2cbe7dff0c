"""The ONNX node suite on mnn-vulkan: python -m mnn_core.conformance --backend vulkan.

python plugins/mnn-vulkan/tools/run_conformance.py --output CONFORMANCE_vulkan.md [conformance options]
"""

from __future__ import annotations

import sys


def main() -> int:
    from mnn_core.conformance import main as conformance_main

    sys.argv = [sys.argv[0], "--backend", "vulkan"] + sys.argv[1:]
    return conformance_main() or 0


if __name__ == "__main__":
    sys.exit(main())
