/* Part of grad_impl.h (the training kernels), included there once per ISA: convolution forward and backward, by the direct path (stride 1) or im2col. */

/* -- the direct path of stride-1 convolutions (x86_grad.h: x86_direct_geom) ----------------------- */

#if VLEN >= 16 /* AVX-512, 32 registers: 8 rows x 3 vectors or up to 6 rows x 4 vectors (24 accumulators) */
#define DC_MR 8
#define DC_NV 3
#define DC_NV_SHORT 4 /* vectors per row when M <= DC_MR_SHORT */
#define DC_MR_SHORT 6
#else /* AVX2 (16 registers) and scalar: 6 rows x 2 vectors */
#define DC_MR 6
#define DC_NV 2
#define DC_NV_SHORT 2
#define DC_MR_SHORT 6
#endif

/* C(r, n) (+)= sum_k A(r, k) * B_k[n] for `rows` rows and nv whole vectors of columns, where
 * A(r, k) = a[r*ars + k*acs] and B_k = b + boff[k]: the B rows are runs at any offsets (the taps
 * of a padded input, or the rows of a wide dy). accum: start from C instead of zero.
 * Two instances, each with its accumulator array exactly as large as its tile: a larger array
 * (one for both shapes) is more than GCC scalarizes, and it then stores the accumulators to
 * the stack at every k. */
#define DC_TILE(NAME, MRMAX, NVMAX)                                                                               \
static inline __attribute__((always_inline)) void FN(NAME)(const int rows, const int nv, const float *a,          \
                                                          int64_t ars, int64_t acs, const float *b,               \
                                                          const int64_t *boff, int64_t K, float *c, int64_t ldc,  \
                                                          const float *bias, int relu, int accum) {               \
    vf acc[MRMAX][NVMAX];                                                                                         \
    for (int r = 0; r < rows; ++r)                                                                                \
        for (int v = 0; v < nv; ++v) acc[r][v] = accum ? vf_load(c + r * ldc + v * VLEN) : vf_zero();             \
    for (int64_t k = 0; k < K; ++k) {                                                                             \
        const float *bk = b + boff[k];                                                                            \
        vf bv[NVMAX];                                                                                             \
        for (int v = 0; v < nv; ++v) bv[v] = vf_load(bk + v * VLEN);                                              \
        for (int r = 0; r < rows; ++r) {                                                                          \
            const vf av = vf_set1(a[r * ars + k * acs]);                                                          \
            for (int v = 0; v < nv; ++v) acc[r][v] = vf_fma(av, bv[v], acc[r][v]);                                \
        }                                                                                                         \
    }                                                                                                             \
    for (int r = 0; r < rows; ++r) {                                                                              \
        const vf bb = bias ? vf_set1(bias[r]) : vf_zero();                                                        \
        for (int v = 0; v < nv; ++v) {                                                                            \
            vf o = vf_add(acc[r][v], bb);                                                                         \
            if (relu) o = vf_relu(o);                                                                   \
            vf_store(c + r * ldc + v * VLEN, o);                                                                  \
        }                                                                                                         \
    }                                                                                                             \
}
DC_TILE(dc_tile_wide, DC_MR, DC_NV)
DC_TILE(dc_tile_short, DC_MR_SHORT, DC_NV_SHORT)
#undef DC_TILE

#define DC_CALL(T, R, NV) FN(T)(R, NV, am, ars, acs, b + n0, boff, K, cm, ldc, bm, relu, accum)
#define DC_NV3(T, R)                                                                                            \
    switch (nvt) {                                                                                              \
    case 1: DC_CALL(T, R, 1); break;                                                                            \
    case 2: DC_CALL(T, R, 2); break;                                                                            \
    default: DC_CALL(T, R, 3); break;                                                                           \
    }
