// The register-tiled product shared by gemm.comp and conv2d.comp.
// A work group of TX x TY invocations computes a BM x BN block of the output
// (BM = TY*TM, BN = TX*TN): per step it stages a BK-deep slice of A (BM x BK)
// and B (BK x BN) in shared memory, then each invocation accumulates TM x TN
// outputs at rows ty + i*TY and columns tx + j*TX (strided, so neighbouring
// invocations read neighbouring shared-memory words: no bank conflicts).
// Tile sizes are specialization constants, chosen per device and problem. The loops over
// them carry [[unroll]]: specialized, their trip counts are constants, and unrolled, acc[]
// is indexed by constants and can live in registers. Without the hint 4x4 tiles ran 6x
// slower on the H200 (ResNet-18 batch 16 with every layer 4x4: GPU 31.7 ms, with it 4.9),
// which points at acc[] kept in memory by NVIDIA's compiler.
#extension GL_EXT_control_flow_attributes : require
layout(constant_id = 3) const uint TM = 4;
layout(constant_id = 4) const uint TN = 4;
layout(constant_id = 5) const uint BK = 16;

const uint TX = gl_WorkGroupSize.x;
const uint TY = gl_WorkGroupSize.y;
const uint BM = TY * TM;
const uint BN = TX * TN;
const uint NT = TX * TY;
const uint AS = BM + 1;  // padded rows of the staged tiles
const uint BS = BN + 1;

// The staged tiles hold HALF_T: float16 in the *_h variants (half the shared memory).
shared HALF_T As[BK * AS];  // As[k * AS + m]
shared HALF_T Bs[BK * BS];  // Bs[k * BS + n]

// acc[i * TN + j] += sum over the staged k of As[k][ty + i*TY] * Bs[k][tx + j*TX].
// float16 variants (*_h): float16 tiles, float32 FMAs. With MNN_HALF_FMA too (*_hf):
// the BK products of a step are summed with float16 FMAs and that partial sum is
// added to the float32 acc, so the rounding error grows with BK (16), not with K
// (up to 4608 in ResNet-18).
#if defined(MNN_HALF) && defined(MNN_HALF_FMA)
#define TILE_MULTIPLY(acc)                                          \
    {                                                               \
    HALF_T hacc[TM * TN];                                           \
    [[unroll]] for (uint i = 0; i < TM * TN; ++i) hacc[i] = HALF_T(0.0);       \
    [[unroll]] for (uint kk = 0; kk < BK; ++kk) {                              \
        HALF_T av[TM];                                              \
        HALF_T bv[TN];                                              \
        [[unroll]] for (uint i = 0; i < TM; ++i) av[i] = As[kk * AS + ty + i * TY]; \
        [[unroll]] for (uint j = 0; j < TN; ++j) bv[j] = Bs[kk * BS + tx + j * TX]; \
        [[unroll]] for (uint i = 0; i < TM; ++i)                               \
            [[unroll]] for (uint j = 0; j < TN; ++j)                           \
                hacc[i * TN + j] = fma(av[i], bv[j], hacc[i * TN + j]); \
    }                                                               \
    [[unroll]] for (uint i = 0; i < TM * TN; ++i) acc[i] += float(hacc[i]);    \
    }
#elif defined(MNN_HALF)
#define TILE_MULTIPLY(acc)                                          \
    [[unroll]] for (uint kk = 0; kk < BK; ++kk) {                              \
        float av[TM];                                               \
        float bv[TN];                                               \
        [[unroll]] for (uint i = 0; i < TM; ++i) av[i] = float(As[kk * AS + ty + i * TY]); \
        [[unroll]] for (uint j = 0; j < TN; ++j) bv[j] = float(Bs[kk * BS + tx + j * TX]); \
        [[unroll]] for (uint i = 0; i < TM; ++i)                               \
            [[unroll]] for (uint j = 0; j < TN; ++j)                           \
                acc[i * TN + j] = fma(av[i], bv[j], acc[i * TN + j]); \
    }
#else
#define TILE_MULTIPLY(acc)                                          \
    [[unroll]] for (uint kk = 0; kk < BK; ++kk) {                              \
        float av[TM];                                               \
        float bv[TN];                                               \
        [[unroll]] for (uint i = 0; i < TM; ++i) av[i] = As[kk * AS + ty + i * TY]; \
        [[unroll]] for (uint j = 0; j < TN; ++j) bv[j] = Bs[kk * BS + tx + j * TX]; \
        [[unroll]] for (uint i = 0; i < TM; ++i)                               \
            [[unroll]] for (uint j = 0; j < TN; ++j)                           \
                acc[i * TN + j] = fma(av[i], bv[j], acc[i * TN + j]); \
    }
#endif
