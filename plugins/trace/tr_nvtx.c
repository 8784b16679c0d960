/*
 * tr_nvtx.c - the trace plugin as an NVTX injection library: with
 * NVTX_INJECTION64_PATH naming this .so (cushim run --trace sets it), the NVTX
 * library the application uses (PyTorch's included) calls
 * InitializeInjectionNvtx2 on its first NVTX call; we take over the core
 * range and mark entry points and record them on the calling thread.
 */
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "trace.h"

#if defined(TR_HAVE_NVTX)
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

static _Thread_local int tr_nvtx_level;

static void nvtx_rec(uint16_t type, uint64_t id, const char *msg)
{
    tr_record(type, id, 0, tr_host ? tr_host->now_ns() : 0, NULL, 0, msg ? msg : "",
              msg ? (uint32_t)strlen(msg) : 0);
}

/* A wide string (UTF-32 on Linux) as UTF-8 text in 'buf', cut before the character that does not fit; '?' for
   what is no Unicode scalar value (a surrogate, past U+10FFFF). */
static const char *wide_utf8(const wchar_t *w, char *buf, size_t cap)
{
    size_t i = 0;
    for (; w != NULL && *w; w++) {
        uint32_t c = (uint32_t)*w;
        size_t k = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
        if (c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
            c = '?', k = 1;
        if (i + k >= cap)
            break;
        if (k == 1) {
            buf[i++] = (char)c;
            continue;
        }
        buf[i] = (char)(k == 2 ? 0xc0 | c >> 6 : k == 3 ? 0xe0 | c >> 12 : 0xf0 | c >> 18);
        for (size_t j = k - 1; j > 0; j--, c >>= 6)
            buf[i + j] = (char)(0x80 | (c & 0x3f));
        i += k;
    }
    buf[i] = '\0';
    return buf;
}

/* Registered strings (nvtxDomainRegisterString{A,W}, e.g. a library's range names, registered once): the
   handle is a copy of the text, kept to the end of the process; at most TR_NVTX_STRINGS of them, then a
   registration returns no handle and its ranges have no name. */
#define TR_NVTX_STRINGS 65536
static char *tr_nvtx_strings[TR_NVTX_STRINGS];   /* reachable, for the leak checkers */
static _Atomic unsigned tr_nvtx_nstrings;

static nvtxStringHandle_t reg_copy(const char *s)
{
    unsigned i;
    if (s == NULL || (i = atomic_fetch_add(&tr_nvtx_nstrings, 1)) >= TR_NVTX_STRINGS)
        return NULL;
    return (nvtxStringHandle_t)(tr_nvtx_strings[i] = strdup(s));
}

static nvtxStringHandle_t NVTX_API tr_reg_a(nvtxDomainHandle_t d, const char *s)
{
    (void)d;
    return reg_copy(s);
}

static nvtxStringHandle_t NVTX_API tr_reg_w(nvtxDomainHandle_t d, const wchar_t *s)
{
    char b[256];
    (void)d;
    return s != NULL ? reg_copy(wide_utf8(s, b, sizeof b)) : NULL;
}

/* The message of an attribute struct, as text (a wide one as UTF-8 in 'buf'). */
static const char *attr_msg(const nvtxEventAttributes_t *a, char *buf, size_t cap)
{
    if (a == NULL)
        return "";
    if (a->messageType == NVTX_MESSAGE_TYPE_ASCII && a->message.ascii != NULL)
        return a->message.ascii;
    if (a->messageType == NVTX_MESSAGE_TYPE_UNICODE && a->message.unicode != NULL)
        return wide_utf8(a->message.unicode, buf, cap);
    if (a->messageType == NVTX_MESSAGE_TYPE_REGISTERED && a->message.registered != NULL)
        return (const char *)a->message.registered;
    return "";
}

static void NVTX_API tr_mark_ex(const nvtxEventAttributes_t *a)
{
    char b[256];
    if (tr_st)
        nvtx_rec(TR_REC_NVTX_MARK, 0, attr_msg(a, b, sizeof b));
}

static void NVTX_API tr_mark_a(const char *m)
{
    if (tr_st)
        nvtx_rec(TR_REC_NVTX_MARK, 0, m);
}

static void NVTX_API tr_mark_w(const wchar_t *m)
{
    char b[256];
    tr_mark_a(wide_utf8(m, b, sizeof b));
}

static nvtxRangeId_t NVTX_API tr_start_ex(const nvtxEventAttributes_t *a)
{
    char b[256];
    uint64_t id;
    if (tr_st == NULL)
        return 0;
    const char *msg = attr_msg(a, b, sizeof b);
    id = atomic_fetch_add(&tr_st->nvtx_ids, 1) + 1;
    nvtx_rec(TR_REC_NVTX_START, id, msg);
    tr_capture_nvtx_start(tr_st, msg, id);
    return id;
}

static nvtxRangeId_t NVTX_API tr_start_a(const char *m)
{
    uint64_t id;
    if (tr_st == NULL)
        return 0;
    id = atomic_fetch_add(&tr_st->nvtx_ids, 1) + 1;
    nvtx_rec(TR_REC_NVTX_START, id, m);
    tr_capture_nvtx_start(tr_st, m, id);
    return id;
}

static nvtxRangeId_t NVTX_API tr_start_w(const wchar_t *m)
{
    char b[256];
    return tr_start_a(wide_utf8(m, b, sizeof b));
}

static void NVTX_API tr_end(nvtxRangeId_t id)
{
    if (tr_st) {
        nvtx_rec(TR_REC_NVTX_END, id, "");
        tr_capture_nvtx_end(tr_st, id);
    }
}

static int NVTX_API tr_push_ex(const nvtxEventAttributes_t *a)
{
    char b[256];
    if (tr_st) {
        const char *msg = attr_msg(a, b, sizeof b);
        nvtx_rec(TR_REC_NVTX_PUSH, 0, msg);
        tr_capture_nvtx_push(tr_st, msg, tr_nvtx_level);
    }
    return tr_nvtx_level++;
}

static int NVTX_API tr_push_a(const char *m)
{
    if (tr_st) {
        nvtx_rec(TR_REC_NVTX_PUSH, 0, m);
        tr_capture_nvtx_push(tr_st, m, tr_nvtx_level);
    }
    return tr_nvtx_level++;
}

static int NVTX_API tr_push_w(const wchar_t *m)
{
    char b[256];
    return tr_push_a(wide_utf8(m, b, sizeof b));
}

static int NVTX_API tr_pop(void)
{
    if (tr_nvtx_level == 0)
        return -1;
    tr_nvtx_level--;
    if (tr_st) {
        nvtx_rec(TR_REC_NVTX_POP, 0, "");
        tr_capture_nvtx_pop(tr_st, tr_nvtx_level);   /* the range's end, then the pause */
    }
    return tr_nvtx_level;
}

/* Domains (NVTX's CORE2 module): the same records, the domain not kept. */
static void NVTX_API tr_dmark(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    (void)d;
    tr_mark_ex(a);
}

static nvtxRangeId_t NVTX_API tr_dstart(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    (void)d;
    return tr_start_ex(a);
}

static void NVTX_API tr_dend(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
    (void)d;
    tr_end(id);
}

static int NVTX_API tr_dpush(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    (void)d;
    return tr_push_ex(a);
}

static int NVTX_API tr_dpop(nvtxDomainHandle_t d)
{
    (void)d;
    return tr_pop();
}

CUSHIM_PLUGIN_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table);
CUSHIM_PLUGIN_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table)
{
    const NvtxExportTableCallbacks *cb;
    NvtxFunctionTable t = NULL;
    unsigned int n = 0;
    if (get_table == NULL || (cb = get_table(NVTX_ETID_CALLBACKS)) == NULL || cb->GetModuleFunctionTable == NULL ||
        !cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &t, &n) || t == NULL)
        return 0;
