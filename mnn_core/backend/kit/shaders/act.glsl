// The fused-activation vocabulary of mnn (ops/elementwise.py ACTIVATIONS, same
// order) and the unary math ops, computed in fp32 with functions accurate to
// about 1e-7 absolute: the GLSL built-ins for sin/cos/tanh have loose or
// implementation-defined precision, so those are written out here.
#define ACT_NONE 0
#define ACT_RELU 1
#define ACT_CLIP 2
#define ACT_LEAKY_RELU 3
#define ACT_SIGMOID 4
#define ACT_SILU 5
#define ACT_GELU 6
#define ACT_TANH 7
#define ACT_HARD_SIGMOID 8
#define ACT_HARD_SWISH 9
#define OP_EXP 16
#define OP_LOG 17
#define OP_SQRT 18
#define OP_NEG 19
#define OP_ABS 20
#define OP_RECIPROCAL 21
#define OP_ERF 22
#define OP_FLOOR 23
#define OP_CEIL 24
#define OP_SIN 25
#define OP_COS 26
#define OP_SOFTPLUS 27
#define OP_IDENTITY 28
#define OP_ROUND 29
#define OP_SIGN 30
#define OP_SOFTSIGN 31
#define OP_MISH 32
#define OP_ELU 33
#define OP_CELU 34
#define OP_SELU 35
#define OP_THRESHOLDED_RELU 36
#define OP_SHRINK 37
#define OP_TAN 38
#define OP_SINH 39
#define OP_COSH 40

float mnn_erf(float x) {
    // Abramowitz & Stegun 7.1.26: |error| < 1.5e-7
    float a = abs(x);
    float t = 1.0 / (1.0 + 0.3275911 * a);
    float poly = ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t;
    return sign(x) * (1.0 - poly * exp(-a * a));
}

float mnn_sigmoid(float x) {
    return 1.0 / (1.0 + exp(-x));  // exp(-x) = inf gives 0, as it should
}

float mnn_tanh(float x) {
    float a = abs(x);
    if (a < 0.0625) {  // Taylor series where 1 - exp(-2a) would cancel
        float z = x * x;
        return x * (1.0 + z * (-0.33333333333 + z * (0.13333333333 + z * -0.05396825397)));
    }
    float t = exp(-2.0 * a);
    return sign(x) * (1.0 - t) / (1.0 + t);
}

// sin and cos: Cody-Waite reduction by pi/2, then the cephes minimax
// polynomials on [-pi/4, pi/4]; q is the quadrant.
float reduce_half_pi(float x, out int q) {
    float j = floor(x * 0.63661977236758134 + 0.5);
    q = int(j) & 3;
    return ((x - j * 1.5703125) - j * 4.837512969970703125e-4) - j * 7.54978995489188216e-8;
}

float sin_poly(float r) {
    float z = r * r;
    return r + r * z * (-1.6666654611e-1 + z * (8.3321608736e-3 + z * -1.9515295891e-4));
}

float cos_poly(float r) {
    float z = r * r;
    return 1.0 - 0.5 * z + z * z * (4.166664568298827e-2 + z * (-1.388731625493765e-3 + z * 2.443315711809948e-5));
}

float mnn_sin(float x) {
    int q;
    float r = reduce_half_pi(x, q);
    float v = (q & 1) == 0 ? sin_poly(r) : cos_poly(r);
    return q >= 2 ? -v : v;
}

float mnn_cos(float x) {
    int q;
    float r = reduce_half_pi(x, q);
    float v = (q & 1) == 0 ? cos_poly(r) : sin_poly(r);
    return (q == 1 || q == 2) ? -v : v;
}

float mnn_softplus(float x) {
    // log(1 + t), t = exp(-|x|): below 1/64 a series, since 1 + t rounds away most of a
    // small t and a GPU's log is accurate only in absolute terms near 1 (Mish of x << 0
    // lost its relative precision on NVIDIA)
    float t = exp(-abs(x));
    float l = t < 0.015625 ? t * (1.0 - t * (0.5 - t * (0.33333333333 - t * 0.25))) : log(1.0 + t);
    return max(x, 0.0) + l;
}

float mnn_sinh(float x) {
    if (abs(x) < 0.0625) {  // Taylor series where exp(x) - exp(-x) would cancel
        float z = x * x;
        return x * (1.0 + z * (0.16666666667 + z * 0.00833333333));
    }
    float e = exp(x);
    return 0.5 * (e - 1.0 / e);
}

// alpha * (exp(x) - 1) for x < 0, else x
float mnn_elu(float x, float alpha) {
    return x < 0.0 ? alpha * (exp(x) - 1.0) : x;
}

float apply_act(float x, int kind, float alpha, float beta) {
    switch (kind) {
    case ACT_RELU: return max(x, 0.0);
    case ACT_CLIP: return min(max(x, alpha), beta);
    case ACT_LEAKY_RELU: return x >= 0.0 ? x : x * alpha;
    case ACT_SIGMOID: return mnn_sigmoid(x);
    case ACT_SILU: return x * mnn_sigmoid(x);
    case ACT_GELU: return 0.5 * x * (1.0 + mnn_erf(x * 0.70710678118654752));
    case ACT_TANH: return mnn_tanh(x);
    case ACT_HARD_SIGMOID: return clamp(x * alpha + beta, 0.0, 1.0);
    case ACT_HARD_SWISH: return x * clamp(x / 6.0 + 0.5, 0.0, 1.0);
    case OP_EXP: return exp(x);
    case OP_LOG: return log(x);
    case OP_SQRT: return sqrt(x);
    case OP_NEG: return -x;
    case OP_ABS: return abs(x);
    case OP_RECIPROCAL: return 1.0 / x;
    case OP_ERF: return mnn_erf(x);
    case OP_FLOOR: return floor(x);
    case OP_CEIL: return ceil(x);
    case OP_SIN: return mnn_sin(x);
    case OP_COS: return mnn_cos(x);
    case OP_SOFTPLUS: return mnn_softplus(x);
    case OP_ROUND: return roundEven(x);
    case OP_SIGN: return sign(x);
    case OP_SOFTSIGN: return x / (1.0 + abs(x));
    case OP_MISH: return x * mnn_tanh(mnn_softplus(x));
    case OP_ELU: return mnn_elu(x, alpha);
    case OP_CELU: return max(x, 0.0) + min(0.0, alpha * (exp(min(x, 0.0) / alpha) - 1.0));
    case OP_SELU: return beta * (x <= 0.0 ? alpha * (exp(x) - 1.0) : x);
    case OP_THRESHOLDED_RELU: return x > alpha ? x : 0.0;
    case OP_SHRINK: return x < -beta ? x + alpha : (x > beta ? x - alpha : 0.0);
    case OP_TAN: return mnn_sin(x) / mnn_cos(x);
    case OP_SINH: return mnn_sinh(x);
    case OP_COSH: return 0.5 * (exp(x) + exp(-x));
    default: return x;  // ACT_NONE, OP_IDENTITY
    }
}
