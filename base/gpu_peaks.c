/*
 * gpu_peaks.c - the table of dense tensor-core peaks (gpu_peaks.h) and the
 * rules that find an entry from a reported device name.
 *
 * Figures are TFLOP/s from each product's NVIDIA datasheet (the page or
 * PDF named in the entry's comment). NVIDIA datasheets of Ampere and later
 * give tensor figures "with sparsity" (marked *): those are twice the dense
 * rate, so the table holds half. Where a datasheet gives dense figures
 * (V100, the Ada whitepaper's GeForce figures) they are used as printed.
 * GeForce cards run FP16/BF16/FP8 with FP32 accumulation at half rate; a
 * training step accumulates in FP32, so that rate is the peak here.
 *
 * link_gbps is one direction of the GPU's fabric (a datasheet's NVLink
 * figure is both directions summed: halved), the figure nccl-tests' bus
 * bandwidth approaches. Cards without NVLink get their PCIe slot's one
 * direction (16 GT/s x16 ~ 32 GB/s for Gen4, 64 for Gen5, 16 for Gen3).
 */
#include "base/gpu_peaks.h"

#include <ctype.h>
#include <string.h>

#include "tfboard.h"

enum {
    P_A100_SXM, P_A100_PCIE, P_H100_SXM, P_H100_PCIE, P_H100_NVL,
    P_H200_SXM, P_H200_NVL, P_B200, P_L4, P_L40S, P_L40, P_RTX4090,
    P_RTX6000_ADA, P_A10, P_V100_SXM2, P_V100_PCIE, P_V100S_PCIE, P_COUNT
};

/* Order of tflops[]: BF16, FP16, TF32, FP8. */
static const tfb_gpu_peak k_peaks[P_COUNT] = {
    /* A100 datasheet (nvidia.com/.../a100-80gb-datasheet): BF16 and FP16
     * 312 | 624*, TF32 156 | 312* (dense given too); no FP8. NVLink 3:
     * 600 GB/s both ways -> 300. */
    [P_A100_SXM] = {"A100 SXM", {312, 312, 156, 0}, 300, "NVLink 3"},
    /* Same datasheet, PCIe column: same tensor rates; PCIe Gen4 64 GB/s
     * both ways (an NVLink bridge pairs two cards at most). */
    [P_A100_PCIE] = {"A100 PCIe", {312, 312, 156, 0}, 32, "PCIe 4.0 x16"},
    /* H100 datasheet (nvidia.com/.../h100 "Technical Specifications"),
     * SXM: BF16/FP16 1,979*, TF32 989*, FP8 3,958* (all sparse: halved).
     * NVLink 4: 900 GB/s both ways -> 450. */
    [P_H100_SXM] = {"H100 SXM", {989.5, 989.5, 494.5, 1979}, 450,
                    "NVLink 4"},
    /* H100 PCIe product brief / datasheet: BF16/FP16 1,513*, TF32 756*,
     * FP8 3,026* (sparse: halved); PCIe Gen5 128 GB/s both ways. */
    [P_H100_PCIE] = {"H100 PCIe", {756.5, 756.5, 378, 1513}, 64,
                     "PCIe 5.0 x16"},
    /* H100 NVL column of the H100 datasheet: BF16/FP16 1,671*, TF32 835*,
     * FP8 3,341* (sparse: halved); NVLink bridge 600 GB/s both ways. */
    [P_H100_NVL] = {"H100 NVL", {835.5, 835.5, 417.5, 1670.5}, 300,
                    "NVLink 4 bridge"},
    /* H200 datasheet (nvidia.com/.../h200), SXM: BF16/FP16 1,979*, TF32
     * 989*, FP8 3,958* (sparse: halved); NVLink 900 GB/s both ways. */
    [P_H200_SXM] = {"H200 SXM", {989.5, 989.5, 494.5, 1979}, 450,
                    "NVLink 4"},
    /* H200 datasheet, NVL column: BF16/FP16 1,671*, TF32 835*, FP8 3,341*
     * (sparse: halved); 2- or 4-way NVLink bridge 900 GB/s both ways. */
    [P_H200_NVL] = {"H200 NVL", {835.5, 835.5, 417.5, 1670.5}, 450,
                    "NVLink 4 bridge"},
    /* HGX B200 datasheet (nvidia.com/.../hgx), per GPU: FP16/BF16 4.5 PF*,
     * TF32 2.2 PF*, FP8 9 PF* (sparse: halved); NVLink 5 1.8 TB/s both
     * ways -> 900. */
    [P_B200] = {"B200", {2250, 2250, 1100, 4500}, 900, "NVLink 5"},
    /* L4 datasheet: BF16/FP16 242*, TF32 120*, FP8 485* (sparse: halved);
     * PCIe Gen4 x16 64 GB/s both ways. */
    [P_L4] = {"L4", {121, 121, 60, 242.5}, 32, "PCIe 4.0 x16"},
    /* L40S datasheet: BF16/FP16 362.05 | 733*, TF32 183 | 366*, FP8 733 |
     * 1,466*; PCIe Gen4 x16 64 GB/s both ways. */
    [P_L40S] = {"L40S", {362.05, 362.05, 183, 733}, 32, "PCIe 4.0 x16"},
    /* L40 datasheet: BF16/FP16 181.05 | 362.1*, TF32 90.5 | 181*, FP8
     * 362 | 724*; PCIe Gen4 x16. */
    [P_L40] = {"L40", {181.05, 181.05, 90.5, 362}, 32, "PCIe 4.0 x16"},
    /* NVIDIA Ada GPU architecture whitepaper, GeForce RTX 4090 column,
     * dense: FP16/BF16 with FP32 accumulate 165.2 (330.4*), TF32 82.6
     * (165.2*), FP8 with FP32 accumulate 330.3 (660.6*). No NVLink. */
    [P_RTX4090] = {"RTX 4090", {165.2, 165.2, 82.6, 330.3}, 32,
                   "PCIe 4.0 x16"},
    /* RTX 6000 Ada datasheet: tensor 1,457 TFLOPS* (FP8 sparse); Ada
     * whitepaper, RTX 6000 column, dense: FP16/BF16 (FP32 accumulate,
     * full rate) 364.2, TF32 182.1, FP8 728.5. No NVLink. */
    [P_RTX6000_ADA] = {"RTX 6000 Ada", {364.2, 364.2, 182.1, 728.5}, 32,
                       "PCIe 4.0 x16"},
    /* A10 datasheet: BF16/FP16 125 | 250*, TF32 62.5 | 125*; no FP8;
     * PCIe Gen4 64 GB/s both ways. */
    [P_A10] = {"A10", {125, 125, 62.5, 0}, 32, "PCIe 4.0 x16"},
    /* V100 datasheet: tensor (FP16) 125 SXM2, 112 PCIe; Volta has no
     * BF16, TF32 or FP8 (0) and no sparsity. NVLink 2 300 GB/s both ways
     * -> 150; PCIe Gen3 32 GB/s both ways -> 16. */
    [P_V100_SXM2] = {"V100 SXM2", {0, 125, 0, 0}, 150, "NVLink 2"},
    [P_V100_PCIE] = {"V100 PCIe", {0, 112, 0, 0}, 16, "PCIe 3.0 x16"},
    /* V100S datasheet: tensor 130 (PCIe). */
    [P_V100S_PCIE] = {"V100S PCIe", {0, 130, 0, 0}, 16, "PCIe 3.0 x16"},
};

