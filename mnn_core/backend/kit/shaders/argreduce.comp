#version 450
#extension GL_GOOGLE_include_directive : require
// ArgMax / ArgMin along one axis of a float32 tensor seen as (outer, L, inner):
// one work group per (outer, inner) row reduces (value, index) pairs in shared
// memory; ties go to the first index, or the last with select_last. The
// result is int64 (two words).
#include "common.glsl"

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { uint y[]; };

layout(push_constant) uniform Params {
    uint rows, L, inner, is_min, select_last;
} p;

shared float best_v[gl_WorkGroupSize.x];
shared uint best_i[gl_WorkGroupSize.x];

// does (v, i) beat (w, j)?
bool beats(float v, uint i, float w, uint j) {
    if (v == w) return p.select_last != 0 ? i > j : i < j;
    return p.is_min != 0 ? v < w : v > w;
}

void main() {
    uint row = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    uint lid = gl_LocalInvocationID.x;
    bool live = row < p.rows;
    uint base = live ? (row / p.inner) * p.L * p.inner + row % p.inner : 0u;
    float v = 0.0;
    uint idx = 0xFFFFFFFFu;  // none yet
    if (live)
        for (uint j = lid; j < p.L; j += gl_WorkGroupSize.x) {
            float w = x[base + j * p.inner];
            if (idx == 0xFFFFFFFFu || beats(w, j, v, idx)) {
                v = w;
                idx = j;
            }
        }
    best_v[lid] = v;
    best_i[lid] = idx;
    barrier();
    for (uint s = gl_WorkGroupSize.x / 2u; s > 0u; s >>= 1u) {
        if (lid < s && best_i[lid + s] != 0xFFFFFFFFu &&
            (best_i[lid] == 0xFFFFFFFFu || beats(best_v[lid + s], best_i[lid + s], best_v[lid], best_i[lid]))) {
            best_v[lid] = best_v[lid + s];
            best_i[lid] = best_i[lid + s];
        }
        barrier();
    }
    if (lid == 0u && live) {
        y[2u * row] = best_i[0];
        y[2u * row + 1u] = 0u;
    }
}
