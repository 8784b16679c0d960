/*
 * model.c - the API model: ABI variants from the PFN typedefs, parameter
 * directions from type rules and doc comments, categories from naming
 * rules, element counts from parameter names.
 */
#include "cg.h"
#include "cushim/cushim_meta.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- name index (open addressing, rebuilt on growth) ---- */
static int *md_hash;
static int md_hcap;
static const cg_model *md_hmodel;

static unsigned md_hstr(const char *s)
{
    unsigned h = 2166136261u;
    while (*s)
        h = (h ^ (unsigned char)*s++) * 16777619u;
    return h;
}

static void md_rehash(const cg_model *m)
{
    free(md_hash);
    md_hcap = 64;
    while (md_hcap < 2 * m->capis)
        md_hcap *= 2;
    md_hash = ut_alloc((size_t)md_hcap * sizeof *md_hash);
    for (int i = 0; i < md_hcap; i++)
        md_hash[i] = -1;
    for (int i = 0; i < m->napis; i++) {
        unsigned h = md_hstr(m->apis[i].name) & (unsigned)(md_hcap - 1);
        while (md_hash[h] >= 0)
            h = (h + 1) & (unsigned)(md_hcap - 1);
        md_hash[h] = i;
    }
    md_hmodel = m;
}

cg_api *md_find(const cg_model *m, const char *name)
{
    unsigned h;
    if (m->napis == 0)
        return NULL;
    if (md_hmodel != m || md_hcap < 2 * m->capis)
        md_rehash(m);
    h = md_hstr(name) & (unsigned)(md_hcap - 1);
    while (md_hash[h] >= 0) {
        if (!strcmp(m->apis[md_hash[h]].name, name))
            return &m->apis[md_hash[h]];
        h = (h + 1) & (unsigned)(md_hcap - 1);
    }
    return NULL;
}

int md_add_api(cg_model *m, cg_api *a)
{
    if (m->napis == m->capis) {
        m->capis = m->capis ? 2 * m->capis : 1024;
        m->apis = ut_realloc(m->apis, (size_t)m->capis * sizeof *m->apis);
    }
    m->apis[m->napis++] = *a;
    md_rehash(m);
    return CG_OK;
}

/* ---- variants ---- */
static int md_pfn_cmp(const void *a, const void *b)
{
    const cg_pfn *x = a, *y = b;
    int c = strcmp(x->base, y->base);
    if (c)
        return c;
    if ((x->per_thread != 0) != (y->per_thread != 0))
        return x->per_thread ? 1 : -1;
    if (x->version != y->version)
        return x->version < y->version ? -1 : 1;
    return x->per_thread - y->per_thread;
}

/* The base name: the export without its library's versioned-name suffixes
   (descriptor 'versioned'): _ptds/_ptsz, then _64, then _v<N>
   (cublasSgemm_v2_64 -> cublasSgemm). */
static char *md_strip_suffixes(const char *name, const cg_lib *l, int *pt)
{
    char *b = ut_strdup(name);
    size_t n = strlen(b), i;
    *pt = PT_NONE;
    if (l && (l->pt_suffixes & (1 << PT_PTDS)) && ut_ends(b, "_ptds")) {
        *pt = PT_PTDS;
        b[n -= 5] = 0;
    } else if (l && (l->pt_suffixes & (1 << PT_PTSZ)) && ut_ends(b, "_ptsz")) {
        *pt = PT_PTSZ;
        b[n -= 5] = 0;
    }
    if (l && l->strip_64 && n > 3 && ut_ends(b, "_64"))
        b[n -= 3] = 0;
    if (l && l->strip_v) {
        i = n;
        while (i > 0 && isdigit((unsigned char)b[i - 1]))
            i--;
        if (i < n && i >= 3 && b[i - 1] == 'v' && b[i - 2] == '_')
            b[n = i - 2] = 0;
    }
    return b;
}

