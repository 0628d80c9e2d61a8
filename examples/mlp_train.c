/*
 * mlp_train.c - a small but real training program that uses libtfboard the
 * way C training code would: a 2-32-32-3 multilayer perceptron (leaky ReLU,
 * softmax cross-entropy) trained with mini-batch SGD on a synthetic
 * three-arm spiral, deterministic from a fixed seed, no dependencies but
 * libc and libm.
 *
 * Every step it logs loss, accuracy, the gradient norm of every layer and
 * the global norm (tfb_grad_norms), and checks the per-sample losses and
 * every gradient for NaN/Inf (tfb_check_numerics). Every --hist-every steps
 * it logs weight and gradient histograms, the decision regions as an image
 * (samples/decision_regions), a PR curve per class over the data set and
 * a tone whose pitch follows the loss (sound/loss_tone, tfb_audio);
 * at the start, a Markdown note describing the run (text/about) and the
 * forward pass as a GraphDef for the Graphs tab (tfb_graph_def); at the
 * end (unless it diverged), the decision-region samples for the projector:
 * every training point's last hidden layer (32 values) with its class and
 * the predicted one as labels, and a swatch of both colours as its sprite
 * image (tfb_embedding, tag "hidden").
 *
 * A large --lr (e.g. 5) makes the weights blow up until the loss is no
 * longer finite. The writer's on_nonfinite callback tells the program, which
 * prints where it happened and stops, as a real job should rather than
 * train on NaN:
 *     first non-finite value: tag <tag> at step <S>
 *     first non-finite loss at step <S>
 *
 * Usage: mlp_train [--logdir DIR] [--name NAME] [--steps N] [--lr X]
 *                  [--hist-every N] [--batch N] [--seed N]
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfboard.h"

enum { IN = 2, HID = 32, OUT = 3, PER_CLASS = 300, NDATA = OUT * PER_CLASS,
       MAXB = 1024 };

/* ---- deterministic randomness (xorshift64*) ---------------------------- */

static uint64_t rng_state;

static uint64_t rng_next(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * UINT64_C(2685821657736338717);
}

static double rng_uniform(void) /* [0, 1) */
{
    return (double)(rng_next() >> 11) * 0x1p-53;
}

