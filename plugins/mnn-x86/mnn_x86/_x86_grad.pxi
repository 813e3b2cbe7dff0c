# Cython glue of the training kernels (csrc/ops_grad.h, csrc/op_grad.c):
# included at the end of _x86.pyx, whose Execution, Buffer and helpers it
# uses. One factory per op family; mnn_x86/ops_grad.py computes the parameters.

cdef extern from "ops_grad.h" nogil:
    ctypedef struct x86_grad_kernels:
        const char* name

    ctypedef struct x86_convgrad_geom:
        x86_conv_geom g
        int64_t N, O, group

    ctypedef struct x86_ce_geom:
        int64_t outer, C, inner, ignore_index
        float label_smoothing
        int32_t target_kind, reduction

    ctypedef struct x86_optim_params:
        float lr, step
        float momentum, dampening, weight_decay
        int32_t nesterov, decoupled
        float beta1, beta2, eps

    int64_t x86_conv_grad_weight_work_floats(const x86_convgrad_geom* g)
    int64_t x86_conv_grad_input_work_floats(const x86_convgrad_geom* g)
    int64_t x86_conv_forward_work_floats(const x86_convgrad_geom* g)
    const x86_grad_kernels* x86_grad_kernels_for(const char* isa)

    ctypedef struct x86_convgrad_state:
        x86_op op
        const x86_grad_kernels* gk
        int32_t which, relu
        x86_convgrad_geom g
        float* work

    ctypedef struct x86_poolgrad_state:
        x86_op op
        const x86_grad_kernels* gk
        int32_t forward
        int64_t planes
        x86_pool_geom g

    ctypedef struct x86_relugrad_state:
        x86_op op
        const x86_grad_kernels* gk

    ctypedef struct x86_sumto_state:
        x86_op op
        const x86_grad_kernels* gk
        int32_t ndim
        int64_t ysize
        int64_t dims[8]
        int64_t ystrides[8]

    ctypedef struct x86_ce_state:
        x86_op op
        const x86_grad_kernels* gk
        int32_t grad
        x86_ce_geom g

    ctypedef struct x86_optim_state:
        x86_op op
        const x86_grad_kernels* gk
        int32_t kind
        x86_optim_params p

    ctypedef struct x86_gemmrt_state:
        x86_op op
        const x86_grad_kernels* gk
        int64_t M, N, K, ars, acs
        int32_t transB, relu

    int x86_gemmrt_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int x86_convgrad_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int x86_poolgrad_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int x86_relugrad_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int x86_sumto_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int x86_ce_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept
    int x86_optim_run(void*, const mnn_tensor*, int32_t, mnn_tensor*, int32_t) noexcept


cdef const x86_grad_kernels* _grad_table(str isa) except NULL:
    cdef const x86_grad_kernels* gk = x86_grad_kernels_for(isa.encode())
    if gk == NULL:
        raise RuntimeError(f"x86 training kernels for ISA {isa!r} are not runnable on this CPU")
    return gk


def conv_grad(str isa, int threads, str name, int which, dict p, bint relu=False):
    """ConvGradWeight (which 0), ConvGradInput (which 1) or a training step's forward
    Conv (which 2, ReLU fused when relu). p: N, O, group and one group's geometry
    (C = input channels per group, H, W, OH, OW, kh, kw, sh, sw, dh, dw, pt, pl)."""
    cdef Execution ex = _execution(name, sizeof(x86_convgrad_state), x86_convgrad_run, isa, threads)
    cdef x86_convgrad_state* s = <x86_convgrad_state*>ex.state
    cdef Buffer work
    s.gk = _grad_table(isa)
    s.which = which
    s.relu = relu
    _conv_geom(&s.g.g, p)
    s.g.N, s.g.O, s.g.group = p["N"], p["O"], p["group"]
    if which == 0:
        work = _floats(max(threads, 1) * x86_conv_grad_weight_work_floats(&s.g))
    elif which == 1:
        work = _floats(max(threads, 1) * x86_conv_grad_input_work_floats(&s.g))
    else:
        work = _floats(max(threads, 1) * x86_conv_forward_work_floats(&s.g))
    ex.keep.append(work)
    s.work = <float*>work.ptr
    return ex


