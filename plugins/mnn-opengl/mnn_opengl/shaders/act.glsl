// The fused-activation vocabulary of mnn (ops/elementwise.py ACTIVATIONS, same
// order) and the unary math ops, in fp32. GLSL's tanh/erf are missing or loose
// in precision on some drivers, so those are written out.
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
#define OP_SOFTPLUS 27
#define OP_SIGN 30
#define OP_ELU 33

float mnn_erf(float x) {
    // Abramowitz & Stegun 7.1.26: |error| < 1.5e-7
    float a = abs(x);
    float t = 1.0 / (1.0 + 0.3275911 * a);
    float poly = ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t;
    return sign(x) * (1.0 - poly * exp(-a * a));
}

float mnn_sigmoid(float x) { return 1.0 / (1.0 + exp(-x)); }

float mnn_tanh(float x) {
    float a = abs(x);
    if (a < 0.0625) {  // Taylor series where 1 - exp(-2a) would cancel
        float z = x * x;
        return x * (1.0 + z * (-0.33333333333 + z * (0.13333333333 + z * -0.05396825397)));
    }
    float t = exp(-2.0 * min(a, 40.0));
    return sign(x) * (1.0 - t) / (1.0 + t);
}

float mnn_softplus(float x) {
    // log(1 + t), t = exp(-|x|): below 1/64 a series, since 1 + t rounds away most of a small t
    // and a GPU's log is accurate only in absolute terms near 1 (NVIDIA lost Mish's relative
    // precision for x << 0 with log(1 + exp(x)))
    float t = exp(-abs(x));
    float l = t < 0.015625 ? t * (1.0 - t * (0.5 - t * (0.33333333333 - t * 0.25))) : log(1.0 + t);
    return max(x, 0.0) + l;
}

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

float activate(float x, int code, float alpha, float beta) {
    switch (code) {
    case ACT_NONE: return x;
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
    case OP_SOFTPLUS: return mnn_softplus(x);
    case OP_SIGN: return sign(x);
    case OP_ELU: return x >= 0.0 ? x : alpha * (exp(x) - 1.0);
    }
    return x;
}
