/* The int8 graph's glue ops (qlinear.c), bit-exact with mnn_core/ops/quant.py: QuantizeLinear
 * (float32 -> uint8/int8, per tensor or per axis), DequantizeLinear (uint8/int8/int32 -> float32),
 * QLinearAdd (uint8/int8, broadcasting), MaxPool on uint8/int8 planes and a byte table lookup. Tensors
 * are seen as [outer][C][inner] about the quantization axis (C = 1 per tensor); QLinearAdd walks the
 * collapsed broadcast dims of the binary ops. */
#ifndef MNN_ARM_QLINEAR_H
#define MNN_ARM_QLINEAR_H

#include "ops.h"

enum arm_qdtype { ARM_Q_UINT8 = 0, ARM_Q_INT8 = 1, ARM_Q_INT32 = 2 };

typedef struct arm_quant_state {
    arm_op op;
    int32_t qdtype;  /* the quantized side's dtype (QuantizeLinear: uint8 / int8) */
    int64_t outer, C, inner;
    float *scale;        /* C values */
    int32_t *zp;         /* C values */
    int32_t scale_input; /* >= 0: the scale arrives at run (input 1), copied into `scale` */
    int32_t zp_input;    /* >= 0: the zero point arrives at run (input 2, the quantized dtype), into `zp` */
} arm_quant_state;
int arm_quantize_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);
int arm_dequantize_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* y = saturate(rint(float32(a - za) * ma + float32(b - zb) * mb) + zc): each product and the sum one
 * float32 rounding (never fused), ma = float32(sa / sc), mb = float32(sb / sc) */
typedef struct arm_qadd_state {
    arm_op op;
    int32_t qdtype, ndim;
    int32_t runtime; /* the scales and zero points arrive at run (inputs 1, 2, 4, 5, 6, 7) */
    float ma, mb;
    int32_t za, zb, zc;
    int64_t dims[MNN_MAX_DIMS], sa[MNN_MAX_DIMS], sb[MNN_MAX_DIMS];
} arm_qadd_state;
int arm_qadd_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* MaxPool on [planes][H][W] uint8 / int8: max is order-preserving, so the stored values are compared
 * as they are (the zero point untouched); a tap outside the input never wins (the reference pads with
 * the type's lowest value) */
typedef struct arm_qmaxpool_state {
    arm_op op;
    int32_t qdtype; /* ARM_Q_UINT8 or ARM_Q_INT8 */
    int64_t planes;
    arm_pool_geom g; /* kind and the divisors unused */
} arm_qmaxpool_state;
int arm_qmaxpool_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* y = table[x] on uint8 / int8 bytes (int8 indexed by its byte): a DequantizeLinear, element-wise float
 * ops and a QuantizeLinear, all per tensor, give one of 256 outputs per input byte (mnn_arm/qlut.py fills
 * the table with the reference's own ops, so the lookup is the reference's result); without the
 * QuantizeLinear, one of 256 float32 values */
typedef struct arm_qlut_state {
    arm_op op;
    int32_t float_out;     /* 0: y = table[x] (bytes); 1: y = float32 whose byte b is planes[b][x] */
    uint8_t table[256];
    uint8_t planes[4][256]; /* float_out: the table's float32 values as four byte tables */
} arm_qlut_state;
int arm_qlut_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

#endif