#define DC_NV4(T, R)                                                                                            \
    switch (nvt) {                                                                                              \
    case 1: DC_CALL(T, R, 1); break;                                                                            \
    case 2: DC_CALL(T, R, 2); break;                                                                            \
    case 3: DC_CALL(T, R, 3); break;                                                                            \
    default: DC_CALL(T, R, 4); break;                                                                           \
    }
#if DC_NV_SHORT == 4
#define DC_SHORT(R) DC_NV4(dc_tile_short, R)
#else
#define DC_SHORT(R) DC_NV2(dc_tile_short, R)
#endif
#if DC_NV == 3
#define DC_WIDE(R) DC_NV3(dc_tile_wide, R)
#else
#define DC_WIDE(R) DC_NV2(dc_tile_wide, R)
#endif
#define DC_NV2(T, R)                                                                                            \
    switch (nvt) {                                                                                              \
    case 1: DC_CALL(T, R, 1); break;                                                                            \
    default: DC_CALL(T, R, 2); break;                                                                           \
    }

/* C = act(A @ B + bias) (accum: C += A @ B) over M rows and N columns (a multiple of VLEN: the wide
 * rows are padded to x86_direct_geom.Pr), B_k = b + boff[k]: up to
 * DC_MR_SHORT rows as one block of short, broad tiles, more in blocks of DC_MR rows */
static void FN(dc_gemm)(int64_t M, int64_t N, int64_t K, const float *a, int64_t ars, int64_t acs, const float *b,
                        const int64_t *boff, float *c, int64_t ldc, const float *bias, int relu, int accum) {
    const int is_short = M <= DC_MR_SHORT;
    const int64_t mr = is_short ? M : DC_MR, nvmax = is_short ? DC_NV_SHORT : DC_NV;
    /* the row's vectors spread evenly over the fewest tiles (9 vectors: 3+3+3, not 4+4+1, whose last
     * tile would load a broadcast per FMA) */
    const int64_t nvec = N / VLEN, tiles = (nvec + nvmax - 1) / nvmax;
    for (int64_t m0 = 0; m0 < M; m0 += mr) {
        const int rows = (int)(M - m0 < mr ? M - m0 : mr);
        const float *am = a + m0 * ars, *bm = bias ? bias + m0 : NULL;
        float *crow = c + m0 * ldc;
        for (int64_t t = 0, n0 = 0; t < tiles; ++t) {
            const int nvt = (int)(nvec / tiles + (t < nvec % tiles ? 1 : 0));
            float *cm = crow + n0;
            if (is_short) {
                switch (rows) {
                case 1: DC_SHORT(1) break;
                case 2: DC_SHORT(2) break;
                case 3: DC_SHORT(3) break;
                case 4: DC_SHORT(4) break;
                case 5: DC_SHORT(5) break;
                default: DC_SHORT(DC_MR_SHORT) break;
                }
            } else {
                switch (rows) {
                case 1: DC_WIDE(1) break;
                case 2: DC_WIDE(2) break;
                case 3: DC_WIDE(3) break;
                case 4: DC_WIDE(4) break;
                case 5: DC_WIDE(5) break;
#if DC_MR > 6
                case 6: DC_WIDE(6) break;
                case 7: DC_WIDE(7) break;
#endif
                default: DC_WIDE(DC_MR) break;
                }
            }
            n0 += nvt * VLEN;
        }
    }
}
#undef DC_CALL
#undef DC_NV2
#undef DC_NV3
#undef DC_NV4
#undef DC_SHORT
#undef DC_WIDE

/* the padded input planes of one image (C channels) and the zeroed slack after them. A row is
 * written as whole (masked) vectors: lanes past the input's cw columns load as zeros. */
