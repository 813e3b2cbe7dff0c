#version 450
#extension GL_GOOGLE_include_directive : require
// ScatterElements, after the output holds a copy of the data: each invocation
// walks one line of indices along the axis in order and writes (or reduces)
// updates[.., j, ..] into out[.., idx[.., j, ..], ..]. Only one line's indices
// can name the same element, so duplicates are applied in index order: add /
// mul / max / min accumulate them, a plain write keeps the last. Indices are
// int32 or int64 (negative ones count from the end, out-of-range ones are
// clamped); reductions take float32 or int32 data (int_data), a plain write
// moves `words` words a value.
#include "common.glsl"

layout(std430, binding = 0) readonly buffer I { int idx[]; };
layout(std430, binding = 1) readonly buffer U { uint upd[]; };
layout(std430, binding = 2) buffer O { uint o[]; };

layout(push_constant) uniform Params {
    uint lines, ndim, axis, words;
    uint dim, count, idx64, reduction;
    uint int_data, u0, u1, u2;
    uint shape[6];    // the index shape, the axis as 1
    uint dstride[6];  // data strides
    uint istride[6];  // index (and update) strides
} p;

float reduce_f(float a, float b) {
    if (p.reduction == 1u) return a + b;
    if (p.reduction == 2u) return a * b;
    return p.reduction == 3u ? max(a, b) : min(a, b);
}

int reduce_i(int a, int b) {
    if (p.reduction == 1u) return a + b;
    if (p.reduction == 2u) return a * b;
    return p.reduction == 3u ? max(a, b) : min(a, b);
}

void main() {
    uint line = flat_index();
    if (line >= p.lines) return;
    uint dst = 0u, src = 0u, rem = line;
    for (int d = int(p.ndim) - 1; d >= 0; --d) {
        uint c = rem % p.shape[d];
        rem /= p.shape[d];
        dst += c * p.dstride[d];
        src += c * p.istride[d];
    }
    uint step = p.istride[p.axis], dstep = p.dstride[p.axis];
    for (uint j = 0u; j < p.count; ++j, src += step) {
        int k = p.idx64 != 0u ? idx[2u * src] : idx[src];
        if (k < 0) k += int(p.dim);
        uint at = dst + uint(clamp(k, 0, int(p.dim) - 1)) * dstep;
        if (p.reduction == 0u) {
            for (uint w = 0u; w < p.words; ++w) o[at * p.words + w] = upd[src * p.words + w];
        } else if (p.int_data != 0u) {
            o[at] = uint(reduce_i(int(o[at]), int(upd[src])));
        } else {
            o[at] = floatBitsToUint(reduce_f(uintBitsToFloat(o[at]), uintBitsToFloat(upd[src])));
        }
    }
}
