/* test_generator_chain.c - Kokoro's whole generator for the capture's speech4, composed from the generator kernels
 * (harmonic source, STFT, col2im, reflection pad, AdaIN + Snake, iSTFT) and a naive convolution and GEMM written
 * here, fed the capture's dec.decode.3, F0, noise and voice, on the synthetic checkpoint it was made with. Prints
 * every stage's error and the audio's signal-to-error ratio against the capture. Test only: the engine's
 * generator runs these kernels as ops, with oneDNN convolutions. */
#include "adain_snake.h"
#include "ck_status.h"
#include "conv_transpose1d_col2im.h"
#include "harmonic_source.h"
#include "istft20.h"
#include "kernel_fixture.h"
#include "kokoro_layout.h"
#include "reflect_pad_left1.h"
#include "speech_capture.h"
#include "stft20.h"
#include "weights.h"

#define GEN "decoder.generator"

typedef struct {
    ck_weights *w;
    float style[128]; /* ref_s[:128], the decoder half */
    int failed;
} chain;

static const float *weight(chain *g, const char *fmt, const char *p, size_t j, size_t want)
{
    char name[160];
    snprintf(name, sizeof name, fmt, p, j);
    const ck_tensor *t = ck_weights_find(g->w, name);
    if (t == NULL || t->elements != want) {
        fprintf(stderr, "    weight %s missing or not %zu values\n", name, want);
        g->failed = 1;
        return NULL;
    }
    return t->data;
}

/* y [lout, cout] = conv1d(x [len, cin]) with w [cout, cin, k] (folded), bias or NULL; float sums, taps then
 * input channels in order, vectorised across output channels. */
static void conv1d(const float *x, size_t len, size_t cin, const float *w, const float *bias, size_t cout, size_t k,
                   size_t stride, size_t dil, size_t pad, float *y, size_t lout)
{
    float *wr = malloc(k * cin * cout * sizeof(float)), *acc = malloc(cout * sizeof(float));
    if (wr == NULL || acc == NULL) {
        free(wr);
        free(acc);
        return;
    }
    for (size_t co = 0; co < cout; co++) {
        for (size_t ci = 0; ci < cin; ci++) {
            for (size_t j = 0; j < k; j++) {
                wr[(j * cin + ci) * cout + co] = w[(co * cin + ci) * k + j];
            }
        }
    }
    for (size_t o = 0; o < lout; o++) {
        memset(acc, 0, cout * sizeof(float));
        for (size_t j = 0; j < k; j++) {
            long i = (long)(o * stride + j * dil) - (long)pad;
            if (i < 0 || i >= (long)len) {
                continue;
            }
            for (size_t ci = 0; ci < cin; ci++) {
                float xv = x[(size_t)i * cin + ci];
                const float *wrow = wr + (j * cin + ci) * cout;
                for (size_t co = 0; co < cout; co++) {
                    acc[co] += wrow[co] * xv;
                }
            }
        }
        for (size_t co = 0; co < cout; co++) {
            y[o * cout + co] = acc[co] + (bias ? bias[co] : 0.0f);
        }
    }
    free(wr);
    free(acc);
}

static void leaky(float *x, size_t n, float slope)
{
    for (size_t i = 0; i < n; i++) {
        x[i] = x[i] < 0.0f ? x[i] * slope : x[i];
    }
}

/* gamma, beta [c] = halves of fc(style), Linear 128 -> 2c, in double. */
static void style_fc(chain *g, const char *p, const char *which, size_t j, size_t c, float *gamma, float *beta)
{
    char q[128];
    snprintf(q, sizeof q, "%s.%s", p, which);
    const float *w = weight(g, "%s.%zu.fc.weight", q, j, 2 * c * 128), *b = weight(g, "%s.%zu.fc.bias", q, j, 2 * c);
    if (w == NULL || b == NULL) {
        return;
    }
    for (size_t r = 0; r < 2 * c; r++) {
        double acc = b[r];
        for (size_t i = 0; i < 128; i++) {
            acc += (double)w[r * 128 + i] * g->style[i];
        }
        (r < c ? gamma : beta)[r % c] = (float)acc;
    }
}

