// Pow for binary.comp: C's powf where GLSL's pow leaves x < 0 undefined.
float mnn_pow(float x, float e) {
    // GLSL's pow is undefined for x < 0 (NVIDIA returns NaN): the sign comes from an integer
    // exponent's parity, as in C's powf (GELU's tanh form cubes negative inputs)
    if (e == 0.0) return 1.0;
    if (x == 0.0) return e > 0.0 ? 0.0 : 1.0 / 0.0;
    float r = pow(abs(x), e);
    if (x < 0.0) {
        if (e != floor(e)) return 0.0 / 0.0;
        if (mod(e, 2.0) == 1.0) r = -r;
    }
    return r;
}
