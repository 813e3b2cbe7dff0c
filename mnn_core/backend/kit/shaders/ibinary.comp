#version 450
#extension GL_GOOGLE_include_directive : require
// Integer a (op) b with broadcasting (strides as in binary.comp), int32 or
// int64 (two's complement over two words, wrapping like C): 0 add, 1 sub,
// 2 mul, 5 max, 6 min; int32 also 3 div (truncating toward zero).
#include "common.glsl"

layout(std430, binding = 0) readonly buffer A { uint a[]; };
layout(std430, binding = 1) readonly buffer B { uint b[]; };
layout(std430, binding = 2) writeonly buffer C { uint c[]; };

layout(push_constant) uniform Params {
    uint total, ndim;
    int op;
    uint is64;
    uint shape[6];
    uint sa[6];
    uint sb[6];
} p;

bool less64(uint xl, int xh, uint yl, int yh) {
    return xh < yh || (xh == yh && xl < yl);
}

void main() {
    uint i = flat_index();
    if (i >= p.total) return;
    uint ia = 0u, ib = 0u, rem = i;
    for (int d = int(p.ndim) - 1; d >= 0; --d) {
        uint k = rem % p.shape[d];
        rem /= p.shape[d];
        ia += k * p.sa[d];
        ib += k * p.sb[d];
    }
    if (p.is64 == 0u) {
        int x = int(a[ia]), y = int(b[ib]), r;
        switch (p.op) {
        case 0: r = x + y; break;
        case 1: r = x - y; break;
        case 2: r = x * y; break;
        case 3: r = y == 0 ? 0 : x / y; break;
        case 5: r = max(x, y); break;
        default: r = min(x, y); break;
        }
        c[i] = uint(r);
        return;
    }
    uint xl = a[2u * ia], yl = b[2u * ib];
    uint xh = a[2u * ia + 1u], yh = b[2u * ib + 1u];
    uint rl, rh, carry;
    switch (p.op) {
    case 0:
        rl = uaddCarry(xl, yl, carry);
        rh = xh + yh + carry;
        break;
    case 1:
        rl = usubBorrow(xl, yl, carry);
        rh = xh - yh - carry;
        break;
    case 2:
        umulExtended(xl, yl, rh, rl);
        rh += xl * yh + xh * yl;  // the cross terms' low words: the product mod 2^64
        break;
    default: {
        bool x_less = less64(xl, int(xh), yl, int(yh));
        bool take_x = p.op == 5 ? !x_less : x_less;
        rl = take_x ? xl : yl;
        rh = take_x ? xh : yh;
    }
    }
    c[2u * i] = rl;
    c[2u * i + 1u] = rh;
}