static double rng_normal(void) /* Box-Muller */
{
    double u1 = rng_uniform(), u2 = rng_uniform();
    if (u1 < 1e-300)
        u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

/* ---- data: three interleaved spiral arms ------------------------------- */

static float data_x[NDATA][IN];
static int data_y[NDATA];

static void make_spirals(void)
{
    for (int c = 0; c < OUT; c++)
        for (int i = 0; i < PER_CLASS; i++) {
            double r = (double)i / PER_CLASS;
            double t = c * 4.0 + r * 4.0 + rng_normal() * 0.2;
            int k = c * PER_CLASS + i;
            data_x[k][0] = (float)(r * sin(t));
            data_x[k][1] = (float)(r * cos(t));
            data_y[k] = c;
        }
}

/* ---- the model ---------------------------------------------------------- */

typedef struct model {
    float w1[IN * HID], b1[HID];
    float w2[HID * HID], b2[HID];
    float w3[HID * OUT], b3[OUT];
} model;

#define NPARAM 6
static const char *const param_names[NPARAM] = {
    "fc1/weight", "fc1/bias", "fc2/weight", "fc2/bias", "fc3/weight", "fc3/bias"};

static float *param(model *m, int i)
{
    float *p[NPARAM] = {m->w1, m->b1, m->w2, m->b2, m->w3, m->b3};
    return p[i];
}

static size_t param_len(int i)
{
    static const size_t n[NPARAM] = {IN * HID, HID, HID * HID, HID,
                                     HID * OUT, OUT};
    return n[i];
}

static void init_model(model *m)
{
    memset(m, 0, sizeof *m);
    /* He initialisation for the leaky-ReLU layers. */
    for (int i = 0; i < IN * HID; i++)
        m->w1[i] = (float)(rng_normal() * sqrt(2.0 / IN));
    for (int i = 0; i < HID * HID; i++)
        m->w2[i] = (float)(rng_normal() * sqrt(2.0 / HID));
    for (int i = 0; i < HID * OUT; i++)
        m->w3[i] = (float)(rng_normal() * sqrt(1.0 / HID));
}

static float lrelu(float a) { return a > 0 ? a : 0.01f * a; }
static float lrelu_d(float a) { return a > 0 ? 1.0f : 0.01f; }

/* y[b][o] = x[b][:] · w[:, o] + bias[o] */
static void dense(const float *x, int nb, int nin, const float *w,
                  const float *bias, int nout, float *y)
{
    for (int b = 0; b < nb; b++)
        for (int o = 0; o < nout; o++) {
            float s = bias[o];
            for (int i = 0; i < nin; i++)
                s += x[b * nin + i] * w[i * nout + o];
            y[b * nout + o] = s;
        }
}

/* Gradients of a dense layer: dw = xᵀ·dy, db = Σ dy, dx = dy·wᵀ (dx may be
 * NULL for the input layer). */
static void dense_back(const float *x, int nb, int nin, const float *w,
                       int nout, const float *dy, float *dw, float *db,
                       float *dx)
{
    memset(dw, 0, sizeof(float) * (size_t)(nin * nout));
    memset(db, 0, sizeof(float) * (size_t)nout);
    for (int b = 0; b < nb; b++)
        for (int o = 0; o < nout; o++) {
            float g = dy[b * nout + o];
            db[o] += g;
            for (int i = 0; i < nin; i++)
                dw[i * nout + o] += x[b * nin + i] * g;
        }
    if (dx == NULL)
        return;
    for (int b = 0; b < nb; b++)
        for (int i = 0; i < nin; i++) {
            float s = 0;
            for (int o = 0; o < nout; o++)
                s += dy[b * nout + o] * w[i * nout + o];
            dx[b * nin + i] = s;
        }
}

typedef struct step_out {
    float loss, accuracy;
    float sample_loss[MAXB];
} step_out;

/* One forward and backward pass over the batch idx[0..nb); fills grad. */
static void train_step(const model *m, const int *idx, int nb, model *grad,
                       step_out *out)
{
    static float x[MAXB * IN], a1[MAXB * HID], h1[MAXB * HID],
        a2[MAXB * HID], h2[MAXB * HID], z[MAXB * OUT], dz[MAXB * OUT],
        dh2[MAXB * HID], dh1[MAXB * HID];
    for (int b = 0; b < nb; b++)
        memcpy(&x[b * IN], data_x[idx[b]], sizeof(float) * IN);
    dense(x, nb, IN, m->w1, m->b1, HID, a1);
    for (int i = 0; i < nb * HID; i++)
        h1[i] = lrelu(a1[i]);
    dense(h1, nb, HID, m->w2, m->b2, HID, a2);
    for (int i = 0; i < nb * HID; i++)
        h2[i] = lrelu(a2[i]);
    dense(h2, nb, HID, m->w3, m->b3, OUT, z);

    /* Softmax cross-entropy, shifted by the max logit so that finite
     * logits never overflow exp(); once the weights themselves overflow,
     * Inf - Inf gives the NaN a real framework would give. */
    float loss = 0;
    int correct = 0;
    for (int b = 0; b < nb; b++) {
        float *zb = &z[b * OUT];
        int arg = 0;
        for (int o = 1; o < OUT; o++)
            if (zb[o] > zb[arg])
                arg = o;
        float mx = zb[arg], sum = 0;
        for (int o = 0; o < OUT; o++)
            sum += expf(zb[o] - mx);
        float lse = mx + logf(sum);
        int y = data_y[idx[b]];
        out->sample_loss[b] = lse - zb[y];
        loss += out->sample_loss[b];
        correct += arg == y;
        for (int o = 0; o < OUT; o++)
            dz[b * OUT + o] = (expf(zb[o] - lse) - (o == y ? 1.0f : 0.0f)) / nb;
    }
    out->loss = loss / nb;
    out->accuracy = (float)correct / nb;

    dense_back(h2, nb, HID, m->w3, OUT, dz, grad->w3, grad->b3, dh2);
    for (int i = 0; i < nb * HID; i++)
        dh2[i] *= lrelu_d(a2[i]);
    dense_back(h1, nb, HID, m->w2, HID, dh2, grad->w2, grad->b2, dh1);
    for (int i = 0; i < nb * HID; i++)
        dh1[i] *= lrelu_d(a1[i]);
    dense_back(x, nb, IN, m->w1, HID, dh1, grad->w1, grad->b1, NULL);
}

/* ---- media: decision regions, PR curves ------------------------------- */

/* Class probabilities of one point (the forward pass of train_step),
 * and its last hidden layer into hidden (HID values) unless NULL. */
static void predict(const model *m, const float *x, float *p, float *hidden)
{
    float a1[HID], a2[HID], z[OUT];
    dense(x, 1, IN, m->w1, m->b1, HID, a1);
    for (int i = 0; i < HID; i++)
        a1[i] = lrelu(a1[i]);
    dense(a1, 1, HID, m->w2, m->b2, HID, a2);
    for (int i = 0; i < HID; i++)
        a2[i] = lrelu(a2[i]);
    if (hidden)
        memcpy(hidden, a2, sizeof a2);
    dense(a2, 1, HID, m->w3, m->b3, OUT, z);
    float mx = z[0] > z[1] ? z[0] : z[1], sum = 0;
    if (z[2] > mx)
        mx = z[2];
    for (int o = 0; o < OUT; o++)
        sum += (p[o] = expf(z[o] - mx));
    for (int o = 0; o < OUT; o++)
        p[o] = isfinite(sum) && sum > 0 ? p[o] / sum : 1.0f / OUT;
}

/* A short tone whose pitch follows the loss (tfb_audio): 880 Hz at the
 * untrained loss of about 1.1, falling toward 220 Hz as it learns; the
 * Audio tab plays one per --hist-every steps. */
static int log_sound(tfb_writer *w, float loss, long step)
{
    enum { RATE = 16000, N = RATE * 2 / 5 }; /* 0.4 s */
    static float clip[N];
    if (!isfinite(loss))
        return 0;
    float f = 220.0f + 600.0f * fminf(fmaxf(loss, 0.0f), 2.0f);
    for (int i = 0; i < N; i++) {
        /* Faded in and out over 10 ms: no click at either end. */
        float fade = fminf(1.0f, fminf((float)i, (float)(N - 1 - i)) / 160);
        clip[i] = 0.4f * fade * sinf(6.2831853f * f * (float)i / RATE);
    }
    return tfb_audio(w, "sound/loss_tone", clip, N, 1, RATE, step);
}

/* The plane [-1, 1]² coloured by the predicted class (brighter where the
 * model is sure), with the training points on top: what the network has
 * learned, at a glance. Returns the first error. */
static int log_media(tfb_writer *w, const model *m, long step)
{
    enum { S = 64 };
    static const uint8_t col[OUT][3] = {{228, 87, 86}, {76, 120, 168},
                                        {89, 161, 79}};
    static uint8_t px[S * S * 3];
    float p[OUT], x[IN];
    for (int r = 0; r < S; r++)
        for (int c = 0; c < S; c++) {
            x[0] = -1.0f + 2.0f * (float)c / (S - 1);
            x[1] = 1.0f - 2.0f * (float)r / (S - 1);
            predict(m, x, p, NULL);
            for (int k = 0; k < 3; k++) {
                float v = 0;
                for (int o = 0; o < OUT; o++)
                    v += p[o] * col[o][k];
                px[(r * S + c) * 3 + k] = (uint8_t)(0.55f * v + 0.45f * 255);
            }
        }
    for (int i = 0; i < NDATA; i += 3) {
        int c = (int)((data_x[i][0] + 1.0f) / 2.0f * (S - 1) + 0.5f);
        int r = (int)((1.0f - data_x[i][1]) / 2.0f * (S - 1) + 0.5f);
        if (r >= 0 && r < S && c >= 0 && c < S)
            memcpy(&px[(r * S + c) * 3], col[data_y[i]], 3);
    }
    int rc = tfb_image(w, "samples/decision_regions", px, S, S, 3, step);
    static float labels[NDATA], pred[NDATA];
    char tag[32];
    for (int o = 0; o < OUT && rc >= 0; o++) {
        for (int i = 0; i < NDATA; i++) {
            predict(m, data_x[i], p, NULL);
            labels[i] = data_y[i] == o;
            pred[i] = p[o];
        }
        snprintf(tag, sizeof tag, "pr/class_%d", o);
        rc = tfb_pr_curve(w, tag, labels, pred, NDATA, 51, step);
    }
    return rc < 0 ? rc : 0;
}

/* The samples as the network sees them, for the projector: each point's
 * last hidden layer, labelled with its class and the predicted one, its
 * sprite image an 8 x 8 swatch in its class's colour around a centre in
 * the predicted class's (a wrong prediction shows at a glance). */
static int log_embedding(tfb_writer *w, const model *m, long step)
{
    enum { SW = 8 };
    static const uint8_t col[OUT][3] = {{228, 87, 86}, {76, 120, 168},
                                        {89, 161, 79}};
    static const char *const names[OUT] = {"arm 0", "arm 1", "arm 2"};
    static float feat[NDATA][HID];
    static const char *labels[NDATA * 2];
    static uint8_t sw[NDATA][SW][SW][3];
    float p[OUT];
    for (int i = 0; i < NDATA; i++) {
        predict(m, data_x[i], p, feat[i]);
        int best = 0;
        for (int o = 1; o < OUT; o++)
            if (p[o] > p[best])
                best = o;
        labels[i * 2] = names[data_y[i]];
        labels[i * 2 + 1] = names[best];
        for (int y = 0; y < SW; y++)
            for (int x = 0; x < SW; x++) {
                int inner = x >= 2 && x < SW - 2 && y >= 2 && y < SW - 2;
                memcpy(sw[i][y][x], col[inner ? best : data_y[i]], 3);
            }
    }
    static const char *const header[] = {"class", "predicted"};
    tfb_embedding_opts o;
    tfb_embedding_opts_init(&o);
    o.labels = labels;
    o.label_columns = 2;
    o.header = header;
    o.images = &sw[0][0][0][0];
    o.image_height = SW;
    o.image_width = SW;
    o.image_channels = 3;
    return tfb_embedding(w, "hidden", &feat[0][0], NDATA, HID, step, &o);
}

/* ---- custom scalars layout --------------------------------------------- */

/* Appends a length-delimited protobuf field (the length as a varint). */
static size_t pb_ld(uint8_t *out, size_t at, int field, const void *p,
                    size_t len)
{
    out[at++] = (uint8_t)(field << 3 | 2);
    size_t v = len;
    do {
        out[at++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    memcpy(out + at, p, len);
    return at + len;
}

/* One chart of tags on top of each other (tensorboard.Chart{title=1,
 * multiline=2{tag=1}}) for the Custom Scalars dashboard. */
static size_t pb_chart(uint8_t *out, size_t at, const char *title,
                       const char *const *tags, int n)
{
    uint8_t ml[128], ch[160];
    size_t m = 0, c = 0;
    for (int i = 0; i < n; i++)
        m = pb_ld(ml, m, 1, tags[i], strlen(tags[i]));
    c = pb_ld(ch, c, 1, title, strlen(title));
    c = pb_ld(ch, c, 2, ml, m);
    return pb_ld(out, at, 2, ch, c);
}

static int log_layout(tfb_writer *w)
{
    static const char *const t1[] = {"loss", "accuracy"};
    static const char *const t2[] = {"grad_norm/global", "grad_norm/fc1/weight",
                                     "grad_norm/fc3/weight"};
    uint8_t cat[256], layout[264];
    size_t c = pb_ld(cat, 0, 1, "Training", 8);
    c = pb_chart(cat, c, "loss and accuracy", t1, 2);
    c = pb_chart(cat, c, "gradient norms", t2, 3);
    size_t n = pb_ld(layout, 0, 2, cat, c);
    return tfb_custom_scalars_layout(w, layout, n);
}

/* ---- the model graph ----------------------------------------------------- */

/* Appends a varint field (a negative value as 10 bytes, as int64). */
static size_t pb_vi(uint8_t *out, size_t at, int field, int64_t v)
{
    out[at++] = (uint8_t)(field << 3);
    uint64_t u = (uint64_t)v;
    do {
        out[at++] = (uint8_t)((u & 0x7f) | (u > 0x7f ? 0x80 : 0));
        u >>= 7;
    } while (u);
    return at;
}

/* NodeDef.attr entry {key, value: AttrValue bytes}. */
static size_t pb_attr(uint8_t *out, size_t at, const char *key,
                      const uint8_t *val, size_t n)
{
    uint8_t e[160];
    size_t k = pb_ld(e, 0, 1, key, strlen(key));
    k = pb_ld(e, k, 2, val, n);
    return pb_ld(out, at, 5, e, k);
}

/* One tensorflow.NodeDef of the forward pass, as TensorFlow would name it:
 * scope/op, its inputs, the CPU device, T = DT_FLOAT for the maths ops,
 * and _output_shapes (rows x cols, -1 for the batch) that the Graphs tab
 * writes on the edges. */
static size_t graph_node(uint8_t *out, size_t at, const char *name,
                         const char *op, const char *in0, const char *in1,
                         int64_t rows, int64_t cols)
{
    uint8_t nd[512], v[96], sh[48], d[16];
    size_t n = pb_ld(nd, 0, 1, name, strlen(name));
    n = pb_ld(nd, n, 2, op, strlen(op));
    if (in0)
        n = pb_ld(nd, n, 3, in0, strlen(in0));
    if (in1)
        n = pb_ld(nd, n, 3, in1, strlen(in1));
    n = pb_ld(nd, n, 4, "/device:CPU:0", 13);
    if (in0) {
        size_t k = pb_vi(v, 0, 6, 1); /* AttrValue{type: DT_FLOAT} */
        n = pb_attr(nd, n, "T", v, k);
    }
    size_t s = pb_ld(sh, 0, 2, d, pb_vi(d, 0, 1, rows));
    if (cols)
        s = pb_ld(sh, s, 2, d, pb_vi(d, 0, 1, cols));
    uint8_t l[64];
    size_t k = pb_ld(l, 0, 7, sh, s); /* ListValue{shape} */
    k = pb_ld(v, 0, 1, l, k);         /* AttrValue{list} */
    n = pb_attr(nd, n, "_output_shapes", v, k);
    return pb_ld(out, at, 1, nd, n);
}

/* The MLP's forward pass and loss as a GraphDef (tfb_graph_def), for the
 * Graphs tab: input -> fc1 -> fc2 -> fc3 -> loss, each layer a name scope
 * with its weight, bias, MatMul, BiasAdd (and LeakyRelu). */
static int log_graph(tfb_writer *w)
{
    static const struct { const char *scope, *in; int nin, nout, act; }
        layers[] = {{"fc1", "input/x", IN, HID, 1},
                    {"fc2", "fc1/LeakyRelu", HID, HID, 1},
                    {"fc3", "fc2/LeakyRelu", HID, OUT, 0}};
    uint8_t g[4096];
    char a[64], b[64], c[64];
    size_t n = graph_node(g, 0, "input/x", "Placeholder", NULL, NULL, -1, IN);
    n = graph_node(g, n, "input/y", "Placeholder", NULL, NULL, -1, 0);
    for (int i = 0; i < 3; i++) {
        const char *s = layers[i].scope;
        snprintf(a, sizeof a, "%s/weight", s);
        n = graph_node(g, n, a, "VariableV2", NULL, NULL, layers[i].nin,
                       layers[i].nout);
        snprintf(b, sizeof b, "%s/bias", s);
        n = graph_node(g, n, b, "VariableV2", NULL, NULL, layers[i].nout, 0);
        snprintf(c, sizeof c, "%s/MatMul", s);
        n = graph_node(g, n, c, "MatMul", layers[i].in, a, -1,
                       layers[i].nout);
        snprintf(a, sizeof a, "%s/BiasAdd", s);
        n = graph_node(g, n, a, "BiasAdd", c, b, -1, layers[i].nout);
        if (layers[i].act) {
            snprintf(b, sizeof b, "%s/LeakyRelu", s);
            n = graph_node(g, n, b, "LeakyRelu", a, NULL, -1,
                           layers[i].nout);
        }
    }
    n = graph_node(g, n, "loss/xent", "SparseSoftmaxCrossEntropyWithLogits",
                   "fc3/BiasAdd", "input/y", -1, 0);
    n = graph_node(g, n, "loss/Mean", "Mean", "loss/xent", NULL, 1, 0);
    return tfb_graph_def(w, g, n);
}

/* ---- non-finite reporting ----------------------------------------------- */

typedef struct watch {
    int seen_any;
    char first_tag[256];
    int64_t first_step;
    int seen_loss;
    int64_t loss_step;
} watch;

/* Runs on the training thread, inside the tfb_* call that logged the bad
 * value: only note it here; the loop decides what to do. */
static void on_nonfinite(void *user, const char *tag, int64_t step,
                         uint64_t nan, uint64_t pos_inf, uint64_t neg_inf)
{
    (void)nan;
    (void)pos_inf;
    (void)neg_inf;
    watch *wt = user;
    if (!wt->seen_any) {
        wt->seen_any = 1;
        snprintf(wt->first_tag, sizeof wt->first_tag, "%s", tag);
        wt->first_step = step;
    }
    if (!wt->seen_loss && strcmp(tag, "loss") == 0) {
        wt->seen_loss = 1;
        wt->loss_step = step;
    }
}

/* ---- command line ------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f, "usage: mlp_train [--logdir DIR] [--name NAME] [--steps N] "
               "[--lr X] [--hist-every N] [--batch N] [--seed N]\n"
               "  --logdir DIR    log directory (default runs)\n"
               "  --name NAME     run name: logs go to DIR/NAME (default mlp)\n"
               "  --steps N       training steps (default 2000)\n"
               "  --lr X          learning rate (default 0.1; 5 diverges)\n"
               "  --hist-every N  histogram period in steps (default 100)\n"
               "  --batch N       mini-batch size, 1..%d (default 64)\n"
               "  --seed N        random seed (default 1)\n", MAXB);
}

static int parse_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

int main(int argc, char **argv)
{
    const char *logdir = "runs", *name = "mlp";
    long steps = 2000, hist_every = 100, batch = 64, seed = 1;
    double lr = 0.1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "mlp_train: %s needs a value\n", a);
            usage(stderr);
            return 2;
        }
        const char *v = argv[++i];
        int bad = 0;
        if (strcmp(a, "--logdir") == 0)
            logdir = v;
        else if (strcmp(a, "--name") == 0)
            name = v;
        else if (strcmp(a, "--steps") == 0)
            bad = parse_long(v, 0, 1000000000L, &steps);
        else if (strcmp(a, "--hist-every") == 0)
            bad = parse_long(v, 1, 1000000000L, &hist_every);
        else if (strcmp(a, "--batch") == 0)
            bad = parse_long(v, 1, MAXB, &batch);
        else if (strcmp(a, "--seed") == 0)
            bad = parse_long(v, 0, 1000000000L, &seed);
        else if (strcmp(a, "--lr") == 0) {
            char *end;
            errno = 0;
            lr = strtod(v, &end);
            bad = errno || end == v || *end || !(lr > 0) || !isfinite(lr);
        } else {
            fprintf(stderr, "mlp_train: unknown option %s\n", a);
            usage(stderr);
            return 2;
        }
        if (bad) {
            fprintf(stderr, "mlp_train: bad value for %s: %s\n", a, v);
            return 2;
        }
    }
    if (!*name || strstr(name, "..") != NULL) {
        fprintf(stderr, "mlp_train: bad run name\n");
        return 2;
    }
    size_t dl = strlen(logdir) + strlen(name) + 2;
    char *run_dir = malloc(dl);
    if (run_dir == NULL)
        return 1;
    snprintf(run_dir, dl, "%s/%s", logdir, name);

    watch wt = {0};
    tfb_writer_opts opts;
    tfb_writer_opts_init(&opts);
    opts.on_nonfinite = on_nonfinite;
    opts.on_nonfinite_user = &wt;
    tfb_writer *w = NULL;
    int rc = tfb_writer_open(&w, run_dir, &opts);
    if (rc < 0) {
        fprintf(stderr, "mlp_train: cannot open a writer in %s: %s\n",
                run_dir, tfb_strerror(rc));
        free(run_dir);
        return 1;
    }
    printf("logging to %s\n", tfb_writer_path(w));

    /* The run's hyperparameters (TensorBoard's hparams plugin), so runs
     * with other settings can be compared by them; the final loss is the
     * metric, logged at the end. */
    const tfb_hparam hp[] = {
        {.size = sizeof(tfb_hparam), .name = "lr", .type = TFB_HPARAM_NUMBER, .number = lr},
        {.size = sizeof(tfb_hparam), .name = "steps", .type = TFB_HPARAM_NUMBER, .number = (double)steps},
        {.size = sizeof(tfb_hparam), .name = "batch", .type = TFB_HPARAM_NUMBER, .number = (double)batch},
        {.size = sizeof(tfb_hparam), .name = "hidden1", .type = TFB_HPARAM_NUMBER, .number = HID},
        {.size = sizeof(tfb_hparam), .name = "hidden2", .type = TFB_HPARAM_NUMBER, .number = HID},
        {.size = sizeof(tfb_hparam), .name = "seed", .type = TFB_HPARAM_NUMBER, .number = (double)seed},
        {.size = sizeof(tfb_hparam), .name = "activation", .type = TFB_HPARAM_STRING, .str = "leaky_relu"},
    };
    static const char *const metrics[] = {"hparam/final_loss"};
    int log_err = tfb_hparams_with_metrics(w, hp, sizeof hp / sizeof hp[0],
                                           metrics, 1);

    /* A note for the Text dashboard (Markdown, as add_text takes it). */
    char note[768];
    snprintf(note, sizeof note,
             "## %s\n\nA 2-%d-%d-3 MLP on three spiral arms, SGD with "
             "**lr = %g**, batch %ld, seed %ld, %ld steps.\n\n"
             "| what | where |\n| --- | --- |\n"
             "| loss, accuracy | Scalars |\n"
             "| decision regions | Images |\n| PR curve per class | PR "
             "Curves |\n| hidden features of the samples | Projector |\n",
             name, HID, HID, lr, batch, seed, steps);
    int terr = tfb_text(w, "text/about", note, 0);
    if (terr >= 0)
        terr = log_layout(w);
    if (terr >= 0)
        terr = log_graph(w);
    if (!log_err && terr < 0)
        log_err = terr;

    rng_state = UINT64_C(0x2545F4914F6CDD1D) ^ (uint64_t)seed;
    make_spirals();
    static model m, g;
    init_model(&m);

    int idx[MAXB];
    static step_out so;
    char tag[128];
    long step;
    /* The work of one step, for perf/samples_per_s and perf/tflops: a
     * dense network's forward pass costs 2 FLOPs per weight per sample
     * (multiply and add) and its backward twice that, so 6 x parameters x
     * samples (the biases and activations' few FLOPs left out, as the
     * usual estimate does). */
    double n_params = 0;
    for (int i = 0; i < NPARAM; i++)
        n_params += (double)param_len(i);
    const double step_flops = 6.0 * n_params * (double)batch;
    for (step = 0; step < steps; step++) {
        /* Step timing (pipeline/step_ms) and its work, so the run shows
         * throughput and goodput. */
        tfb_step_begin(w, step);
        for (long b = 0; b < batch; b++)
            idx[b] = (int)(rng_next() % NDATA);
        train_step(&m, idx, (int)batch, &g, &so);
        tfb_step_work(w, step_flops, (double)batch, 0);

        /* Each tfb_* call returns an error code; training goes on either
         * way, and the first one is reported at the end. */
        int r[4];
        r[0] = tfb_scalar(w, "loss", so.loss, step);
        r[1] = tfb_scalar(w, "accuracy", so.accuracy, step);
        tfb_tensor grads[NPARAM];
        for (int i = 0; i < NPARAM; i++)
            grads[i] = (tfb_tensor){sizeof(tfb_tensor), param_names[i],
                                    param(&g, i), param_len(i)};
        r[2] = tfb_grad_norms(w, grads, NPARAM, step, NULL);
        int64_t bad = tfb_check_numerics(w, "numerics/sample_loss",
                                         so.sample_loss, (size_t)batch, step);
        r[3] = bad < 0 ? (int)bad : 0;
        for (int i = 0; i < NPARAM; i++) {
            snprintf(tag, sizeof tag, "numerics/grad/%s", param_names[i]);
            int64_t c = tfb_check_numerics(w, tag, param(&g, i), param_len(i),
                                           step);
            if (c < 0 && !log_err)
                log_err = (int)c;
        }
        if (step % hist_every == 0) {
            for (int i = 0; i < NPARAM; i++) {
                snprintf(tag, sizeof tag, "weights/%s", param_names[i]);
                int e1 = tfb_histogram(w, tag, param(&m, i), param_len(i), step);
                snprintf(tag, sizeof tag, "grads/%s", param_names[i]);
                int e2 = tfb_histogram(w, tag, param(&g, i), param_len(i), step);
                if (!log_err)
                    log_err = e1 < 0 ? e1 : (e2 < 0 ? e2 : 0);
            }
            int me = log_media(w, &m, step);
            if (!log_err && me < 0)
                log_err = me;
            me = log_sound(w, so.loss, step);
            if (!log_err && me < 0)
                log_err = me;
            printf("step %ld  loss %.4f  accuracy %.3f\n", step,
                   (double)so.loss, (double)so.accuracy);
        }
        for (int i = 0; i < 4; i++)
            if (r[i] < 0 && !log_err)
                log_err = r[i];

        if (wt.seen_loss) {
            tfb_step_end(w);
            break; /* never train on a NaN loss */
        }

        for (int i = 0; i < NPARAM; i++) {
            float *p = param(&m, i);
            const float *gp = param(&g, i);
            for (size_t k = 0; k < param_len(i); k++)
                p[k] -= (float)lr * gp[k];
        }
        tfb_step_end(w);
    }

    if (wt.seen_any)
        printf("first non-finite value: tag %s at step %lld\n", wt.first_tag,
               (long long)wt.first_step);
    if (wt.seen_loss)
        printf("first non-finite loss at step %lld\n",
               (long long)wt.loss_step);
    else
        printf("no non-finite loss in %ld steps; final loss %.4f accuracy "
               "%.3f\n", step, (double)so.loss, (double)so.accuracy);
    /* The metric, then the session's end: a failure when training
     * diverged. */
    int diverged = wt.seen_loss || !isfinite(so.loss);
    if (!diverged) {
        int ee = log_embedding(w, &m, step);
        if (!log_err && ee < 0)
            log_err = ee;
    }
    int e1 = tfb_scalar(w, "hparam/final_loss", so.loss, step);
    int e2 = tfb_hparams_end(w, diverged ? TFB_HPARAMS_FAILURE
                                         : TFB_HPARAMS_SUCCESS);
    if (!log_err)
        log_err = e1 < 0 ? e1 : (e2 < 0 ? e2 : 0);
    int crc = tfb_writer_close(w);
    free(run_dir);
    if (log_err < 0 || crc < 0) {
        fprintf(stderr, "mlp_train: logging failed: %s\n",
                tfb_strerror(log_err < 0 ? log_err : crc));
        return 1;
    }
    return 0;
}
