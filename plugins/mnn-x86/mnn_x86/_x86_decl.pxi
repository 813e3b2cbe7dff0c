# The C side of _x86.pyx: declarations of csrc/x86.h, bf16.h and ops.h (included by _x86.pyx).

cdef extern from "x86.h" nogil:
    ctypedef struct x86_epilogue:
        float alpha, beta
        const float* bias
        int64_t bias_rs, bias_cs
        int32_t act
        float act_alpha, act_beta

    ctypedef struct x86_conv_geom:
        int64_t C, H, W, OH, OW
        int64_t kh, kw, sh, sw, dh, dw, pt, pl
        int32_t in_nc16, out_nc16
        int32_t out_stream, out_cl

    ctypedef struct x86_pool_geom:
        int64_t H, W, OH, OW, kh, kw, sh, sw, dh, dw, pt, pl
        int32_t kind, nc16
        const float* inv_rows
        const float* inv_cols

    ctypedef struct x86_kernels:
        const char* name
        int32_t mr, nr, vlen
        void (*pack_a)(const float* a, int64_t rs, int64_t cs, int64_t M, int64_t K, float* ap,
                       int threads) noexcept nogil
        void (*pack_b)(const float* b, int64_t rs, int64_t cs, int64_t K, int64_t N, float* bp,
                       int threads) noexcept nogil
        void (*gemm)(int64_t M, int64_t N, int64_t K, const float* ap, const float* bp, float* c, int64_t ldc,
                     const x86_epilogue* e, int threads) noexcept nogil
        void (*direct_plan)(const x86_conv_geom* g, int64_t N, int64_t O, int threads, int64_t* rows,
                            int64_t* parts, int64_t* worker_floats, int64_t* w_floats) noexcept nogil
        void (*direct_pack)(const float* w, int64_t O, int64_t K, float* wd) noexcept nogil
        void (*direct_pool_plan)(const x86_conv_geom* g, const x86_pool_geom* pg, int64_t N, int64_t O,
                                 int threads, int64_t* rows, int64_t* parts, int64_t* worker_floats) noexcept nogil
        void* gap_panel
        void (*dco_plan)(const x86_conv_geom* g, int64_t N, int64_t O, int threads, int64_t* rows,
                         int64_t* parts, int64_t* worker_floats, int64_t* w_floats) noexcept nogil
        void (*dco_pack)(const float* w, int64_t O, int64_t K, float* wd) noexcept nogil
        void* dco_conv

    int64_t x86_depthwise_work_floats(const x86_conv_geom* g, int vlen)
    int64_t x86_pwdw_floats(const x86_conv_geom* g)
    void x86_conv_plan(const x86_kernels* k, const x86_conv_geom* g, int64_t images, int64_t og, int threads,
                       int64_t* chunk_cols, int32_t* per_item)
    int64_t x86_pool_work_floats(const x86_pool_geom* g)
    void x86_wino_plan(const x86_kernels* k, int64_t N, int64_t C, int64_t O, int64_t OH, int64_t OW, int threads,
                       int nc16, int64_t* tc, int32_t* per_chunk, int32_t* gemm_t, int64_t* work_floats)
    int x86_isa_compiled(const char* isa)
    int x86_cpu_supports(const char* isa)
    int x86_omp_usable
    const x86_kernels* x86_kernels_for(const char* isa)
    int x86_avx512_rows()
    int x86_set_avx512_rows(int rows)
    double x86_fma512_cost_ratio()
    const x86_kernels* x86_kernels_tile(const char* isa, int rows)

cdef extern from "bf16.h" nogil:
    ctypedef struct x86_bf16_kernels:
        const char* name
        int32_t mr, nr
        void (*pack_a)(const float* a, int64_t rs, int64_t cs, int64_t M, int64_t K, uint32_t* ap,
                       int threads) noexcept nogil
        void (*pack_b)(const float* b, int64_t rs, int64_t cs, int64_t K, int64_t N, uint32_t* bp,
                       int threads) noexcept nogil

    ctypedef struct x86_bf16_conv:
        const x86_bf16_kernels* kb
        const uint32_t* w
        int64_t w_group_stride
        uint32_t* bp
        int64_t bp_words

    ctypedef struct x86_bf16_matmul:
        const x86_bf16_kernels* kb
        const uint32_t* b
        int64_t b_stride
        uint32_t* a

    int64_t x86_bf16_words(int64_t rows, int64_t tile, int64_t K)
    int x86_cpu_supports_bf16()
    const x86_bf16_kernels* x86_bf16_kernels_for(const char* isa)

