#version 450
#extension GL_GOOGLE_include_directive : require
// Writes int8 / uint8 tensors, four elements (one word) per invocation. mode 0, QuantizeLinear of
// float32: saturate(roundEven(x / scale) + zero_point), scale and zero point per tensor or per
// channel ((i / inner) % channels); mode 1, Cast of float32 (truncated) or int32 to 8 bits (the low
// byte, wrapping as C does).
#include "common.glsl"
#include "bytes.glsl"

layout(std430, binding = 0) readonly buffer X { uint x[]; };
layout(std430, binding = 1) readonly buffer S { float scale[]; };
layout(std430, binding = 2) readonly buffer Z { uint zp[]; };
layout(std430, binding = 3) writeonly buffer Y { uint y[]; };

layout(push_constant) uniform Params {
    uint total, mode, from_int, out_signed, inner, channels, has_zp;
} p;

void main() {
    uint first = flat_index() * 4u;
    if (first >= p.total) return;
    uint packed = 0u;
    for (uint k = 0u; k < 4u && first + k < p.total; ++k) {
        uint i = first + k;
        int q;
        if (p.mode == 0u) {
            uint c = (i / p.inner) % p.channels;
            float z = p.has_zp != 0u ? float(BYTE_AT(zp, c, p.out_signed != 0u)) : 0.0;
            float v = roundEven(uintBitsToFloat(x[i]) / scale[c]) + z;
            q = int(p.out_signed != 0u ? clamp(v, -128.0, 127.0) : clamp(v, 0.0, 255.0));
        } else {
            q = p.from_int != 0u ? int(x[i]) : int(trunc(uintBitsToFloat(x[i])));
        }
        packed |= (uint(q) & 0xFFu) << (k * 8u);
    }
    y[first >> 2u] = packed;
}
