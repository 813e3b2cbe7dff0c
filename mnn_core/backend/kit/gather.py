"""GatherND as the GPU kernels take it: output element (j, s) is element s of the slice at
batch(j) * batch_stride + sum_k idx[j][k] * strides[k] in the data, j / per_batch its batch entry."""

from __future__ import annotations

from collections.abc import Sequence

from .layout import contiguous_strides, numel


def gather_nd_plan(
    data_shape: Sequence[int], idx_shape: Sequence[int], batch_dims: int
) -> tuple[int, int, int, int, list[int], list[int]]:
    """(slice size, m indexed dims, per_batch index tuples, batch stride, the m dims, their strides),
    in elements."""
    m = idx_shape[-1]
    strides = contiguous_strides(data_shape)
    slice_size = numel(data_shape[batch_dims + m :])
    per_batch = numel(idx_shape[batch_dims:-1])
    batch_stride = strides[batch_dims - 1] if batch_dims else 0
    dims = [int(d) for d in data_shape[batch_dims : batch_dims + m]]
    return slice_size, m, per_batch, batch_stride, dims, [int(s) for s in strides[batch_dims : batch_dims + m]]
