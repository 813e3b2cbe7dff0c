// ArgMax / ArgMin along one axis of a float32 tensor seen as (outer, L, inner):
// one invocation per (outer, inner) row walks its L values; ties go to the
// first index, or the last with select_last. The result is int64 (two words).
// Compiled with ARENA_UINT: the int64 words are stored as they are.
// P: rows, L, inner, is_min, select_last, x_off, y_off
void main() {
    int r = flat_index();
    if (r >= pi(0)) return;
    int L = pi(1), inner = pi(2);
    bool is_min = pi(3) != 0, last = pi(4) != 0;
    int x = pi(5) + (r / inner) * L * inner + r % inner;
    float best = uintBitsToFloat(A[x]);
    int at = 0;
    for (int j = 1; j < L; ++j) {
        float v = uintBitsToFloat(A[x + j * inner]);
        bool better = is_min ? v < best : v > best;
        if (better || (last && v == best)) {
            best = v;
            at = j;
        }
    }
    A[pi(6) + 2 * r] = uint(at);
    A[pi(6) + 2 * r + 1] = 0u;
}