/* AdaINResBlock1(c, k, dilations 1, 3, 5) on x [len, c] in place (SYNTHESIS.md 1.7). */
static void resblock1(chain *g, const char *p, float *x, size_t len, size_t c, size_t k)
{
    static const size_t dil[3] = {1, 3, 5};
    size_t n = len * c, offsets[2] = {0, len};
    float *t = malloc(n * sizeof(float)), *u = malloc(n * sizeof(float)), *gamma = malloc(c * 4), *beta = malloc(c * 4);
    if (!t || !u || !gamma || !beta) {
        g->failed = 1;
    }
    for (size_t j = 0; j < 3 && !g->failed; j++) {
        const float *a1 = weight(g, "%s.alpha1.%zu", p, j, c), *a2 = weight(g, "%s.alpha2.%zu", p, j, c);
        const float *w1 = weight(g, "%s.convs1.%zu.weight", p, j, c * c * k), *b1 = weight(g, "%s.convs1.%zu.bias", p, j, c);
        const float *w2 = weight(g, "%s.convs2.%zu.weight", p, j, c * c * k), *b2 = weight(g, "%s.convs2.%zu.bias", p, j, c);
        if (g->failed) {
            break;
        }
        style_fc(g, p, "adain1", j, c, gamma, beta);
        g->failed |= ck_adain_snake_f32(x, n, c, gamma, c, beta, c, a1, c, t, n, c, offsets, 1, 0, 1, c, 1e-5f) != 0;
        conv1d(t, len, c, w1, b1, c, k, 1, dil[j], dil[j] * (k - 1) / 2, u, len);
        style_fc(g, p, "adain2", j, c, gamma, beta);
        g->failed |= ck_adain_snake_f32(u, n, c, gamma, c, beta, c, a2, c, u, n, c, offsets, 1, 0, 1, c, 1e-5f) != 0;
        conv1d(u, len, c, w2, b2, c, k, 1, 1, (k - 1) / 2, t, len);
        for (size_t i = 0; i < n; i++) {
            x[i] += t[i];
        }
    }
    free(t);
    free(u);
    free(gamma);
    free(beta);
}

/* ConvTranspose1d (weights [cin, cout, k]) as a naive GEMM z = x Wt^T, then the col2im kernel. */
static void ups(chain *g, size_t i, const float *x, size_t len, size_t cin, size_t cout, size_t k, size_t stride,
                float *y)
{
    const float *w = weight(g, "%s.ups.%zu.weight", GEN, i, cin * cout * k), *b = weight(g, "%s.ups.%zu.bias", GEN, i, cout);
    size_t width = k * cout, offsets[2] = {0, len};
    float *z = calloc(len * width, sizeof(float)), *wt = malloc(cin * width * sizeof(float));
    if (g->failed || z == NULL || wt == NULL) {
        g->failed = 1;
        free(z);
        free(wt);
        return;
    }
    for (size_t ci = 0; ci < cin; ci++) {
        for (size_t c = 0; c < cout; c++) {
            for (size_t j = 0; j < k; j++) {
                wt[ci * width + j * cout + c] = w[(ci * cout + c) * k + j];
            }
        }
    }
    for (size_t l = 0; l < len; l++) {
        for (size_t ci = 0; ci < cin; ci++) {
            float xv = x[l * cin + ci];
            for (size_t q = 0; q < width; q++) {
                z[l * width + q] += wt[ci * width + q] * xv;
            }
        }
    }
    g->failed |= ck_conv_transpose1d_col2im_f32(z, len * width, width, b, cout, y, stride * len * cout, cout, offsets,
                                                1, 0, 1, cout, k, stride, (k - stride) / 2) != 0;
    free(z);
    free(wt);
}

