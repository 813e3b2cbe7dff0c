"""The ONNX node suite's command line: `python -m mnn_core.conformance --backend x86 ...` runs
mnn_core.convert.onnx_node_suite (importing this module gives that module, for one release)."""

import sys

from .convert import onnx_node_suite as _moved

if __name__ == "__main__":
    sys.exit(_moved.main())
sys.modules[__name__] = _moved
