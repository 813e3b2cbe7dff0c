// The body of conv2d.comp and conv2d_h.comp (included by both).
// 2-D convolution as an implicit GEMM, one group per z: for group g,
// Y[o][col] = act(sum_k W[o][k] * X~[k][col] + bias[o]) where k runs over
// (input channel, ky, kx) of the group and col over (image, oy, ox); X~ is
// gathered from the NCHW input on the fly (padding reads as zero), so no
// im2col buffer exists. Handles strides, dilations, pads and groups. The host
// tabulates, per k, the input offset and the (dy, dx) of the kernel tap
// (ktab[3k..3k+2]), so the inner loop divides nothing.
// Split-K (ksplit > 1, for outputs too small to fill the GPU): z = group *
// ksplit + split, each split sums kchunk of K into its slice of `partial`,
// and splitk_reduce.comp adds the slices, the bias and the activation.
#include "common.glsl"
#include "act.glsl"
#include "tile.glsl"

layout(std430, binding = 0) readonly buffer X { DATA_T x[]; };
#ifndef WEIGHT_T
#define WEIGHT_T DATA_T  // float16_t in conv2d_h.comp
#endif
layout(std430, binding = 1) readonly buffer Wt { WEIGHT_T w[]; };
layout(std430, binding = 2) readonly buffer Bias { DATA_T bias[]; };
layout(std430, binding = 3) writeonly buffer Y { DATA_T y[]; };
layout(std430, binding = 4) writeonly buffer Partial { float partial[]; };
layout(std430, binding = 5) readonly buffer KTab { int ktab[]; };

layout(push_constant) uniform Params {
    uint N, C, H, W;
    uint O, OH, OW, group;
    uint KH, KW, sh, sw;
    uint ph, pw, dh, dw;
    int act;
    uint has_bias;
    float act_a, act_b;
    uint ksplit, kchunk;
} p;

void main() {
    uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
    uint tid = ty * TX + tx;
    uint g = gl_WorkGroupID.z / p.ksplit, split = gl_WorkGroupID.z % p.ksplit;
    uint og = p.O / p.group, cg = p.C / p.group;
    uint KHW = p.KH * p.KW, K = cg * KHW;
    uint OHW = p.OH * p.OW, NCOL = p.N * OHW, HW = p.H * p.W;
    uint m0 = gl_WorkGroupID.y * BM, n0 = gl_WorkGroupID.x * BN;

    // The B column this invocation stages is the same at every k step
    // (the host makes NT a multiple of BN): decompose it once.
    uint bn = tid % BN;
    uint col = n0 + bn;
    bool col_ok = col < NCOL;
    uint img = col_ok ? col / OHW : 0, pix = col_ok ? col % OHW : 0;
    int iy0 = int(pix / p.OW) * int(p.sh) - int(p.ph);
    int ix0 = int(pix % p.OW) * int(p.sw) - int(p.pw);
    int xbase = int((img * p.C + g * cg) * HW) + iy0 * int(p.W) + ix0;
    uint wbase = g * og * K;

    float acc[TM * TN];
    [[unroll]] for (uint i = 0; i < TM * TN; ++i) acc[i] = 0.0;

    uint k_end = min(K, (split + 1) * p.kchunk);
    for (uint k0 = split * p.kchunk; k0 < k_end; k0 += BK) {
        for (uint e = tid; e < BK * BM; e += NT) {  // weights: k contiguous
            uint kk = e % BK, mm = e / BK;
            uint gm = m0 + mm, gk = k0 + kk;
            As[kk * AS + mm] = HALF_T((gm < og && gk < k_end) ? float(w[wbase + gm * K + gk]) : 0.0);
        }
        for (uint kk = tid / BN; kk < BK; kk += NT / BN) {
            uint gk = k0 + kk;
            float v = 0.0;
            if (col_ok && gk < k_end) {
                int iy = iy0 + ktab[3u * gk + 1u], ix = ix0 + ktab[3u * gk + 2u];
                if (iy >= 0 && iy < int(p.H) && ix >= 0 && ix < int(p.W)) v = float(x[xbase + ktab[3u * gk]]);
            }
            Bs[kk * BS + bn] = HALF_T(v);
        }
        barrier();
        TILE_MULTIPLY(acc)
        barrier();
    }

    uint total = p.N * p.O * OHW;
    [[unroll]] for (uint i = 0; i < TM; ++i) {
        uint gm = m0 + ty + i * TY;
        if (gm >= og) continue;
        uint oc = g * og + gm;
        float b = p.has_bias != 0 ? float(bias[oc]) : 0.0;
        [[unroll]] for (uint j = 0; j < TN; ++j) {
            uint c = n0 + tx + j * TX;
            if (c >= NCOL) continue;
            uint at = ((c / OHW) * p.O + oc) * OHW + c % OHW;
            if (p.ksplit > 1)
                partial[split * total + at] = acc[i * TN + j];
            else
                y[at] = DATA_T(apply_act(acc[i * TN + j] + b, p.act, p.act_a, p.act_b));
        }
    }
}
