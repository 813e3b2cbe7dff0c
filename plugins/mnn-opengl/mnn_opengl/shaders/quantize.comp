// Writes int8 / uint8 tensors, four elements (one word) per invocation. mode 0, QuantizeLinear of
// float32: saturate(roundEven(x / scale) + zero_point), scale and zero point per tensor or per
// channel ((i / inner) % channels); mode 1, Cast of float32 (truncated) or int32 to 8 bits (the low
// byte, wrapping as C does).
// P: total, mode, from_int, out_signed, inner, channels, has_zp, x_off, scale_off, zp_off, y_off
#include "bytes.glsl"

void main() {
    int first = flat_index() * 4, total = pi(0);
    if (first >= total) return;
    bool out_signed = pi(3) != 0;
    int x = pi(7);
    uint four = 0u;
    for (int k = 0; k < 4 && first + k < total; ++k) {
        int i = first + k;
        int q;
        if (pi(1) == 0) {
            int c = (i / pi(4)) % pi(5);
            float z = pi(6) != 0 ? float(byte_value(A[pi(9) + (c >> 2)], uint(c), out_signed)) : 0.0;
            float v = roundEven(uintBitsToFloat(A[x + i]) / uintBitsToFloat(A[pi(8) + c])) + z;
            q = int(out_signed ? clamp(v, -128.0, 127.0) : clamp(v, 0.0, 255.0));
        } else {
            q = pi(2) != 0 ? int(A[x + i]) : int(trunc(uintBitsToFloat(A[x + i])));
        }
        four |= (uint(q) & 0xFFu) << uint(k * 8);
    }
    A[pi(10) + (first >> 2)] = four;
}
