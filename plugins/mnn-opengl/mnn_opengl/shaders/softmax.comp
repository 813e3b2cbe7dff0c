// Softmax / LogSoftmax along one axis: a row (outer x inner) per invocation, or
// per work group (GROUP_ROW, for long rows); the row strided by `inner`.
// Max-subtracted, accumulated in fp32.
// P: rows, len, inner, log, x_off, y_off
#include "group_row.glsl"

void main() {
    int r = row_index(), lane = row_lane();
    if (r >= pi(0)) return;  // a GROUP_ROW group returns together
    int len = pi(1), inner = pi(2);
    int base = (r / inner) * len * inner + r % inner;
    int x = pi(4) + base, y = pi(5) + base;
    float m = -3.402823466e38;
    for (int k = lane; k < len; k += ROW_STEP) m = max(m, A[x + k * inner]);
    m = group_combine(m, true);
    float s = 0.0;
    for (int k = lane; k < len; k += ROW_STEP) s += exp(A[x + k * inner] - m);
    s = group_combine(s, false);
    if (pi(3) != 0) {
        float ls = log(s);
        for (int k = lane; k < len; k += ROW_STEP) A[y + k * inner] = A[x + k * inner] - m - ls;
    } else {
        float inv = 1.0 / s;
        for (int k = lane; k < len; k += ROW_STEP) A[y + k * inner] = exp(A[x + k * inner] - m) * inv;
    }
}
