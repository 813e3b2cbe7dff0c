#version 450
#extension GL_GOOGLE_include_directive : require
// ConvInteger (2-D): int32 sums of (x - x_zero_point) * (w - w_zero_point) over each window, x and w
// int8 or uint8, the weight's zero point per tensor or per output channel; padding contributes 0
// (it holds the zero point). One invocation per output element.
#include "common.glsl"
#include "bytes.glsl"

layout(std430, binding = 0) readonly buffer X { uint x[]; };
layout(std430, binding = 1) readonly buffer W { uint w[]; };
layout(std430, binding = 2) readonly buffer XZ { uint xzp[]; };
layout(std430, binding = 3) readonly buffer WZ { uint wzp[]; };
layout(std430, binding = 4) writeonly buffer Y { int y[]; };

layout(push_constant) uniform Params {
    uint total, flags;  // 1: x signed, 2: w signed, 4: has x zero point, 8: has w zero point, 16: w's per channel
    uint C, H, W, M, OH, OW, KH, KW, SH, SW, PH, PW, DH, DW, G;
} p;

void main() {
    uint i = flat_index();
    if (i >= p.total) return;
    uint ox = i % p.OW, t = i / p.OW;
    uint oy = t % p.OH;
    t /= p.OH;
    uint m = t % p.M, n = t / p.M;
    bool xs = (p.flags & 1u) != 0u, ws = (p.flags & 2u) != 0u;
    int xz = (p.flags & 4u) != 0u ? BYTE_AT(xzp, 0u, xs) : 0;
    int wz = (p.flags & 8u) != 0u ? BYTE_AT(wzp, (p.flags & 16u) != 0u ? m : 0u, ws) : 0;
    uint cg = p.C / p.G, g = m / (p.M / p.G);
    int acc = 0;
    for (uint c = 0u; c < cg; ++c) {
        uint xc = (n * p.C + g * cg + c) * p.H;
        uint wc = (m * cg + c) * p.KH;
        for (uint ky = 0u; ky < p.KH; ++ky) {
            int iy = int(oy * p.SH + ky * p.DH) - int(p.PH);
            if (iy < 0 || iy >= int(p.H)) continue;
            for (uint kx = 0u; kx < p.KW; ++kx) {
                int ix = int(ox * p.SW + kx * p.DW) - int(p.PW);
                if (ix < 0 || ix >= int(p.W)) continue;
                int xv = BYTE_AT(x, (xc + uint(iy)) * p.W + uint(ix), xs) - xz;
                acc += xv * (BYTE_AT(w, (wc + ky) * p.KW + kx, ws) - wz);
            }
        }
    }
    y[i] = acc;
}
