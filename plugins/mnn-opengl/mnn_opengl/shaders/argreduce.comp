// ArgMax / ArgMin along one axis of a float32 tensor seen as (outer, L, inner):
// a row (outer, inner) per invocation, or per work group (GROUP_ROW, for long
// rows: each invocation walks every LOCAL_X-th value, then a tree in shared
// memory); ties go to the first index, or the last with select_last. The
// result is int64 (two words). Compiled with ARENA_UINT: the int64 words are
// stored as they are.
// P: rows, L, inner, is_min, select_last, x_off, y_off
#include "group_row.glsl"

#ifdef GROUP_ROW
shared float best_v[LOCAL_X];
shared int best_i[LOCAL_X];
#endif

// whether value v at index i beats b at bi (an index < 0: nothing yet)
bool beats(float v, int i, float b, int bi, bool is_min, bool last) {
    if (i < 0 || bi < 0) return bi < 0 && i >= 0;
    if (v != b) return is_min ? v < b : v > b;
    return last ? i > bi : i < bi;
}

void main() {
    int r = row_index(), lane = row_lane();
    if (r >= pi(0)) return;  // a GROUP_ROW group returns together
    int L = pi(1), inner = pi(2);
    bool is_min = pi(3) != 0, last = pi(4) != 0;
    int x = pi(5) + (r / inner) * L * inner + r % inner;
    float best = 0.0;
    int at = -1;
    for (int j = lane; j < L; j += ROW_STEP) {
        float v = uintBitsToFloat(A[x + j * inner]);
        if (beats(v, j, best, at, is_min, last)) {
            best = v;
            at = j;
        }
    }
#ifdef GROUP_ROW
    best_v[lane] = best;
    best_i[lane] = at;
    barrier();
    for (int s = LOCAL_X / 2; s > 0; s >>= 1) {
        if (lane < s && beats(best_v[lane + s], best_i[lane + s], best_v[lane], best_i[lane], is_min, last)) {
            best_v[lane] = best_v[lane + s];
            best_i[lane] = best_i[lane + s];
        }
        barrier();
    }
    if (lane != 0) return;
    at = best_i[0];
#endif
    A[pi(6) + 2 * r] = uint(max(at, 0));
    A[pi(6) + 2 * r + 1] = 0u;
}
