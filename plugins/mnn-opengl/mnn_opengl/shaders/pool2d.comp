// Max and average pooling over NCHW (GlobalAveragePool is a window of the
// whole plane). Windows start at oy*SH - PT; taps outside the input are
// skipped; average divides by the taps inside the input, or (count_include_pad)
// by those inside input plus its explicit padding.
// P: total, H, W, OH, OW, KH, KW, SH, SW, PT, PL, PB, PR, DH, DW, mode (0 max, 1 avg),
//    count_include_pad, x_off, y_off
void main() {
    int i = flat_index();
    if (i >= pi(0)) return;
    int H = pi(1), W = pi(2), OH = pi(3), OW = pi(4);
    int ox = i % OW;
    int oy = (i / OW) % OH;
    int plane = i / (OW * OH);
    int iy0 = oy * pi(7) - pi(9), ix0 = ox * pi(8) - pi(10);
    bool is_max = pi(15) == 0;
    bool include_pad = pi(16) != 0;
    int xb = pi(17) + plane * H * W;
    float acc = is_max ? -3.402823466e38 : 0.0;
    int count = 0;
    for (int ky = 0; ky < pi(5); ++ky) {
        int iy = iy0 + ky * pi(13);
        bool row_in = iy >= 0 && iy < H;
        bool row_padded = iy >= -pi(9) && iy < H + pi(11);
        for (int kx = 0; kx < pi(6); ++kx) {
            int ix = ix0 + kx * pi(14);
            if (row_in && ix >= 0 && ix < W) {
                float v = A[xb + iy * W + ix];
                acc = is_max ? max(acc, v) : acc + v;
                count += 1;
            } else if (include_pad && row_padded && ix >= -pi(10) && ix < W + pi(12)) {
                count += 1;
            }
        }
    }
    A[pi(18) + i] = is_max ? acc : acc / float(max(count, 1));
}
