// The body of conv_dw.comp and conv_dw_h.comp (included by both).
// Depthwise convolution (group == input channels, any channel multiplier):
// one invocation per output element, a direct loop over the window.
#include "common.glsl"
#include "act.glsl"
#ifdef MNN_HALF_FMA
#define ACC_IN float16_t
#else
#define ACC_IN float
#endif

layout(std430, binding = 0) readonly buffer X { DATA_T x[]; };
#ifndef WEIGHT_T
#define WEIGHT_T DATA_T  // float16_t in conv_dw_h.comp
#endif
layout(std430, binding = 1) readonly buffer Wt { WEIGHT_T w[]; };
layout(std430, binding = 2) readonly buffer Bias { DATA_T bias[]; };
layout(std430, binding = 3) writeonly buffer Y { DATA_T y[]; };

layout(push_constant) uniform Params {
    uint total, C, H, W;
    uint O, OH, OW, KH;
    uint KW, sh, sw, ph;
    uint pw, dh, dw, has_bias;
    int act;
    float act_a, act_b;
} p;

void main() {
    uint i = flat_index();
    if (i >= p.total) return;
    uint ox = i % p.OW, t = i / p.OW;
    uint oy = t % p.OH;
    t /= p.OH;
    uint oc = t % p.O, img = t / p.O;
    uint ic = oc / (p.O / p.C);
    uint xbase = (img * p.C + ic) * p.H * p.W, wbase = oc * p.KH * p.KW;
    int iy0 = int(oy * p.sh) - int(p.ph), ix0 = int(ox * p.sw) - int(p.pw);
#ifdef MNN_HALF_FMA
    float16_t acc = float16_t(0.0);  // float16 FMAs: a window has few taps; the bias is added in float32
#else
    float acc = p.has_bias != 0 ? float(bias[oc]) : 0.0;
#endif
    for (uint ky = 0; ky < p.KH; ++ky) {
        int iy = iy0 + int(ky * p.dh);
        if (iy < 0 || iy >= int(p.H)) continue;
        for (uint kx = 0; kx < p.KW; ++kx) {
            int ix = ix0 + int(kx * p.dw);
            if (ix < 0 || ix >= int(p.W)) continue;
            acc = fma(ACC_IN(x[xbase + uint(iy) * p.W + uint(ix)]), ACC_IN(w[wbase + ky * p.KW + kx]), acc);
        }
    }
#ifdef MNN_HALF_FMA
    float v = float(acc) + (p.has_bias != 0 ? float(bias[oc]) : 0.0);
#else
    float v = acc;
#endif
    y[i] = DATA_T(apply_act(v, p.act, p.act_a, p.act_b));
}
