// Normalization of rows of D elements: a row per invocation, or per work group
// (GROUP_ROW, for long rows); two-pass mean and variance in fp32, optional
// scale and bias. LayerNormalization indexes scale/bias by position in the row;
// InstanceNormalization (channels > 0), by the row's channel (row % channels),
// one value for the whole row.
// P: rows, D, epsilon, x_off, y_off, scale_off (-1: none), bias_off (-1: none), channels
#include "group_row.glsl"

void main() {
    int r = row_index(), lane = row_lane();
    if (r >= pi(0)) return;  // a GROUP_ROW group returns together
    int D = pi(1), channels = pi(7);
    int x = pi(3) + r * D, y = pi(4) + r * D, so = pi(5), bo = pi(6);
    float mean = 0.0;
    for (int k = lane; k < D; k += ROW_STEP) mean += A[x + k];
    mean = group_combine(mean, false) / float(D);
    float var = 0.0;
    for (int k = lane; k < D; k += ROW_STEP) {
        float d = A[x + k] - mean;
        var += d * d;
    }
    float inv = 1.0 / sqrt(group_combine(var, false) / float(D) + pf(2));
    int c = channels > 0 ? r % channels : 0;
    for (int k = lane; k < D; k += ROW_STEP) {
        int at = channels > 0 ? c : k;
        float v = (A[x + k] - mean) * inv;
        if (so >= 0) v *= A[so + at];
        if (bo >= 0) v += A[bo + at];
        A[y + k] = v;
    }
}