#define SET(id, fn) \
    if ((unsigned)(id) < n && t[id] != NULL) *t[id] = (NvtxFunctionPointer)(fn)
    SET(NVTX_CBID_CORE_MarkEx, tr_mark_ex);
    SET(NVTX_CBID_CORE_MarkA, tr_mark_a);
    SET(NVTX_CBID_CORE_MarkW, tr_mark_w);
    SET(NVTX_CBID_CORE_RangeStartW, tr_start_w);
    SET(NVTX_CBID_CORE_RangePushW, tr_push_w);
    SET(NVTX_CBID_CORE_RangeStartEx, tr_start_ex);
    SET(NVTX_CBID_CORE_RangeStartA, tr_start_a);
    SET(NVTX_CBID_CORE_RangeEnd, tr_end);
    SET(NVTX_CBID_CORE_RangePushEx, tr_push_ex);
    SET(NVTX_CBID_CORE_RangePushA, tr_push_a);
    SET(NVTX_CBID_CORE_RangePop, tr_pop);
    t = NULL;
    n = 0;
    if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &t, &n) && t != NULL) {
        SET(NVTX_CBID_CORE2_DomainMarkEx, tr_dmark);
        SET(NVTX_CBID_CORE2_DomainRangeStartEx, tr_dstart);
        SET(NVTX_CBID_CORE2_DomainRangeEnd, tr_dend);
        SET(NVTX_CBID_CORE2_DomainRangePushEx, tr_dpush);
        SET(NVTX_CBID_CORE2_DomainRangePop, tr_dpop);
        SET(NVTX_CBID_CORE2_DomainRegisterStringA, tr_reg_a);
        SET(NVTX_CBID_CORE2_DomainRegisterStringW, tr_reg_w);
    }
#undef SET
    return 1;
}
#endif /* TR_HAVE_NVTX */
