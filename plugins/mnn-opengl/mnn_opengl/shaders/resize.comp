// Resize of NCHW images: each output pixel blends up to 2 x 2 input pixels.
// After the 7 scalar parameters comes a table, per output row then per output
// column, of (lo, hi, w_lo, w_hi): source indices as ints, weights as floats
// (computed on the host as the reference does; nearest mode has weights 1, 0).
// P: total, H, W, OH, OW, x_off, y_off, table[4 * (OH + OW)]
void main() {
    int i = flat_index();
    if (i >= pi(0)) return;
    int H = pi(1), W = pi(2), OH = pi(3), OW = pi(4);
    int ox = i % OW, t = i / OW;
    int oy = t % OH, nc = t / OH;
    int ty = 7 + oy * 4, tx = 7 + (OH + ox) * 4;
    int base = pi(5) + nc * H * W;
    int y0 = base + pi(ty) * W, y1 = base + pi(ty + 1) * W;
    int x0 = pi(tx), x1 = pi(tx + 1);
    float wx0 = pf(tx + 2), wx1 = pf(tx + 3);
    float top = A[y0 + x0] * wx0, bottom = A[y1 + x0] * wx0;
    if (wx1 != 0.0) {
        top += A[y0 + x1] * wx1;
        bottom += A[y1 + x1] * wx1;
    }
    float v = top * pf(ty + 2);
    float wy1 = pf(ty + 3);
    if (wy1 != 0.0) v += bottom * wy1;
    A[pi(6) + i] = v;
}
