// Constant, edge and reflect padding of up to 6 dims: every output index maps
// back to an input index (or the constant).
// P: total, ndim, mode (0 constant, 1 edge, 2 reflect), value, x_off, y_off,
//    out_shape[6], in_shape[6], begin[6]
void main() {
    int i = flat_index();
    if (i >= pi(0)) return;
    int nd = pi(1), mode = pi(2);
    int rem = i, xi = 0, stride = 1;
    bool inside = true;
    for (int d = nd - 1; d >= 0; --d) {
        int n = pi(6 + d), in_n = pi(12 + d);
        int k = rem % n - pi(18 + d);
        rem /= n;
        if (k < 0 || k >= in_n) {
            if (mode == 0) inside = false;
            else if (mode == 1) k = clamp(k, 0, in_n - 1);
            else {
                int period = 2 * (in_n - 1);
                k = period > 0 ? abs(k) % period : 0;
                if (k >= in_n) k = period - k;
            }
        }
        xi += k * stride;
        stride *= in_n;
    }
    A[pi(5) + i] = inside ? A[pi(4) + xi] : pf(3);
}