/* Max abs of ours [len, c] against the capture's [c, len] tensor `name`; prints it. */
static double stage_error(const ck_st_file *f, const char *name, const float *ours, size_t len, size_t c)
{
    size_t n = 0;
    float *want = ck_cap_f32(f, name, &n);
    double worst = -1.0, peak = 0.0;
    if (want != NULL && n == len * c) {
        worst = 0.0;
        for (size_t r = 0; r < len; r++) {
            for (size_t k = 0; k < c; k++) {
                double w = want[k * len + r], d = fabs((double)ours[r * c + k] - w);
                worst = d > worst ? d : worst;
                peak = fabs(w) > peak ? fabs(w) : peak;
            }
        }
    }
    fprintf(stderr, "    %-22s [%zu, %zu]: max abs %.3g (peak %.3g)\n", name, c, len, worst, peak);
    free(want);
    return worst;
}

static int load_generator(chain *g)
{
    const char *groups[] = {"decoder", NULL};
    ck_weight_spec *specs = NULL;
    size_t n = 0, kept = 0;
    if (ck_kokoro_weight_specs(&specs, &n, groups, NULL) != 0) {
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (strncmp(specs[i].name, GEN ".", strlen(GEN ".")) == 0) {
            specs[kept++] = specs[i];
        }
    }
    int rc = ck_weights_synthetic(&g->w, specs, kept, CK_SYNTH_DEFAULT_SEED, NULL);
    free(specs);
    return rc;
}

typedef struct {
    double stage[7]; /* ups.0, noise_res.0, stage.0, ups.1, noise_res.1, stage.1, conv_post: max abs, -1 if not stored */
    double audio_max, ser_db;
} chain_result;

