// Cast between float32, int32, int64 and bool, four elements per invocation
// (a bool output is written a whole word at a time). Floats to ints truncate
// toward zero; int64 to int32 keeps the low word (wraps, as in C); anything to
// bool is "not zero" (NaN too).
// P: total, from_kind, to_kind, x_off, y_off
#include "elements.glsl"

const float TWO32 = 4294967296.0;

// the element as a float and as a 64-bit integer (hi, lo), both exact where representable
void load(int kind, int x, int i, out float f, out int hi, out uint lo) {
    if (kind == KIND_F32) {
        f = trunc(uintBitsToFloat(A[x + i]));
        if (abs(f) < 2147483648.0) {
            int v = int(f);
            hi = v < 0 ? -1 : 0;
            lo = uint(v);
        } else {  // a power-of-two split is exact for an integral float
            float h = floor(f / TWO32);
            hi = int(h);
            lo = uint(f - h * TWO32);
        }
        f = uintBitsToFloat(A[x + i]);
    } else if (kind == KIND_I32) {
        int v = int(A[x + i]);
        f = float(v);
        hi = v < 0 ? -1 : 0;
        lo = uint(v);
    } else if (kind == KIND_I64) {
        lo = A[x + 2 * i];
        hi = int(A[x + 2 * i + 1]);
        if ((hi == 0 && lo < 0x80000000u) || (hi == -1 && lo >= 0x80000000u)) {
            f = float(int(lo));  // fits in 32 bits
        } else {  // the magnitude, rounded once per word
            uint carry, nlo = uaddCarry(~lo, 1u, carry);
            uint nhi = ~uint(hi) + carry;
            f = hi < 0 ? -(float(nhi) * TWO32 + float(nlo)) : float(hi) * TWO32 + float(lo);
        }
    } else {
        lo = byte_at(A[x + (i >> 2)], uint(i)) != 0u ? 1u : 0u;
        hi = 0;
        f = float(lo);
    }
}

void main() {
    int first = flat_index() * 4, total = pi(0), from = pi(1), to = pi(2), x = pi(3), y = pi(4);
    if (first >= total) return;
    uint four = 0u;
    for (int k = 0; k < 4 && first + k < total; ++k) {
        int i = first + k;
        float f;
        int hi;
        uint lo;
        load(from, x, i, f, hi, lo);
        if (to == KIND_F32) {
            A[y + i] = floatBitsToUint(f);
        } else if (to == KIND_I32) {
            A[y + i] = lo;
        } else if (to == KIND_I64) {
            A[y + 2 * i] = lo;
            A[y + 2 * i + 1] = uint(hi);
        } else {
            bool nonzero = from == KIND_F32 ? (A[x + i] & 0x7FFFFFFFu) != 0u : (lo != 0u || hi != 0);
            if (nonzero) four |= 1u << uint(k * 8);
        }
    }
    if (to == KIND_BOOL) A[y + (first >> 2)] = four;
}
