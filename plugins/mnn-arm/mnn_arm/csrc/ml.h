/* Tree ensembles of mnn-arm (ml.c): TreeEnsembleClassifier and TreeEnsembleRegressor (ai.onnx.ml) with
 * the reference's arithmetic (mnn_core/ops/ml_trees.py, ONNX Runtime's): rows compared in float64 (integer
 * features through float32), the leaves' weights added tree by tree in float32 (float64 for float64
 * input), so a vote on the 0.5 line or a tie falls the same way. Inputs are [N, F] rows or one [F] row. */
#ifndef MNN_ARM_ML_H
#define MNN_ARM_ML_H

#include "ops.h"

#define ARM_ML_BLOCK 64 /* rows walked tree by tree together, so one tree's nodes stay in cache */

enum arm_ml_post { ARM_ML_NONE, ARM_ML_SOFTMAX, ARM_ML_LOGISTIC, ARM_ML_SOFTMAX_ZERO, ARM_ML_PROBIT };
enum arm_ml_aggregate { ARM_ML_SUM, ARM_ML_AVERAGE, ARM_ML_MIN, ARM_ML_MAX };
enum arm_ml_mode { ARM_ML_LEQ, ARM_ML_LT, ARM_ML_GTE, ARM_ML_GT, ARM_ML_EQ, ARM_ML_NEQ, ARM_ML_LEAF };

/* One node. A leaf is its own two children, so a walk of its tree's depth needs no leaf test: the rows
 * of a block step in lockstep without data-dependent branches. */
typedef struct arm_ml_node {
    double threshold;
    int32_t feature;
    int32_t yes, no;
    int32_t leaf; /* a leaf: its row in the weight table */
    uint8_t mode, missing_true;
} arm_ml_node;

typedef struct arm_tree_state {
    arm_op op;
    int32_t classifier;
    int32_t k; /* classes or targets */
    int32_t n_trees, n_nodes;
    int32_t aggregate, post;
    int32_t f32;      /* scores add up in float32 (else float64: float64 input) */
    int32_t n_base;
    int32_t binary;   /* two classes whose weights all vote for one (ONNX Runtime's "binary case") */
    int32_t positive; /* ... and every class weight >= 0 */
    int32_t all_leq;  /* every inner node is BRANCH_LEQ (scikit-learn's): no switch on the mode */
    int32_t slices;   /* scratch slices: the most threads a run splits over */
    int64_t features;
    const arm_ml_node *nodes;
    const int32_t *roots, *depths; /* per tree: its root, the steps from it to its deepest leaf */
    const double *weights;         /* [leaves][k], rounded to the scores' type */
    const uint8_t *has;            /* [leaves][k]: the leaf votes for that column */
    const double *base;            /* n_base, rounded to the scores' type */
    const int64_t *labels;
    char *scratch; /* per slice: ARM_ML_BLOCK rows of F doubles, scores, positions, votes */
    int64_t scratch_stride;
} arm_tree_state;

/* bytes of one slice of scratch */
int64_t arm_tree_scratch_bytes(int64_t features, int32_t k);
int arm_tree_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

#endif
