// y[i] = f(x[i]) for the activations and unary math of act.glsl.
// P: total, code, alpha, beta, x_off, y_off
#include "act.glsl"

void main() {
    int i = flat_index();
    if (i >= pi(0)) return;
    A[pi(5) + i] = apply_act(A[pi(4) + i], pi(1), pf(2), pf(3));
}