static void FN(pad_image)(const float *x, const x86_conv_geom *g, const x86_direct_geom *d, int64_t C, float *xp) {
    const int64_t cw = g->W < d->Wp - g->pl ? g->W : d->Wp - g->pl; /* input columns inside the plane */
    const int64_t right = d->Wp - g->pl;                            /* floats from the first input column on */
    for (int64_t c = 0; c < C; ++c)
        for (int64_t r = 0; r < d->Hp; ++r) {
            float *dst = xp + c * d->plane + r * d->Wp;
            const int64_t ih = r - g->pt;
            if (ih < 0 || ih >= g->H || cw <= 0) {
                memset(dst, 0, (size_t)d->Wp * sizeof(float));
                continue;
            }
            const float *src = x + (c * g->H + ih) * g->W;
            for (int64_t k = 0; k < g->pl; ++k) dst[k] = 0.0f;
            for (int64_t k = 0; k < right; k += VLEN) {
                const int64_t left = cw - k;
                vf_store_n(dst + g->pl + k, vf_load_n(src + k, left < 0 ? 0 : left > VLEN ? VLEN : (int)left),
                           right - k < VLEN ? (int)(right - k) : VLEN);
            }
        }
    memset(xp + C * d->plane, 0, (size_t)d->slack * sizeof(float));
}

/* rows [n][OH][OW] -> wide rows [n][Pr], the junk columns (and the row's end past OH*Wp) zero; whole
 * (masked) vectors, lanes past OW loading as zeros */
static void FN(widen_rows)(const float *y, int64_t n, const x86_conv_geom *g, const x86_direct_geom *d, float *yw) {
    for (int64_t o = 0; o < n; ++o) {
        for (int64_t oh = 0; oh < g->OH; ++oh) {
            float *dst = yw + o * d->Pr + oh * d->Wp;
            const float *src = y + (o * g->OH + oh) * g->OW;
            for (int64_t k = 0; k < d->Wp; k += VLEN) {
                const int64_t left = g->OW - k;
                vf_store_n(dst + k, vf_load_n(src + k, left < 0 ? 0 : left > VLEN ? VLEN : (int)left),
                           d->Wp - k < VLEN ? (int)(d->Wp - k) : VLEN);
            }
        }
        for (int64_t k = d->Pw; k < d->Pr; ++k) yw[o * d->Pr + k] = 0.0f;
    }
}

/* boff[(c*kh + i)*kw + j] = c*plane + i*dh*Wp + j*dw: where tap (i, j) of channel c starts */
static void FN(conv_tap_offsets)(const x86_conv_geom *g, const x86_direct_geom *d, int64_t C, int64_t *boff) {
    for (int64_t c = 0; c < C; ++c)
        for (int64_t i = 0; i < g->kh; ++i)
            for (int64_t j = 0; j < g->kw; ++j) boff[(c * g->kh + i) * g->kw + j] = c * d->plane + i * g->dh * d->Wp + j * g->dw;
}

/* forward, one image: y_g = act(W_g @ taps(xpad_g) + b_g) in wide positions, then the OW real columns of each row */
static void FN(conv_forward_direct_image)(const float *x, const float *w, const float *bias, float *y,
                                          const x86_convgrad_geom *cg, int relu, float *work) {
    const x86_conv_geom *g = &cg->g;
    const x86_direct_geom d = x86_direct_geometry(cg);
    const int64_t R = g->C * g->kh * g->kw, og = cg->O / cg->group, P = g->OH * g->OW;
    int64_t *boff = (int64_t *)work;
    float *xp = work + x86_direct_offsets_floats(cg), *yw = xp + x86_direct_padded_floats(cg);
    FN(conv_tap_offsets)(g, &d, g->C, boff);
    FN(pad_image)(x, g, &d, g->C * cg->group, xp);
    for (int64_t gi = 0; gi < cg->group; ++gi) {
        FN(dc_gemm)(og, d.Pr, R, w + gi * og * R, R, 1, xp + gi * g->C * d.plane, boff, yw, d.Pr,
                    bias ? bias + gi * og : NULL, relu, 0);
        for (int64_t o = 0; o < og; ++o)
            for (int64_t oh = 0; oh < g->OH; ++oh)
                FN(copy_n)(y + (gi * og + o) * P + oh * g->OW, yw + o * d.Pr + oh * d.Wp, g->OW);
    }
}

