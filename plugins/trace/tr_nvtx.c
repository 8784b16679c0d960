/*
 * tr_nvtx.c - the trace plugin as an NVTX injection library: with
 * NVTX_INJECTION64_PATH naming this .so (cushim run --trace sets it), the NVTX
 * library the application uses (PyTorch's included) calls
 * InitializeInjectionNvtx2 on its first NVTX call; we take over the core
 * range and mark entry points and record them on the calling thread. The
 * payload extension's ranges and marks too (InitializeInjectionNvtxExtension):
 * NCCL pushes some ranges with nvtxDomainRangePushEx and pops them with
 * nvtxRangePopPayload, which without it would never end.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "tr_control.h"
#include "tr_nvtx.h"
#include "tr_record.h"

static _Atomic uint64_t tr_nvtx_ids;   /* nvtxRangeStart ids: the NVTX part's own */

#if defined(TR_HAVE_NVTX)
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>
#if __has_include(<nvtx3/nvToolsExtPayload.h>)
#include <nvtx3/nvToolsExtPayload.h>
#define TR_HAVE_NVTX_PAYLOAD 1
#endif

/* Domains (nvtxDomainCreate{A,W}): a handle is a slot of this table, one slot per name (a library creates its
   domain once; a second creation of a name gets the same slot). Slot 0 is the default domain (the NULL handle).
   Slots are kept to the end of the process (a destroyed domain's events may still be in the buffers). Past
   TR_NVTX_DOMAINS - 1 names, every further name gets the last slot, "(other domains)": their push levels are
   one count. 32 slots: the levels below are thread-local storage, which must stay small (tests/tls_budget.sh:
   past glibc's optional static TLS every recorded call pays a call into _dl_tlsdesc_dynamic). */
#define TR_NVTX_DOMAINS 32
typedef struct tr_nvtx_dom {
    uint32_t idx;
    uint32_t len;
    char *name;   /* NULL: the default domain */
} tr_nvtx_dom;
static tr_nvtx_dom tr_nvtx_doms[TR_NVTX_DOMAINS];
static unsigned tr_nvtx_ndoms = 1;   /* under tr_nvtx_dom_lock */
static pthread_mutex_t tr_nvtx_dom_lock = PTHREAD_MUTEX_INITIALIZER;
/* The thread's push level in each domain (NVTX keeps one stack per domain and thread). */
static _Thread_local int tr_nvtx_level[TR_NVTX_DOMAINS];

static nvtxDomainHandle_t dom_create(const char *name)
{
    tr_nvtx_dom *d = &tr_nvtx_doms[TR_NVTX_DOMAINS - 1];
    if (name == NULL)
        return NULL;
    pthread_mutex_lock(&tr_nvtx_dom_lock);
    for (unsigned i = 1; i < tr_nvtx_ndoms; i++)
        if (strcmp(tr_nvtx_doms[i].name, name) == 0) {
            d = &tr_nvtx_doms[i];
            goto out;
        }
    if (tr_nvtx_ndoms < TR_NVTX_DOMAINS - 1) {
        char *copy = strdup(name);
        if (copy != NULL) {
            d = &tr_nvtx_doms[tr_nvtx_ndoms];
            d->idx = tr_nvtx_ndoms++;
            d->len = (uint32_t)strnlen(copy, TR_NAME_MAX);
            d->name = copy;
            goto out;
        }
    }
    if (d->name == NULL) {   /* the last slot, first used */
        d->idx = TR_NVTX_DOMAINS - 1;
        d->name = "(other domains)";
        d->len = (uint32_t)strlen(d->name);
    }
out:
    pthread_mutex_unlock(&tr_nvtx_dom_lock);
    return (nvtxDomainHandle_t)d;
}

/* A handle's slot: NULL (and anything that is not a slot we gave out) is the default domain. */
static const tr_nvtx_dom *dom_of(nvtxDomainHandle_t h)
{
    uintptr_t p = (uintptr_t)h, base = (uintptr_t)tr_nvtx_doms;
    if (p > base && p < base + sizeof tr_nvtx_doms && (p - base) % sizeof(tr_nvtx_dom) == 0 &&
        ((const tr_nvtx_dom *)h)->name != NULL)
        return (const tr_nvtx_dom *)h;
    return &tr_nvtx_doms[0];
}

