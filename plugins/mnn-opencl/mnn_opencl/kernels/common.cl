/* Shared by every kernel file: the weight storage type and the activation vocabulary.
 *
 * All tensors live in one arena buffer as float32; a kernel takes each tensor
 * as (pointer, element offset). With -DMNN_FP16 (precision="low" on a device
 * with cl_khr_fp16) convolution weights are packed as half, which halves their
 * memory traffic; they are read with vload_half and every sum is accumulated
 * in float, so accuracy stays close to fp32.
 */
#ifdef MNN_FP16
typedef half wtype;
#define LOAD_W4(i, p) vload_half4((i), (p))
#define STORE_W(v, i, p) vstore_half((v), (i), (p))
#else
typedef float wtype;
#define LOAD_W4(i, p) vload4((i), (p))
#define STORE_W(v, i, p) ((p)[i] = (v))
#endif

/* MNN_ACT_*: the fused activations, abi.h's enum mnn_activation, defined ahead of this file
 * by runtime.kernel_source() (mnn_core.backend.kit.activation.activation_defines()), inlined into
 * every kernel that fuses one; 20-50 (unary_math, eltwise.cl) add the unary math ops. */
inline float sigmoid_f(float x) {
    if (x >= 0.0f) return 1.0f / (1.0f + exp(-x));
    float e = exp(x);
    return e / (1.0f + e);
}

inline float activate(float x, int kind, float a, float b) {
    switch (kind) {
    case MNN_ACT_RELU: return fmax(x, 0.0f);
    case MNN_ACT_CLIP: return fmin(fmax(x, a), b);
    case MNN_ACT_LEAKY_RELU: return x >= 0.0f ? x : x * a;
    case MNN_ACT_SIGMOID: return sigmoid_f(x);
    case MNN_ACT_SILU: return x * sigmoid_f(x);
    case MNN_ACT_GELU: return 0.5f * x * (1.0f + erf(x / 1.41421356237309515f));
    case MNN_ACT_TANH: return tanh(x);
    case MNN_ACT_HARD_SIGMOID: return clamp(x * a + b, 0.0f, 1.0f);
    case MNN_ACT_HARD_SWISH: return x * clamp(x / 6.0f + 0.5f, 0.0f, 1.0f);
    default: return x;
    }
}

inline float4 activate4(float4 v, int kind, float a, float b) {
    if (kind == MNN_ACT_NONE) return v;
    if (kind == MNN_ACT_RELU) return fmax(v, (float4)(0.0f));
    if (kind == MNN_ACT_CLIP) return fmin(fmax(v, (float4)(a)), (float4)(b));
    return (float4)(activate(v.s0, kind, a, b), activate(v.s1, kind, a, b),
                    activate(v.s2, kind, a, b), activate(v.s3, kind, a, b));
}

/* Offsets of element `i` of a broadcast iteration over `shape` (row-major, `ndim`
 * dims) in two operands with strides `s1`, `s2` (0 on broadcast dims). */
inline void strided_offsets2(int i, int ndim, int8 shape, int8 s1, int8 s2, int *o1, int *o2) {
    int sh[8], a[8], b[8];
    vstore8(shape, 0, sh);
    vstore8(s1, 0, a);
    vstore8(s2, 0, b);
    int r = i, x = 0, y = 0;
    for (int d = ndim - 1; d >= 0; --d) {
        int c = r % sh[d];
        r /= sh[d];
        x += c * a[d];
        y += c * b[d];
    }
    *o1 = x;
    *o2 = y;
}
