/*
 * trace_render_test.c - the trace plugin's host-free parts, alone: the
 * renderer on hand-made call records covering every parameter kind (scalar,
 * enum, handle, device pointer, string, struct by value, struct by pointer,
 * output pointer, counted array with its count behind a pointer, callback),
 * the summary maths (median, sample standard deviation, percentages, the
 * table's layout), and the buffers' bound and drop accounting.
 */
#define _GNU_SOURCE   /* Dl_info, RTLD_NEXT */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tr_buf.h"
#include "tr_render.h"
#include "tr_stats.h"

/* ---- a hand-made API: one parameter of every kind ---- */

typedef struct dim3_ { uint32_t x, y, z; } dim3_;
typedef struct desc_ { int32_t kind; uint32_t width; char label[8]; } desc_;
typedef struct params_ {
    int32_t n;
    int32_t e;
    void *h;
    uint64_t dp;
    const char *s;
    dim3_ dim;
    const desc_ *sp;
    uint64_t *out;
    void **arr;
    size_t *cnt;
    void (*cb)(void);
} params_;

static const cushim_enum_value kind_values[] = {{"MY_A", 1}, {"MY_B", 2}};
static const cushim_enum_info kind_enum = {"mykind", 4, 2, kind_values};
static const cushim_field_info dim_fields[] = {
    {"x", "unsigned int", CUSHIM_KIND_SCALAR, 0, 0, 0, 4, 0, NULL, NULL},
    {"y", "unsigned int", CUSHIM_KIND_SCALAR, 0, 0, 4, 4, 0, NULL, NULL},
    {"z", "unsigned int", CUSHIM_KIND_SCALAR, 0, 0, 8, 4, 0, NULL, NULL},
};
static const cushim_struct_info dim_struct = {"dim3", 12, 3, dim_fields};
static const cushim_field_info desc_fields[] = {
    {"kind", "mykind", CUSHIM_KIND_ENUM, 0, 0, offsetof(desc_, kind), 4, 0, &kind_enum, NULL},
    {"width", "unsigned int", CUSHIM_KIND_SCALAR, 0, 0, offsetof(desc_, width), 4, 0, NULL, NULL},
    {"label", "char[8]", CUSHIM_KIND_SCALAR, 0, 0, offsetof(desc_, label), 8, 8, NULL, NULL},
};
static const cushim_struct_info desc_struct = {"desc", sizeof(desc_), 3, desc_fields};

