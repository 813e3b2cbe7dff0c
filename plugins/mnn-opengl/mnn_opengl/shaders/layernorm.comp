// LayerNormalization over the trailing D elements of each row: one invocation
// per row, two-pass mean and variance in fp32, optional scale and bias.
// P: rows, D, epsilon, x_off, y_off, scale_off (-1: none), bias_off (-1: none)
void main() {
    int r = flat_index();
    if (r >= pi(0)) return;
    int D = pi(1);
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
    for (int k = 0; k < D; ++k) {
        float v = (A[x + k] - mean) * inv;
        if (so >= 0) v *= A[so + k];
        if (bo >= 0) v += A[bo + k];
        A[y + k] = v;
    }
}