int md_variants(cg_model *m)
{
    int i = 0;
    qsort(m->pfns, (size_t)m->npfns, sizeof *m->pfns, md_pfn_cmp);
    while (i < m->npfns) {
        int j = i, nleg = 0;
        while (j < m->npfns && !strcmp(m->pfns[j].base, m->pfns[i].base))
            j++;
        for (int k = i; k < j; k++) {
            cg_pfn *p = &m->pfns[k];
            if (p->per_thread)
                continue;
            p->exported = nleg ? ut_printf("%s_v%d", p->base, nleg + 1) : ut_strdup(p->base);
            nleg++;
        }
        for (int k = i; k < j; k++) {
            cg_pfn *p = &m->pfns[k];
            const char *legacy = p->base;
            if (!p->per_thread)
                continue;
            for (int l = i; l < j; l++)
                if (!m->pfns[l].per_thread && m->pfns[l].version <= p->version)
                    legacy = m->pfns[l].exported;
            p->exported = ut_printf("%s%s", legacy, p->per_thread == PT_PTDS ? "_ptds" : "_ptsz");
        }
        i = j;
    }
    for (i = 0; i < m->napis; i++) {
        cg_api *a = &m->apis[i];
        int pt;
        a->base = md_strip_suffixes(a->name, ld_by_value(m, a->library), &pt);
        a->per_thread = pt;
        a->abi_version = 0;
    }
    for (i = 0; i < m->npfns; i++) {
        cg_pfn *p = &m->pfns[i];
        cg_api *a = md_find(m, p->exported);
        p->present = a != NULL;
        if (!a || !ld_by_value(m, a->library) || !ld_by_value(m, a->library)->ntypedefs)
            continue;   /* variant typedefs name only their own library's exports */
        if (a->abi_version == 0 || p->version < a->abi_version) {
            free(a->base);
            a->base = ut_strdup(p->base);
            a->abi_version = p->version;
            a->per_thread = p->per_thread;
        }
    }
    return CG_OK;
}

/* ---- directions ---- */
static int md_doc_out(const char *d)
{
    static const char *outs[] = {"Returned", "Returns", "Pointer to returned", "Location to return",
                                 "Location to store", "Location where", "Output", "Pointer to the returned",
                                 "Returned ", "Pointer to return", "Where to store", "Place to return"};
    if (!d)
        return 0;
    for (size_t i = 0; i < sizeof outs / sizeof outs[0]; i++)
        if (ut_starts(d, outs[i]))
            return 1;
    return 0;
}

static int md_is_count_name(const char *n)
{
    return ut_starts(n, "num") || !strcmp(n, "count") || ut_ends(n, "Count") || !strcmp(n, "N") ||
           !strcmp(n, "len") || !strcmp(n, "length") || !strcmp(n, "bufferSize");
}

static int md_name_out(const char *n)
{
    return ut_ends(n, "_out") || ut_ends(n, "Out");
}

/* ABI variants share one doc comment: lend it to the undocumented ones. */
static void md_share_docs(cg_model *m)
{
    for (int i = 0; i < m->napis; i++) {
        cg_api *a = &m->apis[i];
        for (int j = 0; j < a->nparams; j++) {
            cg_param *p = &a->params[j];
            if (p->doc || p->doc_dir)
                continue;
            for (int k = 0; k < m->napis && !p->doc && !p->doc_dir; k++) {
                cg_api *b = &m->apis[k];
                if (k == i || strcmp(a->base, b->base))
                    continue;
                for (int l = 0; l < b->nparams; l++)
                    if (!strcmp(b->params[l].name, p->name) && (b->params[l].doc || b->params[l].doc_dir)) {
                        p->doc = b->params[l].doc ? ut_strdup(b->params[l].doc) : NULL;
                        p->doc_dir = b->params[l].doc_dir;
                        break;
                    }
            }
        }
    }
}

void md_classify(cg_model *m)
{
    md_share_docs(m);
    for (int i = 0; i < m->napis; i++) {
        cg_api *a = &m->apis[i];
        int getter = strstr(a->base, "Get") != NULL;
        int setter = !getter && strstr(a->base, "Set") != NULL;
        for (int j = 0; j < a->nparams; j++) {
            cg_param *p = &a->params[j];
            int ptr = p->kind == KIND_POINTER;
            p->ptr_like = ptr;
            p->dir = DIR_UNKNOWN;
            p->dir_src = SRC_NONE;
            if (!ptr) {
                /* values, handles, strings and callbacks go in */
                if (p->kind != KIND_UNKNOWN) {
                    p->dir = DIR_IN;
                    p->dir_src = SRC_TYPE;
                }
            } else if (p->pointee_const) {
                p->dir = DIR_IN;
                p->dir_src = SRC_TYPE;
            } else if (p->doc_dir != DIR_UNKNOWN) {
                p->dir = p->doc_dir;
                p->dir_src = SRC_DOC;
            } else if (md_name_out(p->name)) {
                p->dir = DIR_OUT;
                p->dir_src = SRC_TYPE;
            } else if (p->pointee_class == KIND_HANDLE || p->pointee_class == KIND_SCALAR ||
                       p->pointee_class == KIND_ENUM || p->pointee_class == KIND_DEVPTR ||
                       p->pointee_class == KIND_STRING) {
                p->dir = DIR_OUT;
                p->dir_src = SRC_TYPE;
            } else if (md_doc_out(p->doc)) {
                p->dir = DIR_OUT;
                p->dir_src = SRC_DOC;
            } else if (p->pointee_class == KIND_STRUCT && (getter || setter)) {
                /* a writable struct: filled by getters, read by setters */
                p->dir = getter ? DIR_OUT : DIR_IN;
                p->dir_src = SRC_TYPE;
            }
            /* 'T *items, <int> numItems': the element count follows */
            if (ptr && p->elem_known && j + 1 < a->nparams && a->params[j + 1].kind == KIND_SCALAR &&
                md_is_count_name(a->params[j + 1].name))
                p->count_param = j + 1;
        }
    }
}

