// Normalization of rows of D elements: one invocation per row, two-pass mean
// and variance in fp32, optional scale and bias. LayerNormalization indexes
// scale/bias by position in the row; InstanceNormalization (channels > 0), by
// the row's channel (row % channels), one value for the whole row.
// P: rows, D, epsilon, x_off, y_off, scale_off (-1: none), bias_off (-1: none), channels
void main() {
    int r = flat_index();
    if (r >= pi(0)) return;
    int D = pi(1), channels = pi(7);
    int x = pi(3) + r * D, y = pi(4) + r * D, so = pi(5), bo = pi(6);
    float mean = 0.0;
    for (int k = 0; k < D; ++k) mean += A[x + k];
    mean /= float(D);
    float var = 0.0;
    for (int k = 0; k < D; ++k) {
        float d = A[x + k] - mean;
        var += d * d;
    }
    float inv = 1.0 / sqrt(var / float(D) + pf(2));
    int c = channels > 0 ? r % channels : 0;
    for (int k = 0; k < D; ++k) {
        int at = channels > 0 ? c : k;
        float v = (A[x + k] - mean) * inv;
        if (so >= 0) v *= A[so + at];
        if (bo >= 0) v += A[bo + at];
        A[y + k] = v;
    }
}