/* dx of one image: per group and tap t, dxpad_g[p + toff[t]] += W_g[:, :, t]^T @ dywide_g[p] (K = the
 * group's output channels), then the real part of the padded planes. Whole passes over p per tap, so a tap's
 * read-modify-write never directly follows the previous tap's store to the overlapping floats. */
static void FN(conv_grad_input_direct_image)(const float *dy, const float *w, float *dx, const x86_convgrad_geom *cg,
                                             float *work) {
    const x86_conv_geom *g = &cg->g;
    const x86_direct_geom d = x86_direct_geometry(cg);
    const int64_t R = g->C * g->kh * g->kw, og = cg->O / cg->group, taps = g->kh * g->kw, C = g->C * cg->group;
    int64_t *ooff = (int64_t *)work, *toff = ooff + og;
    float *dxp = work + x86_direct_offsets_floats(cg), *dyw = dxp + x86_direct_padded_floats(cg);
    for (int64_t o = 0; o < og; ++o) ooff[o] = o * d.Pr;
    for (int64_t t = 0; t < taps; ++t) toff[t] = (t / g->kw) * g->dh * d.Wp + (t % g->kw) * g->dw;
    memset(dxp, 0, (size_t)x86_direct_padded_floats(cg) * sizeof(float));
    FN(widen_rows)(dy, cg->O, g, &d, dyw);
    for (int64_t gi = 0; gi < cg->group; ++gi)
        for (int64_t t = 0; t < taps; ++t) /* A(c, o) = w[gi*og + o][c][t] */
            FN(dc_gemm)(g->C, d.Pr, og, w + gi * og * R + t, taps, R, dyw + gi * og * d.Pr, ooff,
                        dxp + gi * g->C * d.plane + toff[t], d.plane, NULL, 0, 1);
    const int64_t rows = g->H < d.Hp - g->pt ? g->H : d.Hp - g->pt, cw = g->W < d.Wp - g->pl ? g->W : d.Wp - g->pl;
    for (int64_t c = 0; c < C; ++c)
        for (int64_t ih = 0; ih < g->H; ++ih) {
            float *dst = dx + (c * g->H + ih) * g->W;
            int64_t iw = 0;
            if (ih < rows && cw > 0) {
                FN(copy_n)(dst, dxp + c * d.plane + (ih + g->pt) * d.Wp + g->pl, cw);
                iw = cw;
            }
            for (; iw < g->W; ++iw) dst[iw] = 0.0f; /* inputs no window reads */
        }
}

/* dw and db of nimg consecutive images (direct): per image its padded input and its wide dy (junk columns zero,
 * so they add nothing), then dw[o][c,i,j] = sum over images and wide positions of dyw[o][p] * xpad[c][p + off] */
