/* Data movement on x86 (mnn_x86/_movement.pyx, ops_movement.py): ops that copy, select or convert
 * elements and do no arithmetic. Any dtype moves as bytes of mnn_dtype_size. */
#ifndef MNN_X86_MOVEMENT_H
#define MNN_X86_MOVEMENT_H

#include "family.h"

#define MV_DIMS 16        /* a Tile view doubles the rank: (r0, d0, r1, d1, ...) */
#define MV_MAX_OUTPUTS 64 /* Split's most pieces (mnn_core.ops.shape.MAX_SPLIT_OUTPUTS) */
#define MV_MSG 200

/* Identity: a copy of the input, cut into ranges for the pool */
typedef struct {
    x86_op op;
} x86_copy_state;
int x86_copy_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* A dense output read from the input at base + sum(index[d] * stride[d]) elements: Slice, Split (one per
 * piece), Expand (stride 0), Tile, DepthToSpace, SpaceToDepth. Dims are merged at prepare. */
typedef struct {
    int32_t ndim;
    int64_t dims[MV_DIMS];
    int64_t stride[MV_DIMS];
    int64_t base;
} x86_strided_plan;

typedef struct {
    x86_op op;
    int32_t elsize;
    int32_t n_plans; /* plan p writes output p */
    x86_strided_plan plan[MV_MAX_OUTPUTS];
} x86_strided_state;
int x86_strided_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* Where: out = cond ? x : y with each input's broadcast strides (0 on broadcast dims) */
typedef struct {
    x86_op op;
    int32_t elsize;
    int32_t ndim;
    int64_t dims[MV_DIMS];
    int64_t stride[3][MV_DIMS]; /* cond, x, y */
} x86_where_state;
int x86_where_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* Pad: per axis, each output index's input offset in elements, or -1 (the constant). maps holds the
 * axes' tables end to end; [lo, hi) of the last axis reads a contiguous run of the input. */
typedef struct {
    x86_op op;
    int32_t elsize;
    int32_t ndim;
    int64_t dims[MNN_MAX_DIMS];
    const int64_t *maps[MNN_MAX_DIMS];
    int64_t lo, hi;
    unsigned char value[8];
} x86_pad_state;
int x86_pad_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* Cast between the numeric dtypes (numpy's astype) */
typedef struct {
    x86_op op;
    int32_t from, to;
} x86_cast_state;
int x86_cast_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* The index ops (index.c). Out-of-range indices fail the run with a message in msg. */
typedef struct {
    x86_op op;
    int32_t elsize;
    int32_t reduction;  /* scatters: 0 none, 1 add, 2 mul, 3 max, 4 min */
    int32_t ndim;       /* GatherElements, ScatterElements: the indices' rank */
    int32_t axis;
    int64_t outer, dim, inner; /* Gather: data as [outer, dim, inner]; ReverseSequence: [T, B, inner] or [B, T] */
    int64_t dims[MNN_MAX_DIMS];     /* the indices' dims (GatherElements, ScatterElements) */
    int64_t dstride[MNN_MAX_DIMS];  /* the data's element strides */
    int64_t ddims[MNN_MAX_DIMS];    /* the data's dims */
    int64_t batch, per_batch, k;    /* GatherND / ScatterND: batches, tuples per batch, tuple length */
    int64_t batch_stride;
    int32_t time_major;             /* ReverseSequence: time_axis 0 */
    unsigned char value[8];         /* EyeLike: one of the dtype */
    int64_t diag;                   /* Trilu / EyeLike: k; Trilu rows, cols in dim, inner */
    int32_t upper;
    char msg[MV_MSG];
} x86_index_state;
int x86_gather_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);
int x86_gather_elements_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);
int x86_scatter_elements_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);
int x86_gather_nd_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);
int x86_scatter_nd_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);
int x86_onehot_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);
int x86_reverse_sequence_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);
int x86_trilu_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);
int x86_eyelike_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

#endif