#define RULE_WORDS 3 /* required words of a rule, at most */
#define RULE_NOT 3   /* forbidden words of a rule, at most */

typedef struct peak_rule {
    int entry;
    const char *all[RULE_WORDS]; /* every one is a word of the name */
    const char *none[RULE_NOT];  /* none is */
} peak_rule;

/* Most specific first: the first rule that holds gives the entry. Names
 * NVML reports: "NVIDIA H100 80GB HBM3", "NVIDIA H100 PCIe", "NVIDIA H100
 * NVL", "NVIDIA H200", "NVIDIA H200 NVL", "NVIDIA B200", "NVIDIA
 * A100-SXM4-80GB", "NVIDIA A100 80GB PCIe", "NVIDIA A100-PCIE-40GB",
 * "NVIDIA L4", "NVIDIA L40S", "NVIDIA L40", "NVIDIA GeForce RTX 4090", "NVIDIA
 * RTX 6000 Ada Generation", "NVIDIA A10", "Tesla V100-SXM2-32GB",
 * "Tesla V100-PCIE-16GB", "Tesla V100S-PCIE-32GB". A name no rule holds
 * for (H800, A10G, RTX 4090 D, a laptop part, ...) has no peak. */
static const peak_rule k_rules[] = {
    {P_H100_NVL, {"H100", "NVL"}, {0}},
    {P_H100_PCIE, {"H100", "PCIE"}, {0}},
    {P_H100_SXM, {"H100", "HBM3"}, {0}},
    {P_H100_SXM, {"H100", "SXM5"}, {0}},
    {P_H100_SXM, {"H100", "SXM"}, {0}},
    {P_H200_NVL, {"H200", "NVL"}, {0}},
    {P_H200_SXM, {"H200"}, {0}},
    {P_B200, {"B200"}, {0}},
    {P_A100_PCIE, {"A100", "PCIE"}, {0}},
    {P_A100_SXM, {"A100", "SXM4"}, {0}},
    {P_A100_SXM, {"A100", "SXM"}, {0}},
    {P_L40S, {"L40S"}, {0}},
    {P_L40, {"L40"}, {0}},
    {P_L4, {"L4"}, {0}},
    {P_RTX4090, {"RTX", "4090"}, {"D", "LAPTOP", "MOBILE"}},
    {P_RTX6000_ADA, {"RTX", "6000", "ADA"}, {0}},
    {P_A10, {"A10"}, {0}},
    {P_V100S_PCIE, {"V100S"}, {0}},
    {P_V100_PCIE, {"V100", "PCIE"}, {0}},
    {P_V100_SXM2, {"V100", "SXM2"}, {0}},
};

