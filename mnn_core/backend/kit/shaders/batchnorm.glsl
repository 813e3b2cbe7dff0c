// The body of batchnorm.comp and batchnorm_h.comp (included by both).
// BatchNormalization with running statistics (inference), element-wise:
// y = (x - mean[c]) / sqrt(var[c] + eps) * scale[c] + bias[c].
#include "common.glsl"

layout(std430, binding = 0) readonly buffer X { DATA_T x[]; };
layout(std430, binding = 1) readonly buffer Scale { DATA_T scale[]; };
layout(std430, binding = 2) readonly buffer Bias { DATA_T bias[]; };
layout(std430, binding = 3) readonly buffer Mean { DATA_T mean[]; };
layout(std430, binding = 4) readonly buffer Var { DATA_T var[]; };
layout(std430, binding = 5) writeonly buffer Y { DATA_T y[]; };

layout(push_constant) uniform Params {
    uint total, inner, C;
    float eps;
} p;

void main() {
    uint i = flat_index();
    if (i >= p.total) return;
    uint c = (i / p.inner) % p.C;
    y[i] = DATA_T((float(x[i]) - float(mean[c])) / sqrt(float(var[c]) + p.eps) * float(scale[c]) + float(bias[c]));
}
