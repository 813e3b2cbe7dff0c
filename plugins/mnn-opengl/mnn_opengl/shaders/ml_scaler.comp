// Scaler (ai.onnx.ml): y[i] = (x[i] - offset[j]) * scale[j], j = (i % width) % count; the table
// (kit.ml.scaler_table: `count` offsets, then `count` scales) follows the parameters.
// P: total, width, count, x_off, y_off, table...
void main() {
    int i = flat_index();
    if (i >= pi(0)) return;
    int count = pi(2);
    int j = count == 1 ? 0 : i % pi(1);
    A[pi(4) + i] = (A[pi(3) + i] - pf(5 + j)) * pf(5 + count + j);
}
