// Integer a (op) b with broadcasting (strides as in binary.comp), int32 or int64
// (two's complement over two words, wrapping like C), the algorithm of the kit's
// ibinary.comp: 0 add, 1 sub, 2 mul, 5 max, 6 min; int32 also 3 div (truncating
// toward zero, computed on magnitudes: GLSL leaves negative operands undefined).
// P: total, ndim, op, is64, a_off, b_off, y_off, shape[6], sa[6], sb[6]
bool less64(uint xl, int xh, uint yl, int yh) {
    return xh < yh || (xh == yh && xl < yl);
}

void main() {
    int i = flat_index();
    if (i >= pi(0)) return;
    int ia = 0, ib = 0, rem = i;
    for (int d = pi(1) - 1; d >= 0; --d) {
        int n = pi(7 + d);
        int k = rem % n;
        rem /= n;
        ia += k * pi(13 + d);
        ib += k * pi(19 + d);
    }
    int op = pi(2), a = pi(4), b = pi(5), y = pi(6);
    if (pi(3) == 0) {
        int u = int(A[a + ia]), v = int(A[b + ib]), r;
        if (op == 0) r = u + v;
        else if (op == 1) r = u - v;
        else if (op == 2) r = u * v;
        else if (op == 3) {
            uint q = v == 0 ? 0u : uint(abs(u)) / uint(abs(v));
            r = (u < 0) != (v < 0) ? -int(q) : int(q);
        } else if (op == 5) r = max(u, v);
        else r = min(u, v);
        A[y + i] = uint(r);
        return;
    }
    uint xl = A[a + 2 * ia], yl = A[b + 2 * ib];
    uint xh = A[a + 2 * ia + 1], yh = A[b + 2 * ib + 1];
    uint rl, rh, carry;
    if (op == 0) {
        rl = uaddCarry(xl, yl, carry);
        rh = xh + yh + carry;
    } else if (op == 1) {
        rl = usubBorrow(xl, yl, carry);
        rh = xh - yh - carry;
    } else if (op == 2) {
        umulExtended(xl, yl, rh, rl);
        rh += xl * yh + xh * yl;  // the cross terms' low words: the product mod 2^64
    } else {
        bool x_less = less64(xl, int(xh), yl, int(yh));
        bool take_x = op == 5 ? !x_less : x_less;
        rl = take_x ? xl : yl;
        rh = take_x ? xh : yh;
    }
    A[y + 2 * i] = rl;
    A[y + 2 * i + 1] = rh;
}