static void FN(conv_grad_weight_direct_block)(const float *dy, const float *x, int64_t nimg,
                                              const x86_convgrad_geom *cg, float *work, float *dw_acc,
                                              float *db_acc) {
    const x86_conv_geom *g = &cg->g;
    const x86_direct_geom d = x86_direct_geometry(cg);
    const int64_t P = g->OH * g->OW, R = g->C * g->kh * g->kw, og = cg->O / cg->group, C = g->C * cg->group;
    const int64_t pad_floats = x86_direct_padded_floats(cg), img = pad_floats + x86_direct_wide_floats(cg);
    const int64_t x_image = C * g->H * g->W, dy_image = cg->O * P;
    int64_t *boff = (int64_t *)work;
    float *base = work + x86_direct_offsets_floats(cg);
    FN(conv_tap_offsets)(g, &d, g->C, boff);
    for (int64_t m = 0; m < nimg; ++m) {
        FN(pad_image)(x + m * x_image, g, &d, C, base + m * img);
        FN(widen_rows)(dy + m * dy_image, cg->O, g, &d, base + m * img + pad_floats);
    }
    for (int64_t gi = 0; gi < cg->group; ++gi) {
        const float *xg = base + gi * g->C * d.plane, *dyg = base + pad_floats + gi * og * d.Pr;
        for (int64_t r0 = 0; r0 < R; r0 += GW_TR) {
            const float *b[GW_TR];
            for (int j = 0; j < GW_TR; ++j) b[j] = xg + boff[r0 + j < R ? r0 + j : R - 1];
            for (int64_t o0 = 0; o0 < og; o0 += GW_TO) {
                const float *a[GW_TO];
                for (int i = 0; i < GW_TO; ++i) a[i] = dyg + (o0 + i < og ? o0 + i : og - 1) * d.Pr;
                float out[GW_TO][GW_TR];
                FN(dot_tile)(a, b, d.Pr, nimg, img, img, out);
                for (int i = 0; i < GW_TO && o0 + i < og; ++i)
                    for (int j = 0; j < GW_TR && r0 + j < R; ++j) dw_acc[(gi * og + o0 + i) * R + r0 + j] += out[i][j];
            }
        }
    }
    if (db_acc)
        for (int64_t m = 0; m < nimg; ++m)
            for (int64_t o = 0; o < cg->O; ++o) db_acc[o] += FN(sum_n)(dy + m * dy_image + o * P, P);
}

/* the convolution loops' context: one image an item, `work` per_thread floats a worker */
typedef struct {
    const float *x, *w, *bias, *dy;
    float *y, *dx, *work;
    const x86_convgrad_geom *cg;
    int64_t per_thread;
    int relu, direct;
} grad_conv_loop;

static void FN(conv_forward_task)(void *ctx, int64_t n, int worker) {
    const grad_conv_loop *c = (const grad_conv_loop *)ctx;
    const x86_convgrad_geom *cg = c->cg;
    const x86_conv_geom *g = &cg->g;
    const int64_t P = g->OH * g->OW, R = g->C * g->kh * g->kw, og = cg->O / cg->group;
    const int64_t x_image = g->C * cg->group * g->H * g->W, y_image = cg->O * P;
    float *work = c->work + worker * c->per_thread, *y = c->y + n * y_image;
    if (c->direct) {
        FN(conv_forward_direct_image)(c->x + n * x_image, c->w, c->bias, y, cg, c->relu, work);
        return;
    }
    FN(im2col_image)(c->x + n * x_image, g, g->C * cg->group, work);
    for (int64_t gi = 0; gi < cg->group; ++gi)
        FN(rowgemm)(og, P, R, c->w + gi * og * R, R, 1, work + gi * R * P, P, y + gi * og * P, P,
                    c->bias ? c->bias + gi * og : NULL, c->relu);
}

/* forward convolution of a training step: per image, cols = im2col(x), y_g = act(W_g @ cols_g + b_g) */
static void FN(conv_forward)(const float *x, const float *w, const float *bias, float *y, const x86_convgrad_geom *cg,
                             int relu, float *work, int threads) {
    grad_conv_loop c = {x, w, bias, NULL, y, NULL, work, cg, x86_conv_forward_work_floats(cg), relu, x86_conv_direct(cg)};
    x86_parallel(threads, cg->N, FN(conv_forward_task), &c);
}

/* dw and db of nimg consecutive images, added into dw_acc [O][R] and db_acc [O]; cols holds
 * the im2col of each image (x86_conv_grad_weight_block images fit) */