/* ---- categories ---- */
#define CAT(x) (1u << (unsigned)ut_cat_bit(x))

static int md_has(const char *s, const char *w)
{
    return strstr(s, w) != NULL;
}

/* Name rules; see docs/generator.md. 'n' is the base name. */
static unsigned md_name_cats(const char *n)
{
    unsigned c = 0;
    static const char *alloc[] = {"cuMemAlloc", "cuMemHostAlloc", "cuArrayCreate", "cuArray3DCreate",
                                  "cuMipmappedArrayCreate", "cuMemCreate", "cudaMalloc", "cudaHostAlloc",
                                  "cuMemAllocHost", "cuMemAllocManaged"};
    static const char *freef[] = {"cuMemFree", "cuArrayDestroy", "cuMipmappedArrayDestroy", "cuMemRelease",
                                  "cudaFree"};
    static const char *vmm[] = {"cuMemAddressReserve", "cuMemAddressFree", "cuMemCreate", "cuMemRelease",
                                "cuMemMap", "cuMemUnmap", "cuMemSetAccess", "cuMemGetAccess",
                                "cuMemExportToShareableHandle", "cuMemImportFromShareableHandle",
                                "cuMemGetAllocationGranularity", "cuMemGetAllocationPropertiesFromHandle",
                                "cuMemRetainAllocationHandle", "cuMemMapArrayAsync", "cuMulticast"};
    static const char *init[] = {"cuInit", "cuDriverGetVersion", "cuGetProcAddress", "cuGetExportTable",
                                 "cudaGetDriverEntryPoint", "cudaRuntimeGetVersion", "cudaDriverGetVersion",
                                 "cudaGetExportTable", "cudaInitDevice"};
    for (size_t i = 0; i < sizeof alloc / sizeof alloc[0]; i++)
        if (ut_starts(n, alloc[i]))
            c |= CAT("alloc");
    for (size_t i = 0; i < sizeof freef / sizeof freef[0]; i++)
        if (ut_starts(n, freef[i]))
            c |= CAT("free");
    for (size_t i = 0; i < sizeof vmm / sizeof vmm[0]; i++)
        if (ut_starts(n, vmm[i]))
            c |= CAT("vmm");
    for (size_t i = 0; i < sizeof init / sizeof init[0]; i++)
        if (ut_starts(n, init[i]))
            c |= CAT("init");
    if (md_has(n, "Memcpy"))
        c |= CAT("copy");
    if (md_has(n, "Memset"))
        c |= CAT("set");
    if (ut_starts(n, "cuLaunch") || ut_starts(n, "cudaLaunch") || !strcmp(n, "cuGraphLaunch") ||
        !strcmp(n, "cudaGraphLaunch"))
        c |= CAT("launch");
    if (md_has(n, "Synchronize"))
        c |= CAT("sync");
    if (ut_starts(n, "cuModule") || ut_starts(n, "cuLibrary") || ut_starts(n, "cuLink") ||
        ut_starts(n, "cuKernel") || ut_starts(n, "cuFunc") || ut_starts(n, "cudaFunc") ||
        ut_starts(n, "cudaLibrary") || ut_starts(n, "cudaKernel") || ut_starts(n, "cudaGetFuncBySymbol") ||
        ut_starts(n, "cudaGetKernel"))
        c |= CAT("module");
    if ((md_has(n, "Graph") && !md_has(n, "Graphics")) || md_has(n, "Capture"))
        c |= CAT("graph");
    if (ut_starts(n, "cuStream") || ut_starts(n, "cudaStream"))
        c |= CAT("stream");
    if (ut_starts(n, "cuEvent") || ut_starts(n, "cudaEvent"))
        c |= CAT("event");
    if (ut_starts(n, "cuCtx") || ut_starts(n, "cuDevicePrimaryCtx") || ut_starts(n, "cuGreenCtx") ||
        ut_starts(n, "cudaCtx") || !strcmp(n, "cudaDeviceReset") || ut_starts(n, "cudaThread"))
        c |= CAT("context");
    if ((ut_starts(n, "cuDevice") && !ut_starts(n, "cuDevicePrimaryCtx")) || ut_starts(n, "cudaDevice") ||
        ut_starts(n, "cudaGetDevice") || !strcmp(n, "cudaSetDevice") || ut_starts(n, "cudaChooseDevice") ||
        !strcmp(n, "cudaSetValidDevices"))
        c |= CAT("device");
    if (md_has(n, "Graphics") || md_has(n, "GL") || md_has(n, "EGL") || md_has(n, "VDPAU") ||
        md_has(n, "External"))
        c |= CAT("interop");
    if (md_has(n, "Get") || ut_ends(n, "Query") || md_has(n, "Peek") || md_has(n, "IsCapturing"))
        c |= CAT("query");
    if (md_has(n, "MemPool") || !strcmp(n, "cuMemAllocAsync") || !strcmp(n, "cuMemFreeAsync") ||
        !strcmp(n, "cuMemAllocFromPoolAsync") || !strcmp(n, "cudaMallocAsync") ||
        !strcmp(n, "cudaFreeAsync") || !strcmp(n, "cudaMallocFromPoolAsync"))
        c |= CAT("pool");
    return c;
}

