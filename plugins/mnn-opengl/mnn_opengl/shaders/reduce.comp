// ReduceSum/Mean/Max/Min/Prod/L2/SumSquare over any set of axes: one invocation per
// output element walks the R reduced elements. Kept and reduced dims are
// collapsed on the host (up to 6 each) with their input strides.
// P: total, nk, nr, R, op (0 sum, 1 mean, 2 max, 3 min, 4 prod, 5 l2, 6 sum of squares), x_off, y_off,
//    kshape[6], kstride[6], rshape[6], rstride[6]
void main() {
    int i = flat_index();
    if (i >= pi(0)) return;
    int nk = pi(1), nr = pi(2), R = pi(3), op = pi(4);
    int base = pi(5), rem = i;
    for (int d = nk - 1; d >= 0; --d) {
        int n = pi(7 + d);
        base += (rem % n) * pi(13 + d);
        rem /= n;
    }
    float acc = op == 2 ? -1.0 / 0.0 : op == 3 ? 1.0 / 0.0 : op == 4 ? 1.0 : 0.0;
    for (int r = 0; r < R; ++r) {
        int off = base, q = r;
        for (int d = nr - 1; d >= 0; --d) {
            int n = pi(19 + d);
            off += (q % n) * pi(25 + d);
            q /= n;
        }
        float v = A[off];
        if (op == 2) acc = max(acc, v);
        else if (op == 3) acc = min(acc, v);
        else if (op == 4) acc *= v;
        else if (op >= 5) acc += v * v;
        else acc += v;
    }
    if (op == 1) acc /= float(R);
    if (op == 5) acc = sqrt(acc);
    A[pi(6) + i] = acc;
}
