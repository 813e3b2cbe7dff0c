"""The compute shaders: GLSL sources in `shaders/`, compiled by the driver at first use.

A shader is `shaders/NAME.comp`; `#include "x.glsl"` lines are expanded here
(GLSL has no include), from `shaders/` or else from the backend kit's shared
sources (act.glsl: the activation and unary-math codes every GPU backend
applies alike). The version line is chosen per context (`#version 310 es` with
highp defaults, or `#version 430 core`), then the compile-time defines
(work-group size LOCAL_X/LOCAL_Y and any shader switches), then common.glsl,
then the source. The shaders in WORD_SHADERS see the arena as uint words
(ARENA_UINT): they move or compare bits (ints, bools, int64 halves), which a
float view could flush or canonicalize.
"""

from __future__ import annotations

import functools
import os
import re

from mnn_core.backend.kit.spirv import SHADER_DIR as KIT_SHADER_DIR

SHADER_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "shaders")
_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"\s*$', re.M)
WORD_SHADERS = frozenset(
    {
        "argreduce",
        "cast",
        "compare",
        "conv_int",
        "dq_lstm_step",
        "dq_lstm_x",
        "dq_range",
        "copy",
        "gather",
        "gather_elements",
        "gather_nd",
        "ibinary",
        "matmul_int",
        "ml_linear",
        "ml_trees",
        "onehot",
        "quantize",
        "scatter_elements",
        "scratch_copy",
        "where",
    }
)
SCRATCH_SHADERS = frozenset(
    {"dq_lstm_step", "dq_lstm_x", "dq_range", "rnn_step", "scratch_copy"}
)  # they keep state in the recorder's scratch words
HEADERS = {True: "#version 310 es\nprecision highp float;\nprecision highp int;\n", False: "#version 430 core\n"}


def names() -> list[str]:
    return sorted(f[:-5] for f in os.listdir(SHADER_DIR) if f.endswith(".comp"))


@functools.cache
def _text(filename: str, depth: int = 0) -> str:
    if depth > 8:
        raise ValueError(f"shader include nesting too deep at {filename}")
    path = os.path.join(SHADER_DIR, filename)
    if not os.path.isfile(path) and filename.endswith(".glsl"):
        path = os.path.join(KIT_SHADER_DIR, filename)
    try:
        with open(path) as f:
            text = f.read()
    except FileNotFoundError:
        raise FileNotFoundError(f"no shader source {filename} at {path}; reinstall mnn-opengl (or mnn-core)") from None
    return _INCLUDE.sub(lambda m: _text(m.group(1), depth + 1), text)


def source(name: str, defines: tuple = (), gles: bool = True) -> str:
    """The full source of shader `name` for a context: version, defines, common code, body.
    `defines` holds (NAME, value) pairs; LOCAL_X and LOCAL_Y default to 64 and 1."""
    values = {"LOCAL_X": 64, "LOCAL_Y": 1}
    if name in WORD_SHADERS:
        values["ARENA_UINT"] = 1
    if name in SCRATCH_SHADERS:
        values["PARAMS_RW"] = 1
    values.update(dict(defines))
    lines = [HEADERS[bool(gles)]] + [f"#define {k} {v}\n" for k, v in values.items()]
    return "".join(lines) + _text("common.glsl") + "#line 1\n" + _text(f"{name}.comp")
