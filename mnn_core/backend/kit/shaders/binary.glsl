// The body of binary.comp and binary_h.comp (included by both).
// c = a (op) b with numpy broadcasting. The host collapses the shapes to at
// most 6 dimensions and passes each input's element strides (0 where it
// broadcasts), so one shader serves every pattern. An activation that follows
// in place (a residual Add then Relu) is applied here too.
#include "common.glsl"
#include "act.glsl"

layout(std430, binding = 0) readonly buffer A { DATA_T a[]; };
layout(std430, binding = 1) readonly buffer B { DATA_T b[]; };
layout(std430, binding = 2) writeonly buffer C { DATA_T c[]; };

layout(push_constant) uniform Params {
    uint total;
    uint ndim;
    int op;  // 0 add, 1 sub, 2 mul, 3 div, 4 pow, 5 max, 6 min, 7 prelu
    int act;
    uint shape[6];
    uint sa[6];
    uint sb[6];
    float act_a, act_b;
} p;

float mnn_pow(float x, float e) {
    if (e == 0.0) return 1.0;
    if (x == 0.0) return e > 0.0 ? 0.0 : 1.0 / 0.0;
    float r = pow(abs(x), e);  // GLSL pow is undefined for x < 0
    if (x < 0.0) {
        if (e != floor(e)) return 0.0 / 0.0;
        if (mod(e, 2.0) == 1.0) r = -r;
    }
    return r;
}

void main() {
    uint i = flat_index();
    if (i >= p.total) return;
    uint ia = 0, ib = 0, rem = i;
    for (int d = int(p.ndim) - 1; d >= 0; --d) {
        uint k = rem % p.shape[d];
        rem /= p.shape[d];
        ia += k * p.sa[d];
        ib += k * p.sb[d];
    }
    float u = float(a[ia]), v = float(b[ib]), r;
    switch (p.op) {
    case 0: r = u + v; break;
    case 1: r = u - v; break;
    case 2: r = u * v; break;
    case 3: r = u / v; break;
    case 4: r = mnn_pow(u, v); break;
    case 5: r = max(u, v); break;
    case 6: r = min(u, v); break;
    default: r = u < 0.0 ? u * v : u; break;
    }
    c[i] = DATA_T(apply_act(r, p.act, p.act_a, p.act_b));
}
