// Softmax / LogSoftmax along one axis: one invocation per row (outer x inner),
// the row strided by `inner`. Max-subtracted, accumulated in fp32.
// P: rows, len, inner, log, x_off, y_off
void main() {
    int r = flat_index();
    if (r >= pi(0)) return;
    int len = pi(1), inner = pi(2);
    int base = (r / inner) * len * inner + r % inner;
    int x = pi(4) + base, y = pi(5) + base;
    float m = -3.402823466e38;
    for (int k = 0; k < len; ++k) m = max(m, A[x + k * inner]);
    float s = 0.0;
    for (int k = 0; k < len; ++k) s += exp(A[x + k * inner] - m);
    if (pi(3) != 0) {
        float ls = log(s);
        for (int k = 0; k < len; ++k) A[y + k * inner] = A[x + k * inner] - m - ls;
    } else {
        float inv = 1.0 / s;
        for (int k = 0; k < len; ++k) A[y + k * inner] = exp(A[x + k * inner] - m) * inv;
    }
}