static void FN(conv_grad_weight_block)(const float *dy, const float *x, int64_t nimg, const x86_convgrad_geom *cg,
                                       float *cols, float *dw_acc, float *db_acc) {
    const x86_conv_geom *g = &cg->g;
    const int64_t P = g->OH * g->OW, R = g->C * g->kh * g->kw, og = cg->O / cg->group;
    const int64_t col_image = R * cg->group * P, x_image = g->C * cg->group * g->H * g->W, dy_image = cg->O * P;
    for (int64_t m = 0; m < nimg; ++m) FN(im2col_image)(x + m * x_image, g, g->C * cg->group, cols + m * col_image);
    for (int64_t gi = 0; gi < cg->group; ++gi) {
        const float *dyg = dy + gi * og * P, *colg = cols + gi * R * P;
        /* im2col rows outside, dy rows inside: a tile's GW_TR im2col rows (of every image in the block) stay in
         * L1 while all of dy's rows pass over them, and dy (O rows of the block's images) is small enough to stay
         * there too; the other order streamed the whole im2col block from L2 once per dy tile */
        for (int64_t r0 = 0; r0 < R; r0 += GW_TR) {
            const float *b[GW_TR];
            for (int j = 0; j < GW_TR; ++j) b[j] = colg + (r0 + j < R ? r0 + j : R - 1) * P;
            for (int64_t o0 = 0; o0 < og; o0 += GW_TO) {
                const float *a[GW_TO];
                for (int i = 0; i < GW_TO; ++i) a[i] = dyg + (o0 + i < og ? o0 + i : og - 1) * P;
                float out[GW_TO][GW_TR];
                FN(dot_tile)(a, b, P, nimg, dy_image, col_image, out);
                for (int i = 0; i < GW_TO && o0 + i < og; ++i)
                    for (int j = 0; j < GW_TR && r0 + j < R; ++j) dw_acc[(gi * og + o0 + i) * R + r0 + j] += out[i][j];
            }
        }
    }
    if (db_acc)
        for (int64_t m = 0; m < nimg; ++m)
            for (int64_t o = 0; o < cg->O; ++o) db_acc[o] += FN(sum_n)(dy + m * dy_image + o * P, P);
}

/* the weight gradient's loop: part p sums the blocks [blocks*p/parts, blocks*(p+1)/parts) into acc + p*stride
 * ([O][R] then [O]), with a worker's cols at work + worker*per_thread */
typedef struct {
    const float *dy, *x;
    const x86_convgrad_geom *cg;
    float *work, *acc;
    int64_t per_thread, block, blocks, parts, stride;
    int db;
} grad_dw_loop;

static void FN(conv_grad_weight_part)(void *ctx, int64_t p, int worker) {
    const grad_dw_loop *c = (const grad_dw_loop *)ctx;
    const x86_convgrad_geom *cg = c->cg;
    const x86_conv_geom *g = &cg->g;
    const int64_t P = g->OH * g->OW, R = g->C * g->kh * g->kw, O = cg->O;
    const int64_t x_image = g->C * cg->group * g->H * g->W, dy_image = O * P;
    void (*block_fn)(const float *, const float *, int64_t, const x86_convgrad_geom *, float *, float *, float *) =
        x86_conv_direct(cg) ? FN(conv_grad_weight_direct_block) : FN(conv_grad_weight_block);
    float *acc = c->acc + p * c->stride;
    memset(acc, 0, (size_t)(O * R + O) * sizeof(float));
    for (int64_t bi = c->blocks * p / c->parts; bi < c->blocks * (p + 1) / c->parts; ++bi) {
        const int64_t n = bi * c->block;
        block_fn(c->dy + n * dy_image, c->x + n * x_image, cg->N - n < c->block ? cg->N - n : c->block, cg,
                 c->work + worker * c->per_thread, acc, c->db ? acc + O * R : NULL);
    }
}

/* dw (and db) as the sum of parts in order, part 0 first: the same floats at any thread count. One thread
 * sums each part in its own scratch's accumulator as it goes; several hold all parts at once */
