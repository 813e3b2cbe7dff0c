// The register-tiled product shared by gemm.comp and conv2d.comp.
// A work group of TX x TY invocations computes a BM x BN block of the output
// (BM = TY*TM, BN = TX*TN): per step it stages a BK-deep slice of A (BM x BK)
// and B (BK x BN) in shared memory, then each invocation accumulates TM x TN
// outputs at rows ty + i*TY and columns tx + j*TX (strided, so neighbouring
// invocations read neighbouring shared-memory words: no bank conflicts).
// Tile sizes are specialization constants, chosen per device and problem.
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

shared float As[BK * AS];  // As[k * AS + m]
shared float Bs[BK * BS];  // Bs[k * BS + n]

// acc[i * TN + j] += sum over the staged k of As[k][ty + i*TY] * Bs[k][tx + j*TX]
#define TILE_MULTIPLY(acc)                                          \
    for (uint kk = 0; kk < BK; ++kk) {                              \
        float av[TM];                                               \
        float bv[TN];                                               \
        for (uint i = 0; i < TM; ++i) av[i] = As[kk * AS + ty + i * TY]; \
        for (uint j = 0; j < TN; ++j) bv[j] = Bs[kk * BS + tx + j * TX]; \
        for (uint i = 0; i < TM; ++i)                               \
            for (uint j = 0; j < TN; ++j)                           \
                acc[i * TN + j] = fma(av[i], bv[j], acc[i * TN + j]); \
    }
