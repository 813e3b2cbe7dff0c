#version 450
#extension GL_GOOGLE_include_directive : require
// ONNX Runtime's dynamic uint8 quantization parameters of float blocks (DynamicQuantizeLSTM): one
// work group of 256 per block, its range widened to hold 0; writes (scale, zero point) as floats:
// scale = (hi - lo) / 255 (1 when hi == lo), zero point = clamp(roundEven(-lo / scale), 0, 255).
#include "common.glsl"

layout(std430, binding = 0) readonly buffer S { float src[]; };
layout(std430, binding = 1) writeonly buffer P { float params[]; };

layout(push_constant) uniform Params {
    uint base, stride, count, out_at;  // block b: src[base + b * stride ...][count], params[out_at + 2b ...][2]
} p;

shared float lo_s[256];
shared float hi_s[256];

void main() {
    uint lid = gl_LocalInvocationID.x, blk = gl_WorkGroupID.x;
    uint start = p.base + blk * p.stride;
    float lo = 0.0, hi = 0.0;
    for (uint i = lid; i < p.count; i += 256u) {
        float v = src[start + i];
        lo = min(lo, v);
        hi = max(hi, v);
    }
    lo_s[lid] = lo;
    hi_s[lid] = hi;
    barrier();
    for (uint half_ = 128u; half_ > 0u; half_ >>= 1u) {
        if (lid < half_) {
            lo_s[lid] = min(lo_s[lid], lo_s[lid + half_]);
            hi_s[lid] = max(hi_s[lid], hi_s[lid + half_]);
        }
        barrier();
    }
    if (lid == 0u) {
        float l = lo_s[0], h = hi_s[0];
        float scale = l == h ? 1.0 : (h - l) / 255.0;
        params[p.out_at + 2u * blk] = scale;
        params[p.out_at + 2u * blk + 1u] = clamp(roundEven(-l / scale), 0.0, 255.0);
    }
}
