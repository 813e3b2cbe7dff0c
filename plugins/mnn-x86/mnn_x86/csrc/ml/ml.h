/* Classic machine learning on x86 (mnn_x86/_ml.pyx, ops_ml.py): the ai.onnx.ml ops with numeric
 * inputs and outputs, with the reference's (ONNX Runtime's) arithmetic types and order, so labels
 * chosen on a tie or on the 0.5 line come out the same. Inputs are [N, F] rows or one [F] row. */
#ifndef MNN_X86_ML_H
#define MNN_X86_ML_H

#include "family.h"

#define ML_MSG 200
#define ML_BLOCK 64 /* rows a tree ensemble walks tree by tree, so one tree's nodes stay in cache */

enum { ML_NONE, ML_SOFTMAX, ML_LOGISTIC, ML_SOFTMAX_ZERO, ML_PROBIT };  /* post_transform */
enum { ML_SUM, ML_AVERAGE, ML_MIN, ML_MAX };                             /* aggregate_function */
enum { ML_LEQ, ML_LT, ML_GTE, ML_GT, ML_EQ, ML_NEQ, ML_LEAF };           /* node modes */

/* post transforms (transform.c) of k scores in place, in double; PROBIT in float as ONNX Runtime */
void ml_post_transform(double *s, int32_t k, int32_t how);
float ml_probit(float p);
double ml_logistic(double x);
/* element i of a numeric tensor as the reference reads rows: integers through float32 */
double ml_load(const void *data, int32_t dtype, int64_t i);
/* N and F of an [N, F] or [F] tensor */
void ml_rows(const mnn_tensor *t, int64_t *n, int64_t *f);

/* One tree node. A leaf is its own two children (feature 0), so a walk of a tree's depth in steps
 * needs no test for the leaf: rows of a block walk in lockstep, free of mispredicted branches. */
typedef struct {
    double threshold;
    int32_t feature;
    int32_t yes, no;
    int32_t leaf; /* a leaf: its row in the weight table */
    uint8_t mode, missing_true;
} ml_node;

/* TreeEnsembleClassifier and TreeEnsembleRegressor (trees.c) */
typedef struct {
    x86_op op;
    int32_t classifier;
    int32_t k;            /* classes or targets */
    int32_t n_trees, n_nodes;
    int32_t aggregate, transform;
    int32_t f32;          /* scores add up in float32 (else float64: float64 input) */
    int32_t n_base;
    int32_t binary;       /* classifier of two classes whose weights all vote for one (ONNX Runtime's "binary case") */
    int32_t positive;     /* ... and all weights >= 0 */
    int32_t all_leq;      /* every inner node is BRANCH_LEQ (scikit-learn's): no switch on the mode */
    int64_t features;     /* F of the input at prepare: the scratch rows' width */
    const ml_node *nodes;
    const int32_t *roots;
    const int32_t *depths; /* per tree: the steps from the root to its deepest leaf */
    const double *weights; /* [leaves, k], rounded to the scores' type */
    const uint8_t *has;    /* [leaves, k]: the leaf votes for that column */
    const double *base;    /* n_base, rounded to the scores' type */
    const int64_t *labels;
    char *scratch;         /* per worker: ML_BLOCK rows of F doubles, ML_BLOCK * k scores, positions, votes */
    int64_t scratch_stride;
    char msg[ML_MSG];
} x86_tree_state;
int x86_tree_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* LinearClassifier and LinearRegressor (linear.c): scores in float64 as the reference */
typedef struct {
    x86_op op;
    int32_t classifier;
    int32_t k;             /* score columns */
    int32_t transform;
    int32_t n_labels;
    int32_t has_intercepts;
    int64_t features;
    const double *coef;    /* [k, F] */
    const double *intercepts;
    const int64_t *labels;
    char *scratch;         /* per worker: F + k doubles */
    int64_t scratch_stride;
    char msg[ML_MSG];
} x86_linear_state;
int x86_linear_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* Scaler (x - offset) * scale, Imputer, Binarizer: element i takes value[i % width] (elementwise.c) */
typedef struct {
    x86_op op;
    int32_t f32;           /* Scaler: in float32 (else float64: float64 input) */
    int64_t width;         /* 1: one value for all */
    const double *a, *b;   /* Scaler: offset, scale; Imputer: imputed values, b[0] the replaced one */
    double threshold;      /* Binarizer */
} x86_feature_state;
int x86_scaler_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);
int x86_imputer_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);
int x86_binarizer_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

/* Normalizer: each row of the last axis by its max, L1 or L2 norm (elementwise.c) */
typedef struct {
    x86_op op;
    int32_t norm; /* 0 MAX, 1 L1, 2 L2 */
} x86_normalizer_state;
int x86_normalizer_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out);

#endif
