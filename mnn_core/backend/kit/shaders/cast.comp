#version 450
#extension GL_GOOGLE_include_directive : require
// Cast between float32, int32, int64 and bool, four elements per invocation
// (so a bool output is written a whole word at a time). Floats to ints
// truncate toward zero; int64 to int32 keeps the low word (wraps, as in C);
// anything to bool is "not zero" (NaN too).
#include "common.glsl"
#include "elements.glsl"

layout(std430, binding = 0) readonly buffer X { uint x[]; };
layout(std430, binding = 1) writeonly buffer Y { uint y[]; };

layout(push_constant) uniform Params {
    uint total, from_kind, to_kind;
} p;

const float TWO32 = 4294967296.0;

// the element as a float and as a 64-bit integer (hi, lo), both exact where representable
void load(uint i, out float f, out int hi, out uint lo) {
    if (p.from_kind == KIND_F32) {
        f = trunc(uintBitsToFloat(x[i]));
        if (abs(f) < 2147483648.0) {
            int v = int(f);
            hi = v < 0 ? -1 : 0;
            lo = uint(v);
        } else {  // a power-of-two split is exact for an integral float
            float h = floor(f / TWO32);
            hi = int(h);
            lo = uint(f - h * TWO32);
        }
        f = uintBitsToFloat(x[i]);
    } else if (p.from_kind == KIND_I32) {
        int v = int(x[i]);
        f = float(v);
        hi = v < 0 ? -1 : 0;
        lo = uint(v);
    } else if (p.from_kind == KIND_I64) {
        lo = x[2u * i];
        hi = int(x[2u * i + 1u]);
        if ((hi == 0 && lo < 0x80000000u) || (hi == -1 && lo >= 0x80000000u)) {
            f = float(int(lo));  // fits in 32 bits: exact below 2^24, one rounding above
        } else {  // the magnitude, rounded once per word
            uint carry, nlo = uaddCarry(~lo, 1u, carry);
            uint nhi = ~uint(hi) + carry;
            f = hi < 0 ? -(float(nhi) * TWO32 + float(nlo)) : float(hi) * TWO32 + float(lo);
        }
    } else {
        lo = byte_at(x[i >> 2u], i) != 0u ? 1u : 0u;
        hi = 0;
        f = float(lo);
    }
}

void main() {
    uint first = flat_index() * 4u;
    if (first >= p.total) return;
    uint packed = 0u;
    for (uint k = 0u; k < 4u && first + k < p.total; ++k) {
        uint i = first + k;
        float f;
        int hi;
        uint lo;
        load(i, f, hi, lo);
        if (p.to_kind == KIND_F32) {
            y[i] = floatBitsToUint(f);
        } else if (p.to_kind == KIND_I32) {
            y[i] = lo;
        } else if (p.to_kind == KIND_I64) {
            y[2u * i] = lo;
            y[2u * i + 1u] = uint(hi);
        } else {
            bool nonzero = p.from_kind == KIND_F32 ? (x[i] & 0x7FFFFFFFu) != 0u : (lo != 0u || hi != 0);
            if (nonzero) packed |= 1u << (k * 8u);
        }
    }
    if (p.to_kind == KIND_BOOL) y[first >> 2u] = packed;
}