void md_categories(cg_model *m)
{
    for (int i = 0; i < m->napis; i++)
        m->apis[i].cats = md_name_cats(m->apis[i].base);
}

void md_count_unclassified(cg_model *m, int print)
{
    int n = 0;
    for (int i = 0; i < m->napis; i++) {
        cg_api *a = &m->apis[i];
        for (int j = 0; j < a->nparams; j++) {
            cg_param *p = &a->params[j];
            if (print == 2) {
                static const char *src[] = {"none", "type", "doc", "overlay"};
                static const char *dir[] = {"unknown", "in", "out", "inout"};
                printf("param\t%s\t%s\t%s\t%s\t%s\t%s\n", a->name, p->name, p->type, dir[p->dir],
                       src[p->dir_src], p->doc ? p->doc : "");
            }
            if (p->kind == KIND_UNKNOWN || p->dir == DIR_UNKNOWN) {
                n++;
                if (print == 1)
                    printf("unclassified\t%s\t%s\t%s\t%s\n", a->name, p->name, p->type, p->doc ? p->doc : "");
            }
        }
    }
    m->unclassified = n;
}

static int md_id_cmp(const void *a, const void *b)
{
    const cg_api *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

void md_sort_by_id(cg_model *m)
{
    qsort(m->apis, (size_t)m->napis, sizeof *m->apis, md_id_cmp);
    md_rehash(m);
}

void md_free(cg_model *m)
{
    for (int i = 0; i < m->napis; i++) {
        cg_api *a = &m->apis[i];
        for (int j = 0; j < a->nparams; j++) {
            cg_param *p = &a->params[j];
            free(p->name);
            free(p->type);
            free(p->canon);
            free(p->fnty);
            free(p->fnty_def);
            free(p->doc);
            free(p->enum_usr);
            free(p->record_usr);
        }
        free(a->params);
        free(a->name);
        free(a->base);
        free(a->ret_type);
        free(a->header);
    }
    for (int i = 0; i < m->npfns; i++) {
        free(m->pfns[i].base);
        free(m->pfns[i].file);
        free(m->pfns[i].exported);
    }
    for (int i = 0; i < m->nheaders; i++)
        free(m->headers[i]);
    for (int i = 0; i < m->nresults; i++)
        free(m->results[i].name);
    free(m->results);
    for (int i = 0; i < m->nlibs; i++)
        ld_free(&m->libs[i]);
    for (int i = 0; i < m->nvoids; i++)
        free(m->voids[i]);
    free(m->apis);
    free(m->pfns);
    free(md_hash);
    md_hash = NULL;
    md_hmodel = NULL;
    md_hcap = 0;
    memset(m, 0, sizeof *m);
}
