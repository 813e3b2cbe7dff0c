// The body of conv_dw7.comp: a depthwise KS x KS convolution of stride 1 and dilation 1, each invocation
// ROWS outputs down one column, the channel's KS*KS weights held in registers. Each input row of the
// strip is read once (KS loads) for up to KS output rows: conv_dw.comp's one output per invocation
// loads KS*KS inputs and weights, and the loads, not the FMAs or the bytes, bound it. Neighbouring
// invocations take neighbouring columns, so every load of a warp is contiguous.
#include "common.glsl"
#include "act.glsl"

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer Wt { float w[]; };
layout(std430, binding = 2) readonly buffer Bias { float bias[]; };
layout(std430, binding = 3) writeonly buffer Y { float y[]; };

layout(push_constant) uniform Params {
    uint total, C, H, W;
    uint O, OH, OW, KH;
    uint KW, sh, sw, ph;
    uint pw, dh, dw, has_bias;
    int act;
    float act_a, act_b;
} p;

#if ROWS != 7 || KS != 7
#error "main() names the rows of a 7x7 window's strip of 7"
#endif
// input row r (of the strip's ROWS + KS - 1) into output rows j0..j1 (those with 0 <= r - j < KS)
#define ROW(r, j0, j1)                                                                                \
    {                                                                                                 \
        int iy = iy0 + r;                                                                             \
        bool row_in = iy >= 0 && iy < int(p.H); /* rows in the padding add zeros */                   \
        uint at = xbase + uint(clamp(iy, 0, int(p.H) - 1)) * p.W;                                     \
        float v[KS];                                                                                  \
        [[unroll]] for (uint kx = 0; kx < KS; ++kx) v[kx] = row_in && inside[kx] ? x[at + col[kx]] : 0.0; \
        [[unroll]] for (uint j = j0; j <= j1; ++j) {                                                  \
            [[unroll]] for (uint kx = 0; kx < KS; ++kx) acc[j] = fma(v[kx], wk[(r - j) * KS + kx], acc[j]); \
        }                                                                                             \
    }

void main() {
    uint strips = (p.OH + ROWS - 1) / ROWS;
    uint i = flat_index();
    if (i >= p.total / p.OH * strips) return;
    uint ox = i % p.OW, t = i / p.OW;
    uint oy0 = t % strips * ROWS;
    t /= strips;
    uint oc = t % p.O, img = t / p.O;
    uint ic = oc / (p.O / p.C);
    uint xbase = (img * p.C + ic) * p.H * p.W;
    int iy0 = int(oy0) - int(p.ph), ix0 = int(ox) - int(p.pw);

    float wk[KS * KS];
    [[unroll]] for (uint q = 0; q < KS * KS; ++q) wk[q] = w[oc * KS * KS + q];
    float b = p.has_bias != 0 ? bias[oc] : 0.0;
    float acc[ROWS];
    [[unroll]] for (uint j = 0; j < ROWS; ++j) acc[j] = b;
    // the window's columns: clamped into the row (always a valid load), zeroed where outside
    uint col[KS];
    bool inside[KS];
    [[unroll]] for (uint kx = 0; kx < KS; ++kx) {
        int ix = ix0 + int(kx);
        inside[kx] = ix >= 0 && ix < int(p.W);
        col[kx] = uint(clamp(ix, 0, int(p.W) - 1));
    }

    // written out per row with constant bounds, not looped with a test: glslc leaves such loops rolled,
    // and wk[] and acc[] then in memory
    ROW(0, 0, 0) ROW(1, 0, 1) ROW(2, 0, 2) ROW(3, 0, 3) ROW(4, 0, 4) ROW(5, 0, 5) ROW(6, 0, 6)
    ROW(7, 1, 6) ROW(8, 2, 6) ROW(9, 3, 6) ROW(10, 4, 6) ROW(11, 5, 6) ROW(12, 6, 6)

    uint ybase = (img * p.O + oc) * p.OH * p.OW + ox;
    [[unroll]] for (uint j = 0; j < ROWS; ++j) {
        if (oy0 + j < p.OH) y[ybase + (oy0 + j) * p.OW] = apply_act(acc[j], p.act, p.act_a, p.act_b);
    }
}