def max_pool_grad(str isa, int threads, str name, int64_t planes, dict p, bint forward=False):
    """MaxPoolGrad over planes; p: H, W, OH, OW, kh, kw, sh, sw, dh, dw, pt, pl. forward: MaxPool
    itself instead (2x2 windows at stride 2, no padding, OH = H // 2, OW = W // 2 only)."""
    cdef Execution ex = _execution(name, sizeof(x86_poolgrad_state), x86_poolgrad_run, isa, threads)
    cdef x86_poolgrad_state* s = <x86_poolgrad_state*>ex.state
    s.gk = _grad_table(isa)
    s.forward = forward
    s.planes = planes
    s.g.H, s.g.W, s.g.OH, s.g.OW = p["H"], p["W"], p["OH"], p["OW"]
    s.g.kh, s.g.kw, s.g.sh, s.g.sw = p["kh"], p["kw"], p["sh"], p["sw"]
    s.g.dh, s.g.dw, s.g.pt, s.g.pl = p["dh"], p["dw"], p["pt"], p["pl"]
    return ex


def relu_grad(str isa, int threads, str name):
    cdef Execution ex = _execution(name, sizeof(x86_relugrad_state), x86_relugrad_run, isa, threads)
    (<x86_relugrad_state*>ex.state).gk = _grad_table(isa)
    return ex


def sum_to(str isa, int threads, str name, int64_t ysize, dims, ystrides):
    """SumToShape over 1 to 8 collapsed dims; ystrides 0 on the summed ones."""
    if not 1 <= len(dims) <= 8:
        raise ValueError(f"x86 SumToShape takes 1 to 8 collapsed dims, got {len(dims)}")
    cdef Execution ex = _execution(name, sizeof(x86_sumto_state), x86_sumto_run, isa, threads)
    cdef x86_sumto_state* s = <x86_sumto_state*>ex.state
    cdef int i
    s.gk = _grad_table(isa)
    s.ysize, s.ndim = ysize, len(dims)
    for i in range(s.ndim):
        s.dims[i], s.ystrides[i] = dims[i], ystrides[i]
    return ex


def softmax_ce(str isa, int threads, str name, bint grad, int64_t outer, int64_t C, int64_t inner,
               int target_kind, int reduction, int64_t ignore_index, float label_smoothing):
    """SoftmaxCrossEntropy (grad False) or its gradient (grad True)."""
    cdef Execution ex = _execution(name, sizeof(x86_ce_state), x86_ce_run, isa, threads)
    cdef x86_ce_state* s = <x86_ce_state*>ex.state
    s.gk = _grad_table(isa)
    s.grad = grad
    s.g.outer, s.g.C, s.g.inner, s.g.ignore_index = outer, C, inner, ignore_index
    s.g.label_smoothing, s.g.target_kind, s.g.reduction = label_smoothing, target_kind, reduction
    return ex


def optim_update(str isa, int threads, str name, int kind, dict a):
    """SGDUpdate (kind 0), SGDMomentumUpdate (1), AdamUpdate (2); a: the op's attributes."""
    cdef Execution ex = _execution(name, sizeof(x86_optim_state), x86_optim_run, isa, threads)
    cdef x86_optim_state* s = <x86_optim_state*>ex.state
    s.gk = _grad_table(isa)
    s.kind = kind
    s.p.momentum = a.get("momentum", 0.0)
    s.p.dampening = a.get("dampening", 0.0)
    s.p.weight_decay = a.get("weight_decay", 0.0)
    s.p.nesterov = a.get("nesterov", 0)
    s.p.decoupled = a.get("decoupled", 0)
    s.p.beta1 = a.get("beta1", 0.9)
    s.p.beta2 = a.get("beta2", 0.999)
    s.p.eps = a.get("eps", 1e-8)
    return ex


def gemm_rt(str isa, int threads, str name, int64_t M, int64_t N, int64_t K, int64_t ars, int64_t acs,
            bint transB, bint relu):
    """Gemm of runtime operands, nothing packed (see x86_grad.h gemm_rt)."""
    if transB and acs != 1:
        raise ValueError("x86 gemm_rt with transB needs A's rows contiguous (acs == 1)")
    cdef Execution ex = _execution(name, sizeof(x86_gemmrt_state), x86_gemmrt_run, isa, threads)
    cdef x86_gemmrt_state* s = <x86_gemmrt_state*>ex.state
    s.gk = _grad_table(isa)
    s.M, s.N, s.K, s.ars, s.acs = M, N, K, ars, acs
    s.transB, s.relu = transB, relu
    return ex
