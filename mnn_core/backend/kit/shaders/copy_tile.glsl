// The body of copy_tile_t.comp and copy_tile_add.comp. A transposing copy of 32-bit words through 32x32
// tiles in shared memory: for every (outer, row, col),
// dst[row * d_r + col] = src[col * s_c + row], the rows contiguous in the source and the columns in the
// destination, so both the reads and the writes of a warp are contiguous (copy.comp's per-element walk
// writes or reads with a stride). Work groups of 32x8, each moving one tile; z walks the (up to two)
// outer dims, whose strides are given per side.
// With TILE_ADD (copy_tile_add.comp) the words are floats and each is added to the same element of a
// third tensor laid out as the destination (a Transpose and the residual Add after it, as one pass).
#include "common.glsl"

#ifdef TILE_ADD
#define WORD_T float
layout(std430, binding = 2) readonly buffer A { float addend[]; };
#else
#define WORD_T uint
#endif
layout(std430, binding = 0) readonly buffer S { WORD_T src[]; };
layout(std430, binding = 1) writeonly buffer D { WORD_T dst[]; };

layout(push_constant) uniform Params {
    uint rows, cols, s_c, d_r;
    uint outer1, src_o0, src_o1, dst_o0;
    uint dst_o1;
} p;

shared WORD_T tile[32][33];  // [col][row], one word of padding against bank conflicts

void main() {
    uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
    uint c0 = gl_WorkGroupID.x * 32, r0 = gl_WorkGroupID.y * 32;
    uint z0 = gl_WorkGroupID.z / p.outer1, z1 = gl_WorkGroupID.z % p.outer1;
    uint sbase = z0 * p.src_o0 + z1 * p.src_o1, dbase = z0 * p.dst_o0 + z1 * p.dst_o1;
    for (uint j = ty; j < 32; j += 8) {  // a warp reads 32 neighbouring rows of one column
        uint c = c0 + j, r = r0 + tx;
        if (c < p.cols && r < p.rows) tile[j][tx] = src[sbase + c * p.s_c + r];
    }
    barrier();
    for (uint j = ty; j < 32; j += 8) {  // and writes 32 neighbouring columns of one row
        uint r = r0 + j, c = c0 + tx;
#ifdef TILE_ADD
        if (c < p.cols && r < p.rows) dst[dbase + r * p.d_r + c] = tile[tx][j] + addend[dbase + r * p.d_r + c];
#else
        if (c < p.cols && r < p.rows) dst[dbase + r * p.d_r + c] = tile[tx][j];
#endif
    }
}