#define NAME_WORDS 16    /* words of a device name looked at */
#define WORD_MAX 24      /* longer words match no rule */

typedef struct name_words {
    char w[NAME_WORDS][WORD_MAX];
    int n;
} name_words;

/* Splits s at every byte that is not an ASCII letter or digit; upper
 * case. Words past NAME_WORDS are ignored (real names have 2-5). */
static void split_words(const char *s, name_words *out)
{
    out->n = 0;
    while (*s && out->n < NAME_WORDS) {
        while (*s && !isalnum((unsigned char)*s))
            s++;
        size_t len = 0;
        char *w = out->w[out->n];
        while (isalnum((unsigned char)*s)) {
            if (len + 1 < WORD_MAX)
                w[len] = (char)toupper((unsigned char)*s);
            len++;
            s++;
        }
        if (len == 0)
            break;
        if (len + 1 >= WORD_MAX) {
            w[0] = '#'; /* too long: a word no rule names */
            len = 1;
        }
        w[len] = 0;
        out->n++;
    }
}

static int has_word(const name_words *nw, const char *word)
{
    for (int i = 0; i < nw->n; i++)
        if (strcmp(nw->w[i], word) == 0)
            return 1;
    return 0;
}

static int rule_holds(const peak_rule *r, const name_words *nw)
{
    for (int i = 0; i < RULE_WORDS && r->all[i]; i++)
        if (!has_word(nw, r->all[i]))
            return 0;
    for (int i = 0; i < RULE_NOT && r->none[i]; i++)
        if (has_word(nw, r->none[i]))
            return 0;
    return 1;
}

const tfb_gpu_peak *tfb_gpu_peak_find(const char *device_name)
{
    if (!device_name || !*device_name)
        return NULL;
    name_words nw;
    split_words(device_name, &nw);
    for (size_t i = 0; i < sizeof k_rules / sizeof k_rules[0]; i++)
        if (rule_holds(&k_rules[i], &nw))
            return &k_peaks[k_rules[i].entry];
    return NULL;
}

const tfb_gpu_peak *tfb_gpu_peak_table(size_t *n)
{
    if (n)
        *n = P_COUNT;
    return k_peaks;
}

static const struct {
    const char *s;
    tfb_peak_dtype d;
} k_dtype_names[] = {
    {"bf16", TFB_PEAK_BF16},         {"bfloat16", TFB_PEAK_BF16},
    {"fp16", TFB_PEAK_FP16},         {"float16", TFB_PEAK_FP16},
    {"half", TFB_PEAK_FP16},         {"f16", TFB_PEAK_FP16},
    {"tf32", TFB_PEAK_TF32},         {"tfloat32", TFB_PEAK_TF32},
    {"fp8", TFB_PEAK_FP8},           {"float8", TFB_PEAK_FP8},
    {"float8_e4m3fn", TFB_PEAK_FP8}, {"float8_e4m3fnuz", TFB_PEAK_FP8},
    {"float8_e5m2", TFB_PEAK_FP8},   {"float8_e5m2fnuz", TFB_PEAK_FP8},
    {"fp8_e4m3", TFB_PEAK_FP8},      {"fp8_e5m2", TFB_PEAK_FP8},
    {"e4m3", TFB_PEAK_FP8},          {"e5m2", TFB_PEAK_FP8},
};

static int ieq(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return 0;
    return *a == *b;
}

int tfb_peak_dtype_parse(const char *s, tfb_peak_dtype *out)
{
    if (!s || !out)
        return TFB_EINVAL;
    /* "torch.bfloat16", as str(tensor.dtype) gives it. */
    if (strncmp(s, "torch.", 6) == 0)
        s += 6;
    for (size_t i = 0; i < sizeof k_dtype_names / sizeof k_dtype_names[0];
         i++)
        if (ieq(s, k_dtype_names[i].s)) {
            *out = k_dtype_names[i].d;
            return 0;
        }
    return TFB_EINVAL;
}

const char *tfb_peak_dtype_name(tfb_peak_dtype d)
{
    static const char *const names[TFB_PEAK_DTYPE_COUNT] = {"bf16", "fp16",
                                                            "tf32", "fp8"};
    if ((int)d < 0 || d >= TFB_PEAK_DTYPE_COUNT)
        return "unknown";
    return names[d];
}