/* The generator of capture case `cs` (speech4 stores every stage; the others only conv_post and audio). */
static chain_result run_case(const char *cs)
{
    chain_result res = {{0}, 0.0, 0.0};
    char nm[64];
    chain g = {0};
    CU_ASSERT_FATAL(load_generator(&g) == 0);
    ck_st_file *f = ck_cap_open();
    CU_ASSERT_FATAL(f != NULL);
    size_t nf0 = 0, nz = 0, nx = 0, nref = 0, naudio = 0;
    snprintf(nm, sizeof nm, "%s.F0", cs);
    float *f0 = ck_cap_f32(f, nm, &nf0);
    snprintf(nm, sizeof nm, "%s.noise", cs);
    float *noise = ck_cap_f32(f, nm, &nz);
    snprintf(nm, sizeof nm, "%s.dec.decode.3", cs);
    float *dec = ck_cap_f32(f, nm, &nx);
    snprintf(nm, sizeof nm, "%s.ref_s", cs);
    float *ref = ck_cap_f32(f, nm, &nref);
    snprintf(nm, sizeof nm, "%s.audio", cs);
    float *audio_want = ck_cap_f32(f, nm, &naudio);
    CU_ASSERT_FATAL(f0 && noise && dec && ref && audio_want && nref == 256);
    memcpy(g.style, ref, sizeof g.style);
    size_t p = nf0, len = p * 300, frames = len / 5 + 1, l0 = p * 10, l1 = l0 * 6;
    CU_ASSERT_FATAL(nx == 512 * p && nz == len * 9 && naudio == len && frames == l1 + 1);

    /* harmonic source and its STFT: har [frames, 22] */
    float *src = malloc(len * 4), *scratch = malloc(p * 9 * 4), *har = malloc(frames * 22 * 4);
    CU_ASSERT_FATAL(src && scratch && har);
    const float *lw = weight(&g, "%s.m_source.l_linear.weight%.0zu", GEN, 0, 9);
    const float *lb = weight(&g, "%s.m_source.l_linear.bias%.0zu", GEN, 0, 1);
    CU_ASSERT_FATAL(!g.failed);
    CU_ASSERT_EQUAL(ck_harmonic_source_f32(f0, p, p, noise, nz, 9, 1.0f, lw, lb, scratch, p * 9, src, len, 0, len), CK_OK);
    CU_ASSERT_EQUAL(ck_stft20_f32(src, len, len, har, frames * 22, 22, 0, frames), CK_OK);

    /* stage 0: x = decode.3 [2F, 512] */
    float *x = malloc(p * 512 * 4), *up0 = malloc(l0 * 256 * 4), *s0 = malloc(l0 * 256 * 4);
    CU_ASSERT_FATAL(x && up0 && s0);
    for (size_t r = 0; r < p; r++) {
        for (size_t c = 0; c < 512; c++) {
            x[r * 512 + c] = dec[c * p + r];
        }
    }
    leaky(x, p * 512, 0.1f);
    ups(&g, 0, x, p, 512, 256, 20, 10, up0);
    snprintf(nm, sizeof nm, "%s.gen.ups.0", cs);
    res.stage[0] = stage_error(f, nm, up0, l0, 256);
    conv1d(har, frames, 22, weight(&g, "%s.noise_convs.%zu.weight", GEN, 0, 256 * 22 * 12),
           weight(&g, "%s.noise_convs.%zu.bias", GEN, 0, 256), 256, 12, 6, 1, 3, s0, l0);
    resblock1(&g, GEN ".noise_res.0", s0, l0, 256, 7);
    snprintf(nm, sizeof nm, "%s.gen.noise_res.0", cs);
    res.stage[1] = stage_error(f, nm, s0, l0, 256);
    float *sum = calloc(l0 * 256, 4), *branch = malloc(l0 * 256 * 4);
    CU_ASSERT_FATAL(sum && branch);
    for (size_t i = 0; i < l0 * 256; i++) {
        up0[i] += s0[i];
    }
    for (size_t b = 0; b < 3; b++) {
        char name[64];
        snprintf(name, sizeof name, GEN ".resblocks.%zu", b);
        memcpy(branch, up0, l0 * 256 * 4);
        resblock1(&g, name, branch, l0, 256, (size_t[]){3, 7, 11}[b]);
        for (size_t i = 0; i < l0 * 256; i++) {
            sum[i] += branch[i];
        }
    }
    for (size_t i = 0; i < l0 * 256; i++) {
        sum[i] /= 3.0f;
    }
    snprintf(nm, sizeof nm, "%s.gen.stage.0", cs);
    res.stage[2] = stage_error(f, nm, sum, l0, 256);

    /* stage 1 */
    float *up1 = malloc(l1 * 128 * 4), *x1 = malloc(frames * 128 * 4), *s1 = malloc(frames * 128 * 4);
    float *sum1 = calloc(frames * 128, 4), *branch1 = malloc(frames * 128 * 4);
    CU_ASSERT_FATAL(up1 && x1 && s1 && sum1 && branch1);
    leaky(sum, l0 * 256, 0.1f);
    ups(&g, 1, sum, l0, 256, 128, 12, 6, up1);
    size_t off1[2] = {0, l1};
    CU_ASSERT_EQUAL(ck_reflect_pad_left1_f32(up1, l1 * 128, 128, x1, frames * 128, 128, off1, 1, 0, 1, 128), CK_OK);
    snprintf(nm, sizeof nm, "%s.gen.ups.1", cs);
    res.stage[3] = stage_error(f, nm, x1, frames, 128);
    conv1d(har, frames, 22, weight(&g, "%s.noise_convs.%zu.weight", GEN, 1, 128 * 22),
           weight(&g, "%s.noise_convs.%zu.bias", GEN, 1, 128), 128, 1, 1, 1, 0, s1, frames);
    resblock1(&g, GEN ".noise_res.1", s1, frames, 128, 11);
    snprintf(nm, sizeof nm, "%s.gen.noise_res.1", cs);
    res.stage[4] = stage_error(f, nm, s1, frames, 128);
    for (size_t i = 0; i < frames * 128; i++) {
        x1[i] += s1[i];
    }
    for (size_t b = 0; b < 3; b++) {
        char name[64];
        snprintf(name, sizeof name, GEN ".resblocks.%zu", 3 + b);
        memcpy(branch1, x1, frames * 128 * 4);
        resblock1(&g, name, branch1, frames, 128, (size_t[]){3, 7, 11}[b]);
        for (size_t i = 0; i < frames * 128; i++) {
            sum1[i] += branch1[i];
        }
    }
    for (size_t i = 0; i < frames * 128; i++) {
        sum1[i] /= 3.0f;
    }
    snprintf(nm, sizeof nm, "%s.gen.stage.1", cs);
    res.stage[5] = stage_error(f, nm, sum1, frames, 128);

    /* output: LeakyReLU 0.01, conv_post, iSTFT */
    float *post = malloc(frames * 22 * 4), *audio = malloc(len * 4);
    CU_ASSERT_FATAL(post && audio);
    leaky(sum1, frames * 128, 0.01f);
    conv1d(sum1, frames, 128, weight(&g, "%s.conv_post.weight%.0zu", GEN, 0, 22 * 128 * 7),
           weight(&g, "%s.conv_post.bias%.0zu", GEN, 0, 22), 22, 7, 1, 1, 3, post, frames);
    snprintf(nm, sizeof nm, "%s.gen.conv_post", cs);
    res.stage[6] = stage_error(f, nm, post, frames, 22);
    CU_ASSERT_EQUAL(ck_istft20_f32(post, frames * 22, 22, frames, audio, len, 0, len), CK_OK);
    double sig = 0.0, err = 0.0, worst = 0.0;
    for (size_t i = 0; i < len; i++) {
        double d = (double)audio[i] - audio_want[i];
        sig += (double)audio_want[i] * audio_want[i];
        err += d * d;
        worst = fabs(d) > worst ? fabs(d) : worst;
    }
    double ser = 10.0 * log10(sig / (err > 0.0 ? err : 1e-300));
    fprintf(stderr, "    %s audio: %zu samples, max abs %.3g, signal-to-error %.1f dB\n", cs, len, worst, ser);
    CU_ASSERT_FALSE(g.failed);
    res.audio_max = worst;
    res.ser_db = ser;

    free(f0);
    free(noise);
    free(dec);
    free(ref);
    free(audio_want);
    free(src);
    free(scratch);
    free(har);
    free(x);
    free(up0);
    free(s0);
    free(sum);
    free(branch);
    free(up1);
    free(x1);
    free(s1);
    free(sum1);
    free(branch1);
    free(post);
    free(audio);
    ck_st_close(f);
    ck_weights_free(g.w);
    return res;
}

