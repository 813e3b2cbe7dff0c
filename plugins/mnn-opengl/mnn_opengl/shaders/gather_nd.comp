// GatherND of raw 32-bit words: output element i is word s of slice j (S words
// a slice); the slice starts at batch(j) * batch_stride + sum_k idx[j][k] *
// stride[k] in the data (in words), negative indices counting from the end,
// out-of-range ones clamped. j / per_batch is the batch entry (batch_dims
// flattened). 1-byte data (bool, uint8, int8; `bytes` set, sizes in elements):
// an invocation assembles one output word from four gathered bytes.
// P: total, S, m, per_batch, batch_stride, idx64, bytes, data_off, idx_off, y_off, dims[8], strides[8]
int source(int i) {  // where output element i comes from, in elements of the data
    int S = pi(1), m = pi(2);
    int s = i % S, j = i / S;
    int at = (j / pi(3)) * pi(4);
    for (int k = 0; k < m; ++k) {
        int q = j * m + k;
        int dim = pi(10 + k);
        int v = int(A[pi(8) + (pi(5) != 0 ? 2 * q : q)]);
        if (v < 0) v += dim;
        at += clamp(v, 0, dim - 1) * pi(18 + k);
    }
    return at + s;
}

void main() {
    int i = flat_index(), total = pi(0), data = pi(7), y = pi(9);
    if (pi(6) == 0) {
        if (i < total) A[y + i] = A[data + source(i)];
        return;
    }
    if (i * 4 >= total) return;
    uint word = 0u;
    for (int b = 0; b < 4 && i * 4 + b < total; ++b) {
        int src = source(i * 4 + b);
        word |= ((A[data + (src >> 2)] >> uint(8 * (src & 3))) & 255u) << uint(8 * b);
    }
    A[y + i] = word;
}
