// The body of pool2d.comp and pool2d_h.comp (included by both).
// MaxPool / AveragePool over NCHW, one invocation per output. Padding never
// wins a max; the average divides by the input positions of the window, or by
// the positions inside input + padding when count_include_pad (positions a
// ceil_mode window reaches past the padding never count).
#include "common.glsl"

layout(std430, binding = 0) readonly buffer X { DATA_T x[]; };
layout(std430, binding = 1) writeonly buffer Y { DATA_T y[]; };

layout(push_constant) uniform Params {
    uint total, H, W, OH;
    uint OW, KH, KW, sh;
    uint sw, pt, pl, pb;
    uint pr, dh, dw, mode;  // mode 0: max, 1: average
    uint count_include_pad;
} p;

void main() {
    uint i = flat_index();
    if (i >= p.total) return;
    uint ox = i % p.OW, t = i / p.OW;
    uint oy = t % p.OH, nc = t / p.OH;
    uint base = nc * p.H * p.W;
    int iy0 = int(oy * p.sh) - int(p.pt), ix0 = int(ox * p.sw) - int(p.pl);
    float best = -1.0 / 0.0, sum = 0.0;
    uint count = 0;
    for (uint ky = 0; ky < p.KH; ++ky) {
        int iy = iy0 + int(ky * p.dh);
        bool row_in = iy >= 0 && iy < int(p.H);
        bool row_pad = iy >= -int(p.pt) && iy < int(p.H + p.pb);
        for (uint kx = 0; kx < p.KW; ++kx) {
            int ix = ix0 + int(kx * p.dw);
            bool col_in = ix >= 0 && ix < int(p.W);
            if (row_in && col_in) {
                float v = float(x[base + uint(iy) * p.W + uint(ix)]);
                best = max(best, v);
                sum += v;
                count += 1;
            } else if (p.count_include_pad != 0 && row_pad && ix >= -int(p.pl) && ix < int(p.W + p.pr)) {
                count += 1;
            }
        }
    }
    y[i] = DATA_T(p.mode == 0 ? best : sum / float(count));
}
