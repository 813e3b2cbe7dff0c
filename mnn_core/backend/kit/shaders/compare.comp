#version 450
#extension GL_GOOGLE_include_directive : require
// Ops with a bool result, with numpy broadcasting (strides as in binary.comp):
// comparisons of float32, int32, int64 or bool tensors; And, Or, Xor, Not of
// bools; IsNaN and IsInf of floats. Each invocation writes one word: four
// bool bytes (the host rounds every tensor up to whole words).
#include "common.glsl"
#include "elements.glsl"

layout(std430, binding = 0) readonly buffer A { uint a[]; };
layout(std430, binding = 1) readonly buffer B { uint b[]; };
layout(std430, binding = 2) writeonly buffer C { uint c[]; };

layout(push_constant) uniform Params {
    uint total, ndim;
    int op;  // 0 ==, 1 <, 2 >, 3 <=, 4 >=, 5 and, 6 or, 7 xor, 8 not, 9 isnan, 10 isinf(+), 11 isinf(-),
             // 12 isinf(either), 13 false
    uint kind;
    uint shape[6];
    uint sa[6];
    uint sb[6];
} p;

// -1, 0, 1 as x <, ==, > y; 2 when unordered (a NaN)
int order(uint ia, uint ib) {
    if (p.kind == KIND_F32) {
        uint u = a[ia], v = b[ib];
        if (bits_nan(u) || bits_nan(v)) return 2;
        float x = uintBitsToFloat(u), y = uintBitsToFloat(v);
        return x < y ? -1 : (x > y ? 1 : 0);
    }
    if (p.kind == KIND_I32) {
        int x = int(a[ia]), y = int(b[ib]);
        return x < y ? -1 : (x > y ? 1 : 0);
    }
    if (p.kind == KIND_I64) {
        int xh = int(a[2u * ia + 1u]), yh = int(b[2u * ib + 1u]);
        uint xl = a[2u * ia], yl = b[2u * ib];
        if (xh != yh) return xh < yh ? -1 : 1;
        return xl < yl ? -1 : (xl > yl ? 1 : 0);
    }
    uint x = byte_at(a[ia >> 2u], ia) != 0u ? 1u : 0u, y = byte_at(b[ib >> 2u], ib) != 0u ? 1u : 0u;
    return x < y ? -1 : (x > y ? 1 : 0);
}

bool result(uint ia, uint ib) {
    if (p.op == 13) return false;
    if (p.op >= 9) {
        uint u = a[ia];
        bool neg = (u & 0x80000000u) != 0u;
        return p.op == 9 ? bits_nan(u) : bits_inf(u) && (p.op == 12 || (p.op == 11) == neg);
    }
    if (p.op >= 5) {
        bool x = byte_at(a[ia >> 2u], ia) != 0u, y = byte_at(b[ib >> 2u], ib) != 0u;
        return p.op == 5 ? x && y : (p.op == 6 ? x || y : (p.op == 7 ? x != y : !x));
    }
    int o = order(ia, ib);
    if (o == 2) return false;  // every comparison with NaN is false
    switch (p.op) {
    case 0: return o == 0;
    case 1: return o < 0;
    case 2: return o > 0;
    case 3: return o <= 0;
    default: return o >= 0;
    }
}

void main() {
    uint w = flat_index(), first = w * 4u;
    if (first >= p.total) return;
    uint packed = 0u;
    for (uint k = 0u; k < 4u && first + k < p.total; ++k) {
        uint ia = 0u, ib = 0u, rem = first + k;
        for (int d = int(p.ndim) - 1; d >= 0; --d) {
            uint i = rem % p.shape[d];
            rem /= p.shape[d];
            ia += i * p.sa[d];
            ib += i * p.sb[d];
        }
        if (result(ia, ib)) packed |= 1u << (k * 8u);
    }
    c[w] = packed;
}