#define P(name, type, ctype, kind, dir, cnt, esz, pointee, ind, en, st) \
    {#name, type, ctype, kind, dir, offsetof(params_, name), sizeof(((params_ *)0)->name), cnt, esz, 0, pointee, ind, 0, en, st}
static const cushim_param_info api_params[] = {
    P(n, "int", "int", CUSHIM_KIND_SCALAR, CUSHIM_DIR_IN, -1, 0, 0, 0, NULL, NULL),
    P(e, "mykind", "enum mykind_enum", CUSHIM_KIND_ENUM, CUSHIM_DIR_IN, -1, 0, 0, 0, &kind_enum, NULL),
    P(h, "CUstream", "struct CUstream_st *", CUSHIM_KIND_HANDLE, CUSHIM_DIR_IN, -1, 0, 0, 0, NULL, NULL),
    P(dp, "CUdeviceptr", "unsigned long long", CUSHIM_KIND_DEVPTR, CUSHIM_DIR_IN, -1, 0, 0, 0, NULL, NULL),
    P(s, "const char *", "const char *", CUSHIM_KIND_STRING, CUSHIM_DIR_IN, -1, 0, 0, 0, NULL, NULL),
    P(dim, "dim3", "struct dim3", CUSHIM_KIND_STRUCT, CUSHIM_DIR_IN, -1, 0, 0, 0, NULL, &dim_struct),
    P(sp, "const desc *", "const struct desc_st *", CUSHIM_KIND_POINTER, CUSHIM_DIR_IN, -1, sizeof(desc_),
      CUSHIM_KIND_STRUCT, 0, NULL, &desc_struct),
    P(out, "CUdeviceptr *", "unsigned long long *", CUSHIM_KIND_POINTER, CUSHIM_DIR_OUT, -1, 8,
      CUSHIM_KIND_DEVPTR, 0, NULL, NULL),
    P(arr, "CUgraphNode *", "struct CUgraphNode_st **", CUSHIM_KIND_POINTER, CUSHIM_DIR_OUT, 9, 8,
      CUSHIM_KIND_HANDLE, 1, NULL, NULL),
    P(cnt, "size_t *", "unsigned long *", CUSHIM_KIND_POINTER, CUSHIM_DIR_INOUT, -1, 8, CUSHIM_KIND_SCALAR, 0,
      NULL, NULL),
    P(cb, "CUhostFn", "void (*)(void *)", CUSHIM_KIND_CALLBACK, CUSHIM_DIR_IN, -1, 0, 0, 0, NULL, NULL),
};
static const cushim_api_info api = {
    .id = 7, .name = "cuTest", .base_name = "cuTest", .library = CUSHIM_LIB_DRIVER,
    .ret_kind = CUSHIM_RET_CURESULT, .params_size = sizeof(params_), .ret_size = 4,
    .nparams = sizeof api_params / sizeof api_params[0], .params = api_params,
};

static const cushim_param_info *t_param(const cushim_api_info *a, uint32_t i)
{
    return i < a->nparams ? &a->params[i] : NULL;
}
static const char *t_result(uint32_t kind, int32_t code)
{
    if (kind == CUSHIM_RET_NVMLRETURN)
        return code == 0 ? "NVML_SUCCESS" : code == 2 ? "NVML_ERROR_INVALID_ARGUMENT" : NULL;
    if (kind == CUSHIM_RET_NCCLRESULT)
        return code == 0 ? "ncclSuccess" : code == 4 ? "ncclInvalidArgument" : code == 7 ? "ncclInProgress" : NULL;
    return kind == CUSHIM_RET_CURESULT && code == 0 ? "CUDA_SUCCESS" : kind == CUSHIM_RET_CURESULT && code == 1 ? "CUDA_ERROR_INVALID_VALUE" : NULL;
}
static const char *t_enum(const cushim_enum_info *e, int64_t v)
{
    for (uint32_t i = 0; i < e->nvalues; i++)
        if (e->values[i].value == v)
            return e->values[i].name;
    return NULL;
}
static const tr_meta meta = {.api_param = t_param, .result_name = t_result, .enum_value_name = t_enum,
                             .sizeof_param_info = sizeof(cushim_param_info), .struct_field = NULL};

/* a record under construction */
typedef struct rb {
    _Alignas(8) unsigned char b[4096];
    uint32_t len;
} rb;

static void rb_blob(rb *r, uint16_t param, const void *d, uint32_t n, uint64_t count, uint16_t flags)
{
    tr_blob bl = {.param = param, .flags = flags, .len = n, .count = count};
    memcpy(r->b + r->len, &bl, sizeof bl);
    memcpy(r->b + r->len + sizeof bl, d, n);
    r->len += (uint32_t)sizeof bl + tr_pad8(n);
    memcpy(r->b, &r->len, sizeof r->len);   /* every record starts with its length */
}

static void rb_start(rb *r, uint16_t type, const params_ *p)
{
    memset(r, 0, sizeof *r);
    if (type == TR_REC_EXIT) {   /* the compact header: the api, depth and parent are the ENTER's */
        tr_exit h = {.type = type, .seq = 1};
        memcpy(r->b, &h, sizeof h);
        r->len = sizeof h;
    } else {
        tr_rec h = {.type = type, .api_id = 7, .seq = 1};
        memcpy(r->b, &h, sizeof h);
        r->len = sizeof h;
    }
    if (p != NULL) {
        memcpy(r->b + r->len, p, sizeof *p);
        r->len += tr_pad8(sizeof *p);
    }
    memcpy(r->b, &r->len, sizeof r->len);
}

static char *render(const rb *en, const rb *ex)
{
    tr_sb sb = {0};
    tr_render_args(&sb, &meta, &api, (const tr_rec *)en->b, ex ? (const tr_exit *)ex->b : NULL);
    return sb.p;
}

static params_ sample(desc_ *d, uint64_t *out, void **arr, size_t *cnt)
{
    params_ p;
    memset(&p, 0, sizeof p);
    memset(d, 0, sizeof *d);
    d->kind = 1;
    d->width = 640;
    memcpy(d->label, "lbl", 4);
    p.n = -5;
    p.e = 2;
    p.h = (void *)0xabc;
    p.dp = 0x7f0000001000ull;
    p.s = "hello \"w\"";
    p.dim = (dim3_){4, 2, 1};
    p.sp = d;
    p.out = out;
    p.arr = arr;
    p.cnt = cnt;
    p.cb = (void (*)(void))(uintptr_t)0x1234;
    return p;
}

/* A test's sample call: its descriptor d, output word out (first value), output array arr (the values after
   the count) whose count cnt is, and the parameters p that point at them. */
#define SAMPLE(out0, cnt0, ...)                                                                              \
    desc_ d;                                                                                                 \
    uint64_t out = (out0);                                                                                   \
    void *arr[] = {__VA_ARGS__};                                                                             \
    size_t cnt = (cnt0);                                                                                     \
    params_ p = sample(&d, &out, arr, &cnt)

static void every_kind(void **state)
{
    SAMPLE(0xdead000, 3, (void *)1, (void *)2, (void *)3);
    rb en, ex;
    char *s;
    (void)state;
    rb_start(&en, TR_REC_ENTER, &p);
    rb_blob(&en, 4, p.s, (uint32_t)strlen(p.s), strlen(p.s), 0);
    rb_blob(&en, 6, &d, sizeof d, 1, 0);
    ((tr_rec *)en.b)->aux = (uint64_t)(uintptr_t)"vk";
    rb_start(&ex, TR_REC_EXIT, NULL);
    rb_blob(&ex, 7, &out, 8, 1, 0);
    rb_blob(&ex, 8, arr, sizeof arr, 3, 0);
    rb_blob(&ex, 9, &cnt, 8, 1, 0);
    /* the renderer table's remembered rows (tr_render_memo) give what the first, looked-up rendering gave */
    for (int round = 0; round < 3; round++) {
        s = render(&en, &ex);
        assert_string_equal(s, ",\"n\":-5,\"e\":\"MY_B\",\"h\":\"0xabc\",\"dp\":\"0x7f0000001000\",\"s\":\"hello \\\"w\\\"\","
                               "\"dim\":{\"x\":4,\"y\":2,\"z\":1},\"sp\":{\"kind\":\"MY_A\",\"width\":640,\"label\":\"lbl\"},"
                               "\"out\":\"0xdead000\",\"arr\":[\"0x1\",\"0x2\",\"0x3\"],\"cnt\":3,\"cb\":\"0x1234\","
                               "\"kernel\":\"vk\",\"result\":\"CUDA_SUCCESS\"");
        free(s);
    }
}

/* a failed call: outputs were not written; a running call: no result */
static void failed_and_unfinished(void **state)
{
    SAMPLE(0, 0, NULL);
    rb en, ex;
    char *s;
    (void)state;
    p.s = NULL;
    p.sp = NULL;
    p.e = 9;   /* no name: the number */
    rb_start(&en, TR_REC_ENTER, &p);
    rb_start(&ex, TR_REC_EXIT, NULL);
    ((tr_exit *)ex.b)->aux = 1;
    rb_blob(&ex, 7, &out, 8, 1, 0);   /* ignored: the call failed */
    s = render(&en, &ex);
    assert_non_null(strstr(s, "\"e\":9,"));
    assert_non_null(strstr(s, "\"s\":null,"));
    assert_non_null(strstr(s, "\"sp\":null,"));
    assert_non_null(strstr(s, "(not written: the call failed)"));
    assert_non_null(strstr(s, "\"result\":\"CUDA_ERROR_INVALID_VALUE\""));
    free(s);
    s = render(&en, NULL);
    assert_non_null(strstr(s, "\"unfinished\":true"));
    assert_null(strstr(s, "result"));
    free(s);
}

/* a library's status (nvmlReturn_t, ncclResult_t, cublasStatus_t) as a CUresult: by name, and after a failure
   no outputs (the recorder keeps none: a library may refuse an output pointer without writing it); an API that
   returns no status shows its outputs */
static void library_status(void **state)
{
    SAMPLE(0xbeef, 0, NULL);
    cushim_api_info nv = api, other = api;
    rb en, ex;
    tr_sb sb = {0};
    (void)state;
    nv.library = CUSHIM_LIB_NVML;
    nv.ret_kind = CUSHIM_RET_NVMLRETURN;
    other.ret_kind = CUSHIM_RET_OTHER;
    rb_start(&en, TR_REC_ENTER, &p);
    rb_start(&ex, TR_REC_EXIT, NULL);
    ((tr_exit *)ex.b)->aux = 2;
    rb_blob(&ex, 7, &out, 8, 1, 0);
    tr_render_args(&sb, &meta, &nv, (const tr_rec *)en.b, (const tr_exit *)ex.b);
    assert_non_null(strstr(sb.p, "\"result\":\"NVML_ERROR_INVALID_ARGUMENT\""));
    assert_non_null(strstr(sb.p, "(not written: the call failed)"));
    assert_null(strstr(sb.p, "0xbeef"));
    free(sb.p);
    memset(&sb, 0, sizeof sb);
    ((tr_exit *)ex.b)->aux = 0;
    tr_render_args(&sb, &meta, &nv, (const tr_rec *)en.b, (const tr_exit *)ex.b);
    assert_non_null(strstr(sb.p, "\"result\":\"NVML_SUCCESS\""));
    assert_non_null(strstr(sb.p, "0xbeef"));
    free(sb.p);
    memset(&sb, 0, sizeof sb);
    ((tr_exit *)ex.b)->aux = 2;   /* no status: a value, the outputs shown */
    tr_render_args(&sb, &meta, &other, (const tr_rec *)en.b, (const tr_exit *)ex.b);
    assert_null(strstr(sb.p, "not written"));
    assert_non_null(strstr(sb.p, "0xbeef"));
    free(sb.p);
    /* NCCL: an error fails; ncclInProgress (a non-blocking communicator) is no failure, its outputs not kept */
    nv.library = CUSHIM_LIB_NCCL;
    nv.ret_kind = CUSHIM_RET_NCCLRESULT;
    memset(&sb, 0, sizeof sb);
    ((tr_exit *)ex.b)->aux = 4;
    tr_render_args(&sb, &meta, &nv, (const tr_rec *)en.b, (const tr_exit *)ex.b);
    assert_non_null(strstr(sb.p, "\"result\":\"ncclInvalidArgument\""));
    assert_non_null(strstr(sb.p, "(not written: the call failed)"));
    free(sb.p);
    memset(&sb, 0, sizeof sb);
    ((tr_exit *)ex.b)->aux = 7;
    tr_render_args(&sb, &meta, &nv, (const tr_rec *)en.b, (const tr_exit *)ex.b);
    assert_non_null(strstr(sb.p, "\"result\":\"ncclInProgress\""));
    assert_non_null(strstr(sb.p, "(not kept: in progress)"));
    assert_null(strstr(sb.p, "not written"));
    assert_null(strstr(sb.p, "0xbeef"));
    free(sb.p);
}

/* a skipped call's outputs are read safely (tr_cap_write_safe): one that could not be read renders as such, one
   whose read was refused as not read */
static void skipped_output_unreadable(void **state)
{
    SAMPLE(0xbeef, 0, NULL);
    rb en, ex;
    char *s;
    (void)state;
    rb_start(&en, TR_REC_ENTER, &p);
    rb_start(&ex, TR_REC_EXIT, NULL);
    ((tr_exit *)ex.b)->flags = TR_F_SKIPPED;
    rb_blob(&ex, 7, &out, 0, 1, TR_BLOB_UNREAD);
    s = render(&en, &ex);
    assert_non_null(strstr(s, "(not readable)\""));
    assert_non_null(strstr(s, "\"skipped\":true"));
    free(s);
    rb_start(&ex, TR_REC_EXIT, NULL);
    rb_blob(&ex, 7, &out, 0, 1, TR_BLOB_UNCHECKED);
    s = render(&en, &ex);
    assert_non_null(strstr(s, "(not read)\""));
    free(s);
}

/* an EXIT's only output inline (TR_F_INLINE: the word without its blob) renders as the blob would; the
   other flags still count; a flag without its word renders as no output kept */
static void inline_output_renders_as_blob(void **state)
{
    SAMPLE(0xdead000, 0, NULL);
    rb en, ex, exi;
    char *s, *si;
    uint16_t fl = TR_F_INLINE_OF(7, 3);
    (void)state;
    rb_start(&en, TR_REC_ENTER, &p);
    rb_start(&ex, TR_REC_EXIT, NULL);
    rb_blob(&ex, 7, &out, 8, 1, 0);
    rb_start(&exi, TR_REC_EXIT, NULL);
    memcpy(exi.b + exi.len, &out, 8);
    exi.len += 8;
    memcpy(exi.b, &exi.len, sizeof exi.len);
    memcpy(exi.b + offsetof(tr_exit, flags), &fl, sizeof fl);
    assert_int_equal(exi.len, sizeof(tr_exit) + 8);
    s = render(&en, &ex);
    si = render(&en, &exi);
    assert_non_null(strstr(s, "\"out\":\"0xdead000\""));
    assert_string_equal(s, si);
    free(si);
    fl |= TR_F_SKIPPED;
    memcpy(exi.b + offsetof(tr_exit, flags), &fl, sizeof fl);
    si = render(&en, &exi);
    assert_non_null(strstr(si, "\"out\":\"0xdead000\""));
    assert_non_null(strstr(si, "\"skipped\":true"));
    free(si);
    exi.len = sizeof(tr_exit);   /* the flag, no word */
    memcpy(exi.b, &exi.len, sizeof exi.len);
    si = render(&en, &exi);
    assert_null(strstr(si, "0xdead000"));
    free(si);
    free(s);
}

/* inputs read after the call (the recorder's layout: their blobs in the EXIT) render as they do from the
   ENTER; after a failed call, an input that could not be read says so, one read in part shows that part */
static void inputs_in_exit(void **state)
{
    SAMPLE(0xdead000, 3, (void *)1, (void *)2, (void *)3);
    rb en, en0, ex, ex0;
    char *s, *s0;
    (void)state;
    rb_start(&en, TR_REC_ENTER, &p);
    rb_blob(&en, 4, p.s, (uint32_t)strlen(p.s), strlen(p.s), 0);
    rb_blob(&en, 6, &d, sizeof d, 1, 0);
    rb_start(&ex, TR_REC_EXIT, NULL);
    rb_blob(&ex, 7, &out, 8, 1, 0);
    rb_start(&en0, TR_REC_ENTER, &p);
    rb_start(&ex0, TR_REC_EXIT, NULL);
    rb_blob(&ex0, 4, p.s, (uint32_t)strlen(p.s), strlen(p.s), 0);
    rb_blob(&ex0, 6, &d, sizeof d, 1, 0);
    rb_blob(&ex0, 7, &out, 8, 1, 0);
    s = render(&en, &ex);
    s0 = render(&en0, &ex0);
    assert_string_equal(s, s0);
    assert_non_null(strstr(s0, "\"sp\":{\"kind\":\"MY_A\",\"width\":640,\"label\":\"lbl\"}"));
    free(s);
    free(s0);

    /* failed: the string unreadable, the struct not read (no safe read on that system); then a string read in part */
    p.s = (const char *)(uintptr_t)0x7000;
    p.sp = (const desc_ *)(uintptr_t)0x8000;
    rb_start(&en0, TR_REC_ENTER, &p);
    rb_start(&ex0, TR_REC_EXIT, NULL);
    ((tr_exit *)ex0.b)->aux = 1;
    rb_blob(&ex0, 4, "", 0, 0, TR_BLOB_UNREAD);
    rb_blob(&ex0, 6, "", 0, 0, TR_BLOB_UNCHECKED);
    s0 = render(&en0, &ex0);
    assert_non_null(strstr(s0, "\"s\":\"0x7000 (not readable)\""));
    assert_non_null(strstr(s0, "\"sp\":\"0x8000 (not read: the call failed)\""));
    assert_non_null(strstr(s0, "\"result\":\"CUDA_ERROR_INVALID_VALUE\""));
    free(s0);
    rb_start(&ex0, TR_REC_EXIT, NULL);
    ((tr_exit *)ex0.b)->aux = 1;
    rb_blob(&ex0, 4, "vecad", 5, 5, TR_BLOB_TRUNC | TR_BLOB_UNREAD);
    s0 = render(&en0, &ex0);
    assert_non_null(strstr(s0, "\"s\":\"vecad...\""));
    free(s0);
}

/* bounded strings and arrays say so */
static void truncation(void **state)
{
    SAMPLE(0, 0, NULL);
    rb en, ex;
    uint64_t many[70];
    char *s;
    (void)state;
    for (int i = 0; i < 70; i++)
        many[i] = (uint64_t)i;
    rb_start(&en, TR_REC_ENTER, &p);
    rb_blob(&en, 4, "abc\x01\xff", 5, 900, TR_BLOB_TRUNC);
    rb_start(&ex, TR_REC_EXIT, NULL);
    rb_blob(&ex, 8, many, sizeof many, 5000, TR_BLOB_TRUNC);
    s = render(&en, &ex);
    assert_non_null(strstr(s, "\"s\":\"abc\\u0001\\u00ff...\""));
    assert_non_null(strstr(s, ",\"0x3f\",\"... 5000 in all\"]"));
    free(s);
}

/* an empty string, and an output array the call filled with no element */
static void empty_values(void **state)
{
    SAMPLE(0, 0, NULL);
    rb en, ex;
    char *s;
    (void)state;
    p.s = "";
    rb_start(&en, TR_REC_ENTER, &p);
    rb_blob(&en, 4, "", 0, 0, 0);
    rb_start(&ex, TR_REC_EXIT, NULL);
    rb_blob(&ex, 8, arr, 0, 0, 0);
    s = render(&en, &ex);
    assert_non_null(strstr(s, "\"s\":\"\","));
    assert_non_null(strstr(s, "\"arr\":[],"));
    free(s);
}

/* dladdr as the renderer sees it: the C library's, but 0x4242 is the start of a symbol whose name holds a quote,
   a backslash, an ESC sequence, a newline and a byte that is not UTF-8 (an ELF symbol's name may hold any byte but
   NUL), and 0x4343 of one longer than a kernel's name. */
static char long_symbol[TR_NAME_MAX + 100];
int dladdr(const void *addr, Dl_info *info)
{
    static int (*real)(const void *, Dl_info *);
    if ((uintptr_t)addr == 0x4242 || (uintptr_t)addr == 0x4343) {
        memset(info, 0, sizeof *info);
        if ((uintptr_t)addr == 0x4343) {
            memset(long_symbol, 'x', sizeof long_symbol - 1);
            info->dli_sname = long_symbol;
        } else {
            info->dli_sname = "cb\"\\\x1b[2J\n\xff";
        }
        info->dli_saddr = (void *)(uintptr_t)addr;
        return 1;
    }
    if (real == NULL)
        *(void **)&real = dlsym(RTLD_NEXT, "dladdr");
    return real != NULL ? real(addr, info) : 0;
}

/* A callback is "0x... SYMBOL": the symbol's name is escaped as every string (it ended the JSON string early),
   and cut as a kernel's name. */
static void callback_symbol(void **state)
{
    SAMPLE(0, 0, NULL);
    rb en, ex;
    char *s;
    (void)state;
    p.cb = (void (*)(void))(uintptr_t)0x4242;
    rb_start(&en, TR_REC_ENTER, &p);
    rb_start(&ex, TR_REC_EXIT, NULL);
    s = render(&en, &ex);
    assert_non_null(strstr(s, ",\"cb\":\"0x4242 cb\\\"\\\\\\u001b[2J\\u000a\\u00ff\","));
    free(s);
    p.cb = (void (*)(void))(uintptr_t)0x4343;
    rb_start(&en, TR_REC_ENTER, &p);
    s = render(&en, &ex);
    assert_non_null(strstr(s, ",\"cb\":\"0x4343 xxx"));
    assert_non_null(strstr(s, "xxx...\","));
    assert_true(strlen(s) < TR_NAME_MAX + 400);
    free(s);
}

static void json_strings(void **state)
{
    tr_sb sb = {0};
    (void)state;
    tr_sb_json_str(&sb, "\xc3\xa9\n\\", 4, 100);   /* valid UTF-8 kept */
    assert_string_equal(sb.p, "\"\xc3\xa9\\u000a\\\\\"");
    /* ill-formed UTF-8 byte by byte: overlong, surrogate, past U+10FFFF, F5; well-formed 4- and 3-byte kept */
    sb.len = 0;
    tr_sb_json_str(&sb, "\xc0\x80|\xed\xa0\x80|\xf4\x90\x80\x80|\xf5|\xf0\x9f\x98\x80|\xe0\xa0\x80", 22, 100);
    assert_string_equal(sb.p, "\"\\u00c0\\u0080|\\u00ed\\u00a0\\u0080|\\u00f4\\u0090\\u0080\\u0080|\\u00f5|"
                              "\xf0\x9f\x98\x80|\xe0\xa0\x80\"");
    sb.len = 0;
    tr_sb_us(&sb, 1234567);
    assert_string_equal(sb.p, "1234.567");
    tr_sb_free(&sb);
}

/* ---- summary maths ---- */

static void stats_maths(void **state)
{
    tr_stats st;
    tr_stat_row *rows;
    uint32_t n;
    (void)state;
    tr_stats_init(&st);
    for (uint64_t v = 4; v >= 1; v--)
        tr_stats_add(&st, "a", v);
    tr_stats_add(&st, "b", 30);
    tr_stats_add(&st, "b", 10);
    tr_stats_add(&st, "b", 20);
    tr_stats_add(&st, "c", 7);
    n = tr_stats_rows(&st, &rows);
    assert_int_equal(n, 3);
    assert_string_equal(rows[0].name, "b");   /* by total time */
    assert_int_equal(rows[0].total, 60);
    assert_true(rows[0].med == 20.0 && rows[0].avg == 20.0 && rows[0].stddev == 10.0);
    assert_string_equal(rows[1].name, "a");
    assert_true(rows[1].med == 2.5);               /* even count: the mean of the middle two */
    assert_true(rows[1].stddev > 1.2909 && rows[1].stddev < 1.2910);   /* sample: sqrt(5/3) */
    assert_int_equal(rows[1].min, 1);
    assert_int_equal(rows[1].max, 4);
    assert_true(rows[2].stddev == 0.0);            /* one value */
    assert_true(rows[0].pct > 77.92 && rows[0].pct < 77.93);   /* 60 of 77 */
    free(rows);
    tr_stats_free(&st);
}

/* Past the exact budget the largest series becomes a histogram (once it is larger than one): memory stays
   bounded, total/min/max/avg stay exact, the median is within 0.4%, the standard deviation matches; the small
   series stay exact; the table says which. */
static void stats_bounded(void **state)
{
    tr_stats st;
    tr_stat_row *rows;
    uint32_t n;
    double exact_sd = 0, mean = 0;
    uint64_t total = 0;
    char *text = NULL;
    size_t len = 0;
    FILE *f;
    (void)state;
    tr_stats_init(&st);
    tr_stats_set_exact(&st, 64);
    for (uint64_t i = 0; i < 100001; i++) {   /* 1000 + (i * 7919 mod 100001) ns, in a scrambled order */
        uint64_t v = 1000 + (i * 7919) % 100001;
        total += v;
        assert_int_equal(tr_stats_add(&st, "big", v), 0);
    }
    for (uint64_t v = 1; v <= 5; v++)
        tr_stats_add(&st, "small", v * 10);
    tr_stats_add(&st, "huge", UINT64_MAX / 4);   /* the top buckets */
    assert_int_equal(st.napprox, 1);
    assert_null(st.s[0].v);                     /* its values went into buckets */
    assert_non_null(st.s[0].hist);
    assert_true(st.exact_used <= 64);   /* what is left exact: the two small series */
    mean = (double)total / 100001.0;
    for (uint64_t i = 0; i < 100001; i++) {
        double d = (double)(1000 + (i * 7919) % 100001) - mean;
        exact_sd += d * d;
    }
    exact_sd = sqrt(exact_sd / 100000.0);
    n = tr_stats_rows(&st, &rows);
    assert_int_equal(n, 3);
    for (uint32_t i = 0; i < n; i++) {
        if (strcmp(rows[i].name, "big") == 0) {
            assert_true(rows[i].approx);
            assert_int_equal(rows[i].n, 100001);
            assert_int_equal(rows[i].total, total);
            assert_int_equal(rows[i].min, 1000);
            assert_int_equal(rows[i].max, 101000);
            assert_true(fabs(rows[i].med - 51000.0) <= 51000.0 * 0.004);   /* the exact median: 51000 */
            assert_true(fabs(rows[i].stddev - exact_sd) <= exact_sd * 1e-9);
        } else if (strcmp(rows[i].name, "small") == 0) {
            assert_false(rows[i].approx);
            assert_true(rows[i].med == 30.0);
        } else {
            assert_string_equal(rows[i].name, "huge");
            assert_int_equal(rows[i].max, UINT64_MAX / 4);
        }
    }
    f = open_memstream(&text, &len);
    tr_stats_print(f, rows, n, "Num Calls");
    fclose(f);
    free(rows);
    /* many small series (kernel names) past the budget stay exact: a histogram would be larger; a second large
       one becomes a histogram once it outgrows one */
    for (int k = 0; k < 200; k++) {
        char name[32];
        snprintf(name, sizeof name, "k%d", k);
        for (uint64_t v = 0; v < 100; v++)
            tr_stats_add(&st, name, v);
    }
    assert_int_equal(st.napprox, 1);
    for (uint64_t v = 0; v < 20000; v++)
        tr_stats_add(&st, "big2", v);
    assert_int_equal(st.napprox, 2);
    n = tr_stats_rows(&st, &rows);
    assert_int_equal(n, 204);   /* big, small, huge, k0..k199, big2 */
    assert_non_null(strstr(text, "Med (ns) from a histogram, within 0.4%"));
    assert_non_null(strstr(text, "the trace file has every one): big\n"));
    free(text);
    free(rows);
    tr_stats_free(&st);
}

static void stats_table(void **state)
{
    tr_stat_row r = {.name = "cuMemAlloc_v2", .total = 1234567, .n = 3, .min = 1000, .max = 1000000,
                     .pct = 100, .avg = 411522.333, .med = 233567, .stddev = 1234.56};
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    (void)state;
    tr_stats_print(f, &r, 1, "Num Calls");
    fclose(f);
    assert_string_equal(text,
        " Time (%)  Total Time (ns)  Num Calls   Avg (ns)   Med (ns)  Min (ns)   Max (ns)  StdDev (ns)  Name         \n"
        " --------  ---------------  ---------  ---------  ---------  --------  ---------  -----------  -------------\n"
        "    100.0        1,234,567          3  411,522.3  233,567.0     1,000  1,000,000      1,234.6  cuMemAlloc_v2\n");
    free(text);
    /* a kernel's name with control bytes (from the program, or a trace file): '?' for each, same width */
    r.name = "k\x1b[2J\x07x";
    f = open_memstream(&text, &len);
    tr_stats_print(f, &r, 1, "Num Calls");
    fclose(f);
    assert_non_null(strstr(text, "  k?[2J?x\n"));
    assert_null(strchr(text, '\x1b'));
    free(text);
    /* C1 controls in UTF-8 (U+009B: CSI to some terminals) too; other characters as they are */
    r.name = "k\xc2\x9b" "2J\xc2\x80\xc2\xa0\xc3\xa9";
    f = open_memstream(&text, &len);
    tr_stats_print(f, &r, 1, "Num Calls");
    fclose(f);
    assert_non_null(strstr(text, "  k?2J?\xc2\xa0\xc3\xa9\n"));
    free(text);
}

/* The memory-operation tables (cuda_gpu_mem_time_sum, cuda_gpu_mem_size_sum) from the trace's event names; a
   table with no rows is not printed. */
static void stats_memops(void **state)
{
    tr_stats t, z;
    char *text = NULL;
    size_t len = 0;
    FILE *f;
    (void)state;
    assert_string_equal(tr_memop_label("Memcpy HtoD"), "[CUDA memcpy Host-to-Device]");
    assert_string_equal(tr_memop_label("Memcpy DtoH"), "[CUDA memcpy Device-to-Host]");
    assert_string_equal(tr_memop_label("Memcpy PtoP"), "[CUDA memcpy Peer-to-Peer]");
    assert_string_equal(tr_memop_label("Memcpy AtoD"), "[CUDA memcpy Array-to-Device]");
    assert_string_equal(tr_memop_label("Memset "), "[CUDA memset]");
    assert_string_equal(tr_memop_label("Memcpy unknown"), "[CUDA memcpy Unknown]");
    assert_string_equal(tr_memop_label(""), "[CUDA memcpy Unknown]");
    tr_stats_init(&t);
    tr_stats_init(&z);
    tr_stats_add(&t, "[CUDA memcpy Host-to-Device]", 1000000);
    tr_stats_add(&t, "[CUDA memcpy Host-to-Device]", 2000000);
    tr_stats_add(&t, "[CUDA memcpy Host-to-Device]", 4000000);
    tr_stats_add(&t, "[CUDA memset]", 512);
    f = open_memstream(&text, &len);
    tr_stats_print_memops(f, &z, &t);   /* sizes only: the time table has no rows */
    fclose(f);
    assert_string_equal(text,
        "\nCUDA GPU MemOps Summary by Size (cuda_gpu_mem_size_sum):\n\n"
        " Total (MB)  Count  Avg (MB)  Med (MB)  Min (MB)  Max (MB)  StdDev (MB)  Operation                   \n"
        " ----------  -----  --------  --------  --------  --------  -----------  ----------------------------\n"
        "      7.000      3     2.333     2.000     1.000     4.000        1.528  [CUDA memcpy Host-to-Device]\n"
        "      0.001      1     0.001     0.001     0.001     0.001        0.000  [CUDA memset]\n");
    free(text);
    f = open_memstream(&text, &len);
    tr_stats_print_memops(f, &t, &z);   /* the same values as durations: the time table's layout */
    fclose(f);
    assert_non_null(strstr(text, "CUDA GPU MemOps Summary by Time (cuda_gpu_mem_time_sum):\n\n"
                                 " Time (%)  Total Time (ns)  Count     Avg (ns)     Med (ns)"));
    assert_non_null(strstr(text, "\n    100.0        7,000,000      3  2,333,333.3  2,000,000.0  1,000,000  4,000,000  "
                                 "1,527,525.2  [CUDA memcpy Host-to-Device]\n"));
    assert_non_null(strstr(text, "  [CUDA memcpy Host-to-Device]\n"));
    assert_null(strstr(text, "by Size"));
    free(text);
    tr_stats_free(&t);
    tr_stats_free(&z);
}

/* cushim stats --format=json's tables: every column, raw numbers, names as strict JSON strings */
static void stats_json(void **state)
{
    tr_stats t;
    char *text = NULL;
    size_t len = 0;
    FILE *f;
    (void)state;
    tr_stats_init(&t);
    tr_stats_add(&t, "cuInit", 300);
    tr_stats_add(&t, "cuInit", 100);
    tr_stats_add(&t, "k\"\\\x01\n\xc3\xa9\xff\xed\xa0\x80\xe4\xb8\xad", 100);   /* quote, backslash, controls, é, bad, surrogate, 中 */
    f = open_memstream(&text, &len);
    tr_stats_json(f, "cuda_api_sum", &t, 0);
    fputc('|', f);
    tr_stats_json(f, "sizes", &t, 1);
    fclose(f);
    assert_string_equal(text,
        "\"cuda_api_sum\":[\n"
        "{\"name\":\"cuInit\",\"count\":2,\"total_ns\":400,\"time_pct\":80.000,\"avg_ns\":200.000,\"med_ns\":200.000,"
        "\"min_ns\":100,\"max_ns\":300,\"stddev_ns\":141.421,\"med_approx\":false},\n"
        "{\"name\":\"k\\\"\\\\\\u0001\\u000a\xc3\xa9????\xe4\xb8\xad\",\"count\":1,\"total_ns\":100,\"time_pct\":20.000,"
        "\"avg_ns\":100.000,\"med_ns\":100.000,\"min_ns\":100,\"max_ns\":100,\"stddev_ns\":0.000,\"med_approx\":false}]|"
        "\"sizes\":[\n"
        "{\"name\":\"cuInit\",\"count\":2,\"total_bytes\":400,\"avg_bytes\":200.000,\"med_bytes\":200.000,"
        "\"min_bytes\":100,\"max_bytes\":300,\"stddev_bytes\":141.421,\"med_approx\":false},\n"
        "{\"name\":\"k\\\"\\\\\\u0001\\u000a\xc3\xa9????\xe4\xb8\xad\",\"count\":1,\"total_bytes\":100,"
        "\"avg_bytes\":100.000,\"med_bytes\":100.000,\"min_bytes\":100,\"max_bytes\":100,\"stddev_bytes\":0.000,"
        "\"med_approx\":false}]");
    free(text);
    tr_stats_free(&t);
}

/* nvtx_sum: the Style column from each name's prefix, "style" in JSON; past max_series names a new name's
   values go to its style's fold row */
static void stats_nvtx(void **state)
{
    tr_stats t;
    tr_stat_row *rows = NULL;
    uint32_t n;
    char *text = NULL;
    size_t len = 0;
    FILE *f;
    (void)state;
    tr_stats_init(&t);
    tr_stats_set_max_series(&t, 3);
    tr_stats_add(&t, "PushPop\x1f:a", 10);
    tr_stats_add(&t, "PushPop\x1f" "d:b", 20);
    tr_stats_add(&t, "StartEnd\x1f:c", 30);
    tr_stats_add(&t, "PushPop\x1f:x", 1);    /* past 3 names: folded, by style */
    tr_stats_add(&t, "StartEnd\x1f:y", 2);
    tr_stats_add(&t, "PushPop\x1f:z", 4);
    tr_stats_add(&t, "PushPop\x1f:a", 50);   /* a name with a row keeps it */
    assert_int_equal(t.folded, 3);
    n = tr_stats_rows(&t, &rows);
    assert_int_equal(n, 5);
    assert_string_equal(rows[0].name, "PushPop\x1f:a");
    assert_int_equal(rows[0].total, 60);
    assert_string_equal(rows[3].name, "PushPop\x1f" TR_STATS_FOLD);
    assert_int_equal(rows[3].n, 2);
    assert_int_equal(rows[3].total, 5);
    assert_string_equal(rows[4].name, "StartEnd\x1f" TR_STATS_FOLD);
    f = open_memstream(&text, &len);
    tr_stats_print_nvtx(f, rows, n);
    fputc('|', f);
    tr_stats_json(f, "nvtx_sum", &t, TR_JSON_STYLED);
    fclose(f);
    assert_non_null(strstr(text, "StdDev (ns)  Style     Range"));
    assert_non_null(strstr(text, "  PushPop   :a\n"));
    assert_non_null(strstr(text, "  StartEnd  :c\n"));
    assert_non_null(strstr(text, "  PushPop   " TR_STATS_FOLD "\n"));
    assert_null(strchr(text, '\x1f'));
    assert_non_null(strstr(text, "{\"name\":\":a\",\"style\":\"PushPop\",\"count\":2,\"total_ns\":60,"));
    assert_non_null(strstr(text, "{\"name\":\"d:b\",\"style\":\"PushPop\",\"count\":1,"));
    free(text);
    free(rows);
    tr_stats_free(&t);
}

/* ---- buffers ---- */

static void count_rec(void *ctx, tr_tbuf *tb, const void *rec, uint32_t len)
{
    (void)tb, (void)rec;
    *(uint64_t *)ctx += len;
}

static void buffer_bound(void **state)
{
    tr_bufs b;
    tr_tbuf *tb;
    uint64_t stored = 0, seen = 0, dropped = 0;
    (void)state;
    tr_bufs_init(&b, 1024, 0);
    b.limit = 3 * (b.chunk_size + sizeof(tr_chunk));   /* three chunks (the size asked, rounded up to pages) */
    tb = tr_buf_attach(&b, 42);
    assert_non_null(tb);
    for (int i = 0; i < 600; i++) {   /* more than three chunks of records */
        unsigned char *p = tr_buf_reserve(&b, tb, 64, 2 * TR_EXIT_MIN);
        uint32_t len = 64;
        if (p == NULL) {
            dropped++;
            /* the room kept for exits is still there */
            assert_non_null(tr_buf_reserve_here(tb, TR_EXIT_MIN));
            continue;
        }
        memcpy(p, &len, 4);
        tr_buf_commit(tb, 64);
        stored += 64;
    }
    assert_true(dropped > 0);
    assert_true(atomic_load(&b.used) <= b.limit);
    tr_buf_drain(&b, tb, count_rec, &seen);
    assert_int_equal(seen, stored);
    /* drained chunks were freed: there is room again */
    assert_non_null(tr_buf_reserve(&b, tb, 64, 0));
    tr_buf_detach(tb);
    tr_buf_drain(&b, tb, count_rec, &seen);
    tr_buf_release(&b, tb);
    assert_ptr_equal(tr_buf_attach(&b, 43), tb);   /* reclaimed */
    tr_bufs_destroy(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_kind),    cmocka_unit_test(failed_and_unfinished),
        cmocka_unit_test(inputs_in_exit), cmocka_unit_test(truncation),    cmocka_unit_test(empty_values),
        cmocka_unit_test(inline_output_renders_as_blob),
        cmocka_unit_test(library_status),
        cmocka_unit_test(skipped_output_unreadable),
        cmocka_unit_test(json_strings), cmocka_unit_test(callback_symbol),
        cmocka_unit_test(stats_maths),   cmocka_unit_test(stats_bounded), cmocka_unit_test(stats_table),
        cmocka_unit_test(stats_memops), cmocka_unit_test(stats_json), cmocka_unit_test(stats_nvtx),
        cmocka_unit_test(buffer_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