cdef extern from "x86.h" nogil:
    ctypedef struct x86_pool_api:
        pass
    const x86_pool_api x86_pool_functions

cdef extern from "ops.h" nogil:
    ctypedef struct x86_op:
        const x86_kernels* k
        int32_t threads
        const char* error

    const char* x86_op_error(void* state) noexcept

    ctypedef struct x86_conv_state:
        x86_op op
        int32_t depthwise, weight_input, bias_input
        int64_t N, O, group, og
        x86_conv_geom g
        float* w
        int64_t w_group_stride
        const float* bias
        x86_epilogue epi
        const x86_bf16_conv* bf16
        float* work
        int64_t chunk_cols, chunk_floats
        int32_t per_item
        int32_t winograd
        int32_t wino_gemm_t
        int32_t transposed
        float* t_work
        int64_t merge_h
        int32_t pointwise
        int32_t direct
        int64_t d_rows, d_parts, d_worker_floats
        int32_t pool
        x86_pool_geom pg
        int32_t gap
        int32_t res_input
        x86_epilogue res_act
        int32_t pwdw
        x86_conv_geom dg
        const float* dw_w
        const float* dw_bias
        x86_epilogue dw_epi

    ctypedef struct x86_matmul_state:
        x86_op op
        int64_t M, N, K, batch
        int64_t a_rs, a_cs, b_rs, b_cs
        const int64_t* a_off
        const int64_t* b_off
        const float* b_packed
        int64_t b_packed_stride
        int64_t a_work_floats
        int64_t b_work_floats
        int32_t bias_input
        x86_epilogue epi
        const x86_bf16_matmul* bf16
        const float* b_narrow
        int64_t b_narrow_kp

    ctypedef struct x86_attention_walk:
        int64_t heads, bs, hs, rs, off

    ctypedef struct x86_attention_state:
        x86_op op
        int64_t batch, M, N, D, Dv
        int32_t k_rows
        int32_t mask_input
        const int64_t* mask_off
        int64_t mask_cs
        x86_attention_walk q, k, v, y
        float scale
        x86_epilogue epi

    ctypedef struct x86_binary_state:
        x86_op op
        int32_t binop, ndim
        int64_t dims[8]
        int64_t sa[8]
        int64_t sb[8]

    ctypedef struct x86_unary_state:
        x86_op op
        x86_epilogue epi

    ctypedef struct x86_affine_state:
        x86_op op
        int64_t outer, C, inner
        float* scale
        float* shift
        int32_t runtime_params
        float eps

    ctypedef struct x86_norm_state:
        x86_op op
        int64_t rows, n, per_row
        float eps
        const float* scale
        const float* shift
        int32_t scale_input, shift_input

    ctypedef struct x86_reduce_state:
        x86_op op
        int64_t rows, n
        int32_t kind

    ctypedef struct x86_softmax_state:
        x86_op op
        int64_t outer, axis, inner
        int32_t log

    ctypedef struct x86_pool_state:
        x86_op op
        int64_t planes
        x86_pool_geom g
        float* work

    ctypedef struct x86_concat_state:
        x86_op op
        int64_t outer
        int32_t n
        const int64_t* block

    ctypedef struct x86_transpose_state:
        x86_op op
        int32_t ndim
        int64_t dims[8]
        int64_t strides[8]

    int x86_conv_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    void x86_conv_transposed_plan(const x86_kernels* k, const x86_conv_geom* g, int64_t O, int threads,
                                  int merged, int64_t* chunk, int32_t* per_item, int64_t* work_floats)
    int x86_matmul_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int x86_attention_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int x86_binary_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int x86_unary_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int x86_affine_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int x86_norm_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int x86_reduce_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int x86_softmax_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int x86_pool_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int x86_concat_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int x86_transpose_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