static void nvtx_rec(uint16_t type, uint64_t id, const char *msg, const tr_nvtx_dom *d)
{
    tr_record2(type, id, d->idx, tr_host ? tr_host->now_ns() : 0, NULL, 0, msg ? msg : "",
               msg ? (uint32_t)strlen(msg) : 0, d->name, d->len);
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

/* The calls, for domain 'd' (the default domain's entry points pass slot 0). */
static void mark(const tr_nvtx_dom *d, const char *msg)
{
    if (tr_st)
        nvtx_rec(TR_REC_NVTX_MARK, 0, msg, d);
}

static nvtxRangeId_t start(const tr_nvtx_dom *d, const char *msg)
{
    uint64_t id;
    if (tr_st == NULL)
        return 0;
    id = atomic_fetch_add(&tr_nvtx_ids, 1) + 1;
    nvtx_rec(TR_REC_NVTX_START, id, msg, d);
    tr_capture_nvtx_start(tr_st, msg, d->idx, d->name, id);
    return id;
}

static void end(const tr_nvtx_dom *d, nvtxRangeId_t id)
{
    if (tr_st) {
        nvtx_rec(TR_REC_NVTX_END, id, "", d);
        tr_capture_nvtx_end(tr_st, id);
    }
}

static int push(const tr_nvtx_dom *d, const char *msg)
{
    int *level = &tr_nvtx_level[d->idx];
    if (tr_st) {
        nvtx_rec(TR_REC_NVTX_PUSH, 0, msg, d);
        tr_capture_nvtx_push(tr_st, msg, d->idx, d->name, *level);
    }
    return (*level)++;
}

static int pop(const tr_nvtx_dom *d)
{
    int *level = &tr_nvtx_level[d->idx];
    if (*level == 0)
        return -1;
    (*level)--;
    if (tr_st) {
        nvtx_rec(TR_REC_NVTX_POP, 0, "", d);
        tr_capture_nvtx_pop(tr_st, d->idx, *level);   /* the range's end, then the pause */
    }
    return *level;
}

#define DEF_DOM (&tr_nvtx_doms[0])

static void NVTX_API tr_mark_ex(const nvtxEventAttributes_t *a)
{
    char b[256];
    mark(DEF_DOM, attr_msg(a, b, sizeof b));
}

static void NVTX_API tr_mark_a(const char *m)
{
    mark(DEF_DOM, m);
}

static void NVTX_API tr_mark_w(const wchar_t *m)
{
    char b[256];
    mark(DEF_DOM, wide_utf8(m, b, sizeof b));
}

static nvtxRangeId_t NVTX_API tr_start_ex(const nvtxEventAttributes_t *a)
{
    char b[256];
    return start(DEF_DOM, attr_msg(a, b, sizeof b));
}

static nvtxRangeId_t NVTX_API tr_start_a(const char *m)
{
    return start(DEF_DOM, m);
}

static nvtxRangeId_t NVTX_API tr_start_w(const wchar_t *m)
{
    char b[256];
    return start(DEF_DOM, wide_utf8(m, b, sizeof b));
}

static void NVTX_API tr_end(nvtxRangeId_t id)
{
    end(DEF_DOM, id);
}

static int NVTX_API tr_push_ex(const nvtxEventAttributes_t *a)
{
    char b[256];
    return push(DEF_DOM, attr_msg(a, b, sizeof b));
}

static int NVTX_API tr_push_a(const char *m)
{
    return push(DEF_DOM, m);
}

static int NVTX_API tr_push_w(const wchar_t *m)
{
    char b[256];
    return push(DEF_DOM, wide_utf8(m, b, sizeof b));
}

static int NVTX_API tr_pop(void)
{
    return pop(DEF_DOM);
}

/* nvtxNameOsThread: the thread's name on its track (as nsys shows it), replacing the one /proc gives. */
static void NVTX_API tr_name_thread_a(uint32_t tid, const char *name)
{
    if (tr_st != NULL && name != NULL)
        tr_record(TR_REC_NVTX_TNAME, tid, 0, tr_host ? tr_host->now_ns() : 0, NULL, 0, name, (uint32_t)strlen(name));
}

static void NVTX_API tr_name_thread_w(uint32_t tid, const wchar_t *name)
{
    char b[256];
    if (name != NULL)
        tr_name_thread_a(tid, wide_utf8(name, b, sizeof b));
}

/* Domains (NVTX's CORE2 module). */
static nvtxDomainHandle_t NVTX_API tr_dcreate_a(const char *name)
{
    return dom_create(name);
}

static nvtxDomainHandle_t NVTX_API tr_dcreate_w(const wchar_t *name)
{
    char b[256];
    return name != NULL ? dom_create(wide_utf8(name, b, sizeof b)) : NULL;
}

static void NVTX_API tr_ddestroy(nvtxDomainHandle_t d)
{
    (void)d;   /* kept: its events may still be in the buffers */
}

static void NVTX_API tr_dmark(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    char b[256];
    mark(dom_of(d), attr_msg(a, b, sizeof b));
}

static nvtxRangeId_t NVTX_API tr_dstart(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    char b[256];
    return start(dom_of(d), attr_msg(a, b, sizeof b));
}

static void NVTX_API tr_dend(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
    end(dom_of(d), id);
}

static int NVTX_API tr_dpush(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    char b[256];
    return push(dom_of(d), attr_msg(a, b, sizeof b));
}

static int NVTX_API tr_dpop(nvtxDomainHandle_t d)
{
    return pop(dom_of(d));
}

#if defined(TR_HAVE_NVTX_PAYLOAD)
/* The payload extension (nvToolsExtPayload.h): the ranges and marks it makes, their payloads not kept (a range
   or mark made by a payload alone has no name here). */
static void NVTX_API tr_mark_payload(nvtxDomainHandle_t d, const nvtxPayloadData_t *p, size_t n)
{
    (void)p;
    (void)n;
    mark(dom_of(d), "");
}

static int NVTX_API tr_push_payload(nvtxDomainHandle_t d, const nvtxPayloadData_t *p, size_t n)
{
    (void)p;
    (void)n;
    return push(dom_of(d), "");
}

static int NVTX_API tr_pop_payload(nvtxDomainHandle_t d, const nvtxPayloadData_t *p, size_t n)
{
    (void)p;
    (void)n;
    return pop(dom_of(d));
}

static nvtxRangeId_t NVTX_API tr_start_payload(nvtxDomainHandle_t d, const nvtxPayloadData_t *p, size_t n)
{
    (void)p;
    (void)n;
    return start(dom_of(d), "");
}

static void NVTX_API tr_end_payload(nvtxDomainHandle_t d, nvtxRangeId_t id, const nvtxPayloadData_t *p, size_t n)
{
    (void)p;
    (void)n;
    end(dom_of(d), id);
}

/* NVTX's extensions ask for their entry points here, one module at a time: the payload module's ranges and
   marks are taken; another module's slots stay unset (NVTX makes them no-ops). */
CUSHIM_PLUGIN_EXPORT int InitializeInjectionNvtxExtension(nvtxExtModuleInfo_t *info);
CUSHIM_PLUGIN_EXPORT int InitializeInjectionNvtxExtension(nvtxExtModuleInfo_t *info)
{
    if (info == NULL || info->moduleId != NVTX_EXT_PAYLOAD_MODULEID || info->segmentsCount < 1 ||
        info->segments == NULL || info->segments[0].functionSlots == NULL)
        return 1;
    intptr_t *slot = info->segments[0].functionSlots;
    size_t n = info->segments[0].slotCount;
#define SETX(id, fn) \
    if ((size_t)(id) < n) slot[id] = (intptr_t)(fn)
    SETX(NVTX3EXT_CBID_nvtxMarkPayload, tr_mark_payload);
    SETX(NVTX3EXT_CBID_nvtxRangePushPayload, tr_push_payload);
    SETX(NVTX3EXT_CBID_nvtxRangePopPayload, tr_pop_payload);
    SETX(NVTX3EXT_CBID_nvtxRangeStartPayload, tr_start_payload);
    SETX(NVTX3EXT_CBID_nvtxRangeEndPayload, tr_end_payload);
#undef SETX
    return 1;
}
#endif

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
    SET(NVTX_CBID_CORE_NameOsThreadA, tr_name_thread_a);
    SET(NVTX_CBID_CORE_NameOsThreadW, tr_name_thread_w);
    t = NULL;
    n = 0;
    if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &t, &n) && t != NULL) {
        SET(NVTX_CBID_CORE2_DomainCreateA, tr_dcreate_a);
        SET(NVTX_CBID_CORE2_DomainCreateW, tr_dcreate_w);
        SET(NVTX_CBID_CORE2_DomainDestroy, tr_ddestroy);
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
/* A forked child: a thread of the parent may have held the domain table's lock at the fork. */
void tr_nvtx_fork_child(void)
{
    pthread_mutex_init(&tr_nvtx_dom_lock, NULL);
}
#else
void tr_nvtx_fork_child(void)
{
}
#endif /* TR_HAVE_NVTX */

static void tr_nvtx_fork(tr_state *st)
{
    (void)st;
    tr_nvtx_fork_child();
}

const tr_part tr_part_nvtx = {
    .name = "nvtx",
    .fork_child = tr_nvtx_fork,
};
