// ReduceSum/Mean/Max/Min/Prod/L2/SumSquare over any set of axes: one work group
// per output element, its LOCAL_X invocations striding over the R reduced
// elements, then a tree in shared memory. Kept and reduced dims are collapsed on
// the host (up to 6 each) with their input strides. Long reductions need the
// group: llvmpipe stops a loop nest after 65535 iterations.
// P: total, nk, nr, R, op (0 sum, 1 mean, 2 max, 3 min, 4 prod, 5 l2, 6 sum of squares), x_off, y_off,
//    kshape[6], kstride[6], rshape[6], rstride[6]
shared float part[LOCAL_X];

float combine(int op, float a, float b) {
    if (op == 2) return max(a, b);
    if (op == 3) return min(a, b);
    if (op == 4) return a * b;
    return a + b;
}

void main() {
    int i = int(gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x);
    int lid = int(gl_LocalInvocationID.x);
    if (i >= pi(0)) return;  // the whole group returns together
    int nk = pi(1), nr = pi(2), R = pi(3), op = pi(4);
    int base = pi(5), rem = i;
    for (int d = nk - 1; d >= 0; --d) {
        int n = pi(7 + d);
        base += (rem % n) * pi(13 + d);
        rem /= n;
    }
    float acc = op == 2 ? -1.0 / 0.0 : op == 3 ? 1.0 / 0.0 : op == 4 ? 1.0 : 0.0;
    for (int r = lid; r < R; r += LOCAL_X) {
        int off = base, q = r;
        for (int d = nr - 1; d >= 0; --d) {
            int n = pi(19 + d);
            off += (q % n) * pi(25 + d);
            q /= n;
        }
        float v = A[off];
        acc = combine(op, acc, op >= 5 ? v * v : v);
    }
    part[lid] = acc;
    barrier();
    for (int s = LOCAL_X / 2; s > 0; s >>= 1) {
        if (lid < s) part[lid] = combine(op, part[lid], part[lid + s]);
        barrier();
    }
    if (lid != 0) return;
    acc = part[0];
    if (op == 1) acc /= float(R);
    if (op == 5) acc = sqrt(acc);
    A[pi(6) + i] = acc;
}
