// Normalizer (ai.onnx.ml): each row of `cols` divided by its max (norm 0), L1 norm (1) or, for
// L2 (2), sign(x) * sqrt(x^2 / sum x^2); a zero norm leaves the row. One invocation per row.
// P: rows, cols, norm, x_off, y_off
void main() {
    int r = flat_index();
    if (r >= pi(0)) return;
    int cols = pi(1), norm = pi(2);
    int x = pi(3) + r * cols, y = pi(4) + r * cols;
    float d = norm == 0 ? A[x] : 0.0;
    for (int c = 0; c < cols; ++c) {
        float v = A[x + c];
        d = norm == 0 ? max(d, v) : d + (norm == 1 ? abs(v) : v * v);
    }
    for (int c = 0; c < cols; ++c) {
        float v = A[x + c];
        if (norm == 2) {
            A[y + c] = d == 0.0 ? v : sqrt(v * v / d) * (v < 0.0 ? -1.0 : 1.0);
        } else {
            A[y + c] = v / (d == 0.0 ? 1.0 : d);
        }
    }
}