static void FN(conv_grad_weight)(const float *dy, const float *x, float *dw, float *db, const x86_convgrad_geom *cg,
                                 float *work, int threads) {
    const int64_t R = cg->g.C * cg->g.kh * cg->g.kw, O = cg->O, block = x86_conv_grad_weight_block(cg);
    const int64_t blocks = (cg->N + block - 1) / block, stride = x86_grad_round16(O * R + O);
    int64_t parts = blocks < 1 ? 1 : blocks < GRAD_DW_PARTS ? blocks : GRAD_DW_PARTS;
    while (parts > 1 && parts * stride > GRAD_DW_PARTS_FLOATS) --parts;
    grad_dw_loop c = {dy, x, cg, work, NULL, x86_conv_grad_weight_work_floats(cg), block, blocks, parts, 0, db != NULL};
    float *acc = NULL;
    if (threads > 1 && parts > 1 && posix_memalign((void **)&acc, 64, (size_t)(parts * stride) * sizeof(float)))
        acc = NULL;
    if (acc == NULL) { /* one thread */
        c.acc = work + x86_conv_grad_weight_cols_floats(cg);
        for (int64_t p = 0; p < parts; ++p) {
            FN(conv_grad_weight_part)(&c, p, 0);
            for (int64_t e = 0; e < O * R; ++e) dw[e] = p ? dw[e] + c.acc[e] : c.acc[e];
            for (int64_t o = 0; db && o < O; ++o) db[o] = p ? db[o] + c.acc[O * R + o] : c.acc[O * R + o];
        }
        return;
    }
    c.acc = acc;
    c.stride = stride;
    x86_parallel(threads, parts, FN(conv_grad_weight_part), &c);
    for (int64_t e = 0; e < O * R + O; ++e) {
        float s = acc[e];
        for (int64_t p = 1; p < parts; ++p) s += acc[p * stride + e];
        if (e < O * R) dw[e] = s;
        else if (db) db[e - O * R] = s;
    }
    free(acc);
}

/* one image's dx: per group, cols = W_g^T @ dy_g, then col2im */
static void FN(conv_grad_input_image)(const float *dy, const float *w, float *dx, const x86_convgrad_geom *cg,
                                      float *cols) {
    const x86_conv_geom *g = &cg->g;
    const int64_t P = g->OH * g->OW, R = g->C * g->kh * g->kw, og = cg->O / cg->group;
    memset(dx, 0, (size_t)(g->C * cg->group * g->H * g->W) * sizeof(float));
    for (int64_t gi = 0; gi < cg->group; ++gi) { /* A(r, o) = w[o][r] */
        FN(rowgemm)(R, P, og, w + gi * og * R, 1, R, dy + gi * og * P, P, cols, P, NULL, 0);
        FN(col2im_rows)(cols, g, g->C, dx + gi * g->C * g->H * g->W);
    }
}

static void FN(conv_grad_input_task)(void *ctx, int64_t n, int worker) {
    const grad_conv_loop *c = (const grad_conv_loop *)ctx;
    const x86_conv_geom *g = &c->cg->g;
    const int64_t x_image = g->C * c->cg->group * g->H * g->W, dy_image = c->cg->O * g->OH * g->OW;
    float *work = c->work + worker * c->per_thread;
    if (c->direct) FN(conv_grad_input_direct_image)(c->dy + n * dy_image, c->w, c->dx + n * x_image, c->cg, work);
    else FN(conv_grad_input_image)(c->dy + n * dy_image, c->w, c->dx + n * x_image, c->cg, work);
}

static void FN(conv_grad_input)(const float *dy, const float *w, float *dx, const x86_convgrad_geom *cg, float *work,
                                int threads) {
    grad_conv_loop c = {NULL, w, NULL, dy, NULL, dx, work, cg, x86_conv_grad_input_work_floats(cg), 0,
                        x86_conv_direct(cg)};
    x86_parallel(threads, cg->N, FN(conv_grad_input_task), &c);
}
