// ONNX Runtime's dynamic uint8 quantization parameters of float blocks (DynamicQuantizeLSTM), the
// kit's dq_range.comp: one work group of LOCAL_X per block, its range widened to hold 0; writes
// (scale, zero point) as floats into the scratch: scale = (hi - lo) / 255 (1 when hi == lo), zero
// point = clamp(roundEven(-lo / scale), 0, 255). The blocks are in the arena or in the scratch.
// P: base, stride, count, out_at, in_scratch, scratch (from the buffer's end); block b:
//    src[base + b * stride ...][count], scratch[out_at + 2b ...][2]
shared float lo_s[LOCAL_X];
shared float hi_s[LOCAL_X];

void main() {
    int lid = int(gl_LocalInvocationID.x), blk = int(gl_WorkGroupID.x);
    int sbase = int(P.length()) + pi(5);
    bool in_scratch = pi(4) != 0;
    int start = pi(0) + blk * pi(1), count = pi(2);
    float lo = 0.0, hi = 0.0;
    for (int i = lid; i < count; i += LOCAL_X) {
        float v = uintBitsToFloat(in_scratch ? P[sbase + start + i] : A[start + i]);
        lo = min(lo, v);
        hi = max(hi, v);
    }
    lo_s[lid] = lo;
    hi_s[lid] = hi;
    barrier();
    for (int half_ = LOCAL_X / 2; half_ > 0; half_ >>= 1) {
        if (lid < half_) {
            lo_s[lid] = min(lo_s[lid], lo_s[lid + half_]);
            hi_s[lid] = max(hi_s[lid], hi_s[lid + half_]);
        }
        barrier();
    }
    if (lid == 0) {
        float l = lo_s[0], h = hi_s[0];
        float scale = l == h ? 1.0 : (h - l) / 255.0;
        P[sbase + pi(3) + 2 * blk] = floatBitsToUint(scale);
        P[sbase + pi(3) + 2 * blk + 1] = floatBitsToUint(clamp(roundEven(-l / scale), 0.0, 255.0));
    }
}
