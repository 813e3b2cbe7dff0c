// Inference BatchNormalization over channel axis 1:
// y = (x - mean) * scale / sqrt(var + eps) + bias.
// P: total, C, inner (elements per channel plane), eps, x_off, y_off, scale, bias, mean, var
void main() {
    int i = flat_index();
    if (i >= pi(0)) return;
    int c = (i / pi(2)) % pi(1);
    float k = A[pi(6) + c] / sqrt(A[pi(9) + c] + pf(3));
    A[pi(5) + i] = (A[pi(4) + i] - A[pi(8) + c]) * k + A[pi(7) + c];
}
