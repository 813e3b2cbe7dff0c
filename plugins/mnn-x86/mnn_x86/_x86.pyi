"""Type stub of the compiled glue (_x86.pyx): factories of C op states."""

from collections.abc import Sequence
from typing import Any

import numpy as np

class Execution:
    """One prepared op: an mnn_execution and everything its state points to."""

    @property
    def name(self) -> str: ...
    def capsule(self) -> Any: ...

class Buffer:
    nbytes: int
    def __init__(self, nbytes: int) -> None: ...

def compiled(isa: str) -> bool: ...
def cpu_supports(isa: str) -> bool: ...
def bf16_runs(isa: str) -> bool: ...
def openmp_usable() -> bool: ...
def table_info(isa: str) -> dict[str, int]: ...
def gemm_table_rows(isa: str, depth: int, rows: int = 0, cols: int = 0) -> int: ...
def conv(
    isa: str,
    threads: int,
    p: dict,
    weight: np.ndarray | None,
    bias: np.ndarray | None,
    weight_input: int,
    bias_input: int,
) -> Execution: ...
def matmul(
    isa: str,
    threads: int,
    name: str,
    p: dict,
    b_const: np.ndarray | None,
    a_off: np.ndarray | None,
    b_off: np.ndarray | None,
    bias: np.ndarray | None,
    bias_input: int,
) -> Execution: ...
def binary(
    isa: str, threads: int, name: str, op: int, dims: Sequence[int], sa: Sequence[int], sb: Sequence[int]
) -> Execution: ...
def unary(isa: str, threads: int, name: str, act: int, act_alpha: float, act_beta: float) -> Execution: ...
def affine(
    isa: str,
    threads: int,
    name: str,
    outer: int,
    C: int,
    inner: int,
    scale: np.ndarray | None,
    shift: np.ndarray | None,
    eps: float = 0.0,
) -> Execution: ...
def norm(
    isa: str,
    threads: int,
    name: str,
    rows: int,
    n: int,
    per_row: int,
    eps: float,
    scale: np.ndarray | None,
    shift: np.ndarray | None,
    scale_input: int,
    shift_input: int,
) -> Execution: ...
def reduce(isa: str, threads: int, name: str, rows: int, n: int, kind: int) -> Execution: ...
def attention(isa: str, threads: int, name: str, p: dict, mask_off: np.ndarray | None) -> Execution: ...
def softmax(isa: str, threads: int, name: str, outer: int, axis: int, inner: int, log: bool = False) -> Execution: ...
def pool(
    isa: str, threads: int, name: str, planes: int, p: dict, kind: int, inv_rows: np.ndarray, inv_cols: np.ndarray
) -> Execution: ...
def concat(isa: str, threads: int, name: str, outer: int, blocks: Sequence[int]) -> Execution: ...
def transpose(isa: str, threads: int, name: str, dims: Sequence[int], strides: Sequence[int]) -> Execution: ...
def bench_gemm(isa: str, threads: int, M: int, N: int, K: int, reps: int = 10) -> float: ...

# int8 (quantization)
def qconv(
    isa: str,
    threads: int,
    p: dict,
    weight: np.ndarray,
    bias: np.ndarray | None,
    mult: np.ndarray,
    zx: int,
    zy: int,
    path: str = "pairs",
) -> Execution: ...
def int8_vnni(isa: str) -> bool: ...
def qelt(isa: str, threads: int, op: str, scale: float, zp: int) -> Execution: ...
def qadd(isa: str, threads: int) -> Execution: ...
def qmaxpool(isa: str, threads: int, planes: int, p: dict, vnni: bool = True) -> Execution: ...
