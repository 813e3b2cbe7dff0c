// The body of copy.comp and copy_h.comp (included by both).
// Strided N-d copy of 32-bit elements: for every index of `shape`,
// dst[dst_off + sum(idx * ds)] = src[src_off + sum(idx * ss)].
// Transpose, Slice (negative steps too), Concat and Split pieces, Expand and
// non-aliased reshapes are all this one shader with different strides.
#include "common.glsl"

#ifndef COPY_T
#define COPY_T uint  // float16_t in copy_h.comp
#endif
layout(std430, binding = 0) readonly buffer S { COPY_T src[]; };
layout(std430, binding = 1) writeonly buffer D { COPY_T dst[]; };

layout(push_constant) uniform Params {
    uint total;
    uint ndim;
    int src_off;
    int dst_off;
    uint shape[6];
    int ss[6];
    int ds[6];
} p;

void main() {
    uint i = flat_index();
    if (i >= p.total) return;
    int si = p.src_off, di = p.dst_off;
    uint rem = i;
    for (int d = int(p.ndim) - 1; d >= 0; --d) {
        int k = int(rem % p.shape[d]);
        rem /= p.shape[d];
        si += k * p.ss[d];
        di += k * p.ds[d];
    }
    dst[di] = src[si];
}
