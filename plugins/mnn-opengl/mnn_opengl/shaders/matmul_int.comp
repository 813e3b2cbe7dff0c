// MatMulInteger: int32 (A - a_zero_point) @ (B - b_zero_point), A [batch, M, K] and B [batch or 1, K, N]
// int8 or uint8; A's zero point per tensor or per row, B's per tensor or per column. One invocation
// per output element.
// P: total, flags (1: A signed, 2: B signed, 4: has A zp, 8: has B zp, 16: A's per row, 32: B's per
//    column), M, K, N, b_batch (kit.quant.matmul_int_params), a_off, b_off, azp_off, bzp_off, y_off
#include "bytes.glsl"

int byte_of(int base, int i, bool s) { return byte_value(A[base + (i >> 2)], uint(i), s); }

void main() {
    int i = flat_index();
    if (i >= pi(0)) return;
    int flags = pi(1), M = pi(2), K = pi(3), N = pi(4), a = pi(6), b = pi(7);
    int col = i % N, t = i / N;
    int row = t % M, bt = t / M;
    bool as_ = (flags & 1) != 0, bs = (flags & 2) != 0;
    int az = (flags & 4) != 0 ? byte_of(pi(8), (flags & 16) != 0 ? row : 0, as_) : 0;
    int bz = (flags & 8) != 0 ? byte_of(pi(9), (flags & 32) != 0 ? col : 0, bs) : 0;
    int ao = t * K, bo = bt * pi(5) + col;
    int acc = 0;
    for (int k = 0; k < K; ++k) acc += (byte_of(a, ao + k, as_) - az) * (byte_of(b, bo + k * N, bs) - bz);
    A[pi(10) + i] = uint(acc);
}