/* Measured on this machine (float sums in the naive convolutions here, the kernels in double), max abs:
 * ups.0 2.38e-7, noise_res.0 3.79e-5, stage.0 4.79e-5, ups.1 1.9e-5, noise_res.1 4.77e-5, stage.1 7.24e-5,
 * conv_post 4.22e-6; audio 8.93e-7, signal-to-error 106.5 dB. Asserted: 4x those errors, 100 dB.
 * CK_GENERATOR_CHAIN_ALL=1 also runs speech8, speech20 and speech40 (printed, not asserted: ~20 s here):
 * 105.5, 36.6 and 37.3 dB. The last two are not float error: 1 (speech20) and 3 (speech40) STFT bins of
 * har lie on the negative real axis with |Im X| at rounding level, so their angle is +pi in one FFT and
 * -pi in the other (torch's float FFT vs the double DFT here); noise_convs sees a 2 pi step there (the
 * "flips" of tools/README.md "Cross-check"). */
static void test_speech4_generator(void)
{
    static const double bound[7] = {1e-6, 1.6e-4, 2e-4, 8e-5, 2e-4, 3e-4, 1.7e-5};
    chain_result r = run_case("speech4");
    for (size_t i = 0; i < 7; i++) {
        CU_ASSERT_TRUE(r.stage[i] >= 0.0 && r.stage[i] <= bound[i]);
    }
    CU_ASSERT_TRUE(r.audio_max <= 3.6e-6);
    CU_ASSERT_TRUE(r.ser_db >= 100.0);
    const char *all = getenv("CK_GENERATOR_CHAIN_ALL");
    if (all != NULL && strcmp(all, "1") == 0) {
        run_case("speech8");
        run_case("speech20");
        run_case("speech40");
    }
}

CK_TEST_MAIN("generator_chain", {"speech4: the generator from decode.3, F0, noise and voice vs the capture",
                                 test_speech4_generator})
