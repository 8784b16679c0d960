/*
 * parse.c - read the function declarations of the CUDA headers with
 * libclang.
 *
 * Two translation units:
 *  1. the driver and runtime headers exactly as generated/.../
 *     cushim_cuda_headers.h includes them (__CUDA_API_VERSION_INTERNAL
 *     defined): cuda.h then declares every exported ABI variant under its
 *     exported name, and cuda_runtime_api.h its _ptds/_ptsz exports;
 *  2. the runtime headers without any define: the legacy runtime names.
 * Static and inline functions and definitions are skipped (the runtime has
 * static inline helpers that reuse export names). Any diagnostic of
 * severity error is fatal. The first unit also yields the enumerators of
 * CUresult (enum cudaError_enum) and cudaError_t (enum cudaError), the
 * result names of cushim_results.inc.
 */
#include "cg.h"
#include "cg_clang.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* In include order; the first three are required. */
static const struct {
    const char *name;
    int library;
    int required;
    const char *prereq; /* a system header it uses but does not include */
} ps_headers[] = {
    {"cuda.h", LIB_DRIVER, 1, NULL},
    {"cudaProfiler.h", LIB_DRIVER, 0, NULL},
    {"cudaGL.h", LIB_DRIVER, 0, NULL},
    {"cudaEGL.h", LIB_DRIVER, 0, NULL},
    {"cudaVDPAU.h", LIB_DRIVER, 0, "vdpau/vdpau.h"},
    {"cuda_runtime_api.h", LIB_RUNTIME, 1, NULL},
    {"cuda_profiler_api.h", LIB_RUNTIME, 0, NULL},
    {"cuda_gl_interop.h", LIB_RUNTIME, 0, NULL},
    {"cuda_egl_interop.h", LIB_RUNTIME, 0, NULL},
    {"cuda_vdpau_interop.h", LIB_RUNTIME, 0, NULL},
};
#define PS_NHEADERS (int)(sizeof ps_headers / sizeof ps_headers[0])

const char *ps_prereq(const char *header)
{
    for (int i = 0; i < PS_NHEADERS; i++)
        if (!strcmp(ps_headers[i].name, header))
            return ps_headers[i].prereq;
    return NULL;
}

static const char *ps_typedef_headers[] = {
    "cudaTypedefs.h", "cudaProfilerTypedefs.h", "cudaGLTypedefs.h", "cudaEGLTypedefs.h",
    "cudaVDPAUTypedefs.h",
};

typedef struct ps_ctx {
    cg_model *m;
    int pass;          /* 1: driver+runtime (internal), 2: runtime legacy */
    int order;
    int rc;
    int enums_seen;    /* 1 << RET_CURESULT, 1 << RET_CUDAERROR: result enums read */
    int enum_kind;     /* the one being read */
    const ps_options *o;
} ps_ctx;

static int ps_header_library(const char *base)
{
    for (int i = 0; i < PS_NHEADERS; i++)
        if (!strcmp(ps_headers[i].name, base))
            return ps_headers[i].library;
    return 0;
}

/* '\param[in] name desc' and '\param name - desc' lines of a doc comment. */
static void ps_doc(const char *c, cg_api *a)
{
    const char *s = c;
    while (c && (s = strstr(s, "\\param")) != NULL) {
        int dir = DIR_UNKNOWN;
        const char *n, *e, *d, *eol;
        s += 6;
        if (*s == '[') {
            const char *close = strchr(s, ']');
            if (!close)
                break;
            if (!strncmp(s, "[in,out]", 8) || !strncmp(s, "[in, out]", 9) || !strncmp(s, "[inout]", 7))
                dir = DIR_INOUT;
            else if (!strncmp(s, "[in]", 4))
                dir = DIR_IN;
            else if (!strncmp(s, "[out]", 5))
                dir = DIR_OUT;
            s = close + 1;
        } else if (!isspace((unsigned char)*s)) {
            continue;
        }
        n = s;
        while (*n == ' ' || *n == '\t')
            n++;
        e = n;
        while (isalnum((unsigned char)*e) || *e == '_')
            e++;
        if (e == n)
            continue;
        eol = strchr(e, '\n');
        if (!eol)
            eol = e + strlen(e);
        d = e;
        while (d < eol && (*d == ' ' || *d == '\t' || *d == '-'))
            d++;
        for (int i = 0; i < a->nparams; i++) {
            cg_param *p = &a->params[i];
            if (strlen(p->name) == (size_t)(e - n) && !strncmp(p->name, n, (size_t)(e - n)) && !p->doc) {
                p->doc = ut_strndup(d, (size_t)(eol - d));
                while (p->doc[0] && isspace((unsigned char)p->doc[strlen(p->doc) - 1]))
                    p->doc[strlen(p->doc) - 1] = 0;
                p->doc_dir = dir;
            }
        }
        s = e;
    }
}

static int ps_ret_kind(CXType t, const char *spelled)
{
    char *c;
    int k = RET_OTHER;
    if (!strcmp(spelled, "CUresult"))
        return RET_CURESULT;
    if (!strcmp(spelled, "cudaError_t"))
        return RET_CUDAERROR;
    c = ty_spell_canon(t);
    if (!strcmp(c, "enum cudaError_enum"))
        k = RET_CURESULT;
    else if (!strcmp(c, "enum cudaError"))
        k = RET_CUDAERROR;
    free(c);
    return k;
}

static void ps_function(ps_ctx *x, CXCursor c)
{
    CXString sname, sfile, scom;
    CXFile file;
    unsigned line, col, off;
    const char *base;
    int lib, n;
    cg_api a;
    CXType ft, rt;

    if (clang_Cursor_getStorageClass(c) == CX_SC_Static || clang_isCursorDefinition(c) ||
        clang_Cursor_isFunctionInlined(c))
        return;
    clang_getExpansionLocation(clang_getCursorLocation(c), &file, &line, &col, &off);
    if (!file)
        return;
    sfile = clang_getFileName(file);
    base = ut_basename(clang_getCString(sfile));
    lib = ps_header_library(base);
    if (!lib || (x->pass == 2 && lib != LIB_RUNTIME)) {
        clang_disposeString(sfile);
        return;
    }
    sname = clang_getCursorSpelling(c);
    if (md_find(x->m, clang_getCString(sname))) {
        clang_disposeString(sname);
        clang_disposeString(sfile);
        return; /* a redeclaration, or a legacy name pass 1 already had */
    }
    memset(&a, 0, sizeof a);
    a.name = ut_strdup(clang_getCString(sname));
    a.header = ut_strdup(base);
    a.line = line;
    a.library = lib;
    /* id order: driver, then legacy runtime names, then the runtime
     * names only the internal configuration declares (_ptds/_ptsz) */
    a.order = (x->pass == 2 ? 1000000 : lib == LIB_RUNTIME ? 2000000 : 0) + x->order++;
    clang_disposeString(sname);
    clang_disposeString(sfile);

    ft = clang_getCursorType(c);
    rt = clang_getResultType(ft);
    a.ret_type = ty_unqual(ty_spell(rt));
    a.ret_kind = ps_ret_kind(rt, a.ret_type);
    a.ret_void = clang_getCanonicalType(rt).kind == CXType_Void;
    n = clang_Cursor_getNumArguments(c);
    if (n < 0)
        n = 0;
    a.nparams = n;
    a.params = ut_alloc((size_t)(n ? n : 1) * sizeof *a.params);
    for (int i = 0; i < n; i++) {
        CXCursor pc = clang_Cursor_getArgument(c, (unsigned)i);
        CXString ps = clang_getCursorSpelling(pc);
        CXType pt = clang_getCursorType(pc);
        cg_param *p = &a.params[i];
        const char *pn = clang_getCString(ps);
        p->name = pn && *pn ? ut_strdup(pn) : ut_printf("arg%d", i);
        clang_disposeString(ps);
        p->count_param = -1;
        if (ty_is_raw_fnptr(pt)) {
            p->fnty = ut_printf("cushim_fnty_%s_%s", a.name, p->name);
            p->fnty_def = ty_fn_typedef(pt, p->fnty);
            p->type = ut_strdup(p->fnty);
        } else {
            p->type = ty_unqual(ty_spell(pt));
        }
        p->canon = ty_unqual(ty_spell_canon(pt));
        p->kind = ty_kind(pt);
        ty_pointer_facts(pt, p);
        te_param(p, pt);
    }
    scom = clang_Cursor_getRawCommentText(c);
    if (clang_getCString(scom)) {
        const char *com = clang_getCString(scom);
        ps_doc(com, &a);
        if (strstr(com, "\\deprecated"))
            a.deprecated = 1;
    }
    clang_disposeString(scom);
    if (clang_getCursorAvailability(c) == CXAvailability_Deprecated)
        a.deprecated = 1;
    if (md_add_api(x->m, &a) != 0)
        x->rc = CG_EINPUT;
}

static enum CXChildVisitResult ps_enumerator(CXCursor c, CXCursor parent, CXClientData data)
{
    ps_ctx *x = data;
    cg_model *m = x->m;
    CXString s;
    (void)parent;
    if (c.kind != CXCursor_EnumConstantDecl)
        return CXChildVisit_Continue;
    if (m->nresults == m->cresults) {
        m->cresults = m->cresults ? 2 * m->cresults : 256;
        m->results = ut_realloc(m->results, (size_t)m->cresults * sizeof *m->results);
    }
    s = clang_getCursorSpelling(c);
    m->results[m->nresults].name = ut_strdup(clang_getCString(s));
    m->results[m->nresults].value = clang_getEnumConstantDeclValue(c);
    m->results[m->nresults].kind = x->enum_kind;
    m->nresults++;
    clang_disposeString(s);
    return CXChildVisit_Continue;
}

/* The definition of enum cudaError_enum (CUresult) or enum cudaError
 * (cudaError_t), wherever it lies: cudaError is in driver_types.h, which
 * is not one of the API headers. Only the first definition counts. */
static void ps_result_enum(ps_ctx *x, CXCursor c)
{
    CXString s;
    int kind = 0;
    if (x->pass != 1 || !clang_isCursorDefinition(c))
        return;
    s = clang_getCursorSpelling(c);
    if (!strcmp(clang_getCString(s), "cudaError_enum"))
        kind = RET_CURESULT;
    else if (!strcmp(clang_getCString(s), "cudaError"))
        kind = RET_CUDAERROR;
    clang_disposeString(s);
    if (!kind || (x->enums_seen & (1 << kind)))
        return;
    x->enums_seen |= 1 << kind;
    x->enum_kind = kind;
    clang_visitChildren(c, ps_enumerator, x);
}

static enum CXChildVisitResult ps_visit(CXCursor c, CXCursor parent, CXClientData data)
{
    ps_ctx *x = data;
    (void)parent;
    if (x->pass == 1 && (c.kind == CXCursor_EnumDecl || c.kind == CXCursor_TypedefDecl ||
                         c.kind == CXCursor_StructDecl || c.kind == CXCursor_UnionDecl))
        te_visit(x->m, c, x->o->include_dir);
    if (c.kind == CXCursor_FunctionDecl)
        ps_function(x, c);
    else if (c.kind == CXCursor_EnumDecl)
        ps_result_enum(x, c);
    else if (c.kind == CXCursor_LinkageSpec || c.kind == CXCursor_UnexposedDecl)
        return CXChildVisit_Recurse;
    return CXChildVisit_Continue;
}

static int ps_diagnostics(CXTranslationUnit tu)
{
    unsigned n = clang_getNumDiagnostics(tu);
    int errors = 0;
    for (unsigned i = 0; i < n; i++) {
        CXDiagnostic d = clang_getDiagnostic(tu, i);
        if (clang_getDiagnosticSeverity(d) >= CXDiagnostic_Error) {
            CXFile f;
            unsigned line = 0, col;
            CXString msg = clang_getDiagnosticSpelling(d);
            clang_getExpansionLocation(clang_getDiagnosticLocation(d), &f, &line, &col, NULL);
            if (f) {
                CXString fn = clang_getFileName(f);
                fprintf(stderr, "%s:%u: error: %s\n", clang_getCString(fn), line, clang_getCString(msg));
                clang_disposeString(fn);
            } else {
                fprintf(stderr, "<input>: error: %s\n", clang_getCString(msg));
            }
            clang_disposeString(msg);
            errors++;
        }
        clang_disposeDiagnostic(d);
    }
    if (errors)
        ut_error("%d error(s) while parsing the CUDA headers", errors);
    return errors ? CG_EPARSE : CG_OK;
}

static int ps_run(CXIndex idx, ps_ctx *x, const char *inc, const char *src)
{
    char *iflag = ut_printf("-I%s", inc);
    const char *args[] = {"-x", "c", "-std=gnu11", iflag, "-Wno-everything"};
    struct CXUnsavedFile uf = {"/cushim-gen/parse.c", src, (unsigned long)strlen(src)};
    CXTranslationUnit tu = NULL;
    enum CXErrorCode ec;
    int rc;
    ec = clang_parseTranslationUnit2(idx, uf.Filename, args, (int)(sizeof args / sizeof args[0]), &uf, 1,
                                     CXTranslationUnit_SkipFunctionBodies, &tu);
    free(iflag);
    if (ec != CXError_Success || !tu) {
        ut_error("libclang could not parse the headers in '%s' (error %d)", inc, (int)ec);
        return CG_EPARSE;
    }
    rc = ps_diagnostics(tu);
    if (!rc) {
        clang_visitChildren(clang_getTranslationUnitCursor(tu), ps_visit, x);
        rc = x->rc;
        if (!rc && x->pass == 1)
            rc = te_structs(x->m, x->o); /* while the unit's types are alive */
    }
    clang_disposeTranslationUnit(tu);
    return rc;
}

static int ps_cuda_version(const char *inc, unsigned *ver)
{
    char *path = ut_printf("%s/cuda.h", inc), *text = NULL, *s;
    int rc = ut_read_file(path, &text, NULL);
    if (rc) {
        free(path);
        return rc;
    }
    rc = CG_EINPUT;
    for (s = text; (s = strstr(s, "#define CUDA_VERSION")) != NULL; s++) {
        char *e;
        unsigned long v = strtoul(s + 20, &e, 10);
        if (e != s + 20 && v > 0) {
            *ver = (unsigned)v;
            rc = CG_OK;
            break;
        }
    }
    if (rc)
        ut_error("%s: no '#define CUDA_VERSION <N>' found", path);
    free(text);
    free(path);
    return rc;
}

int ps_parse(cg_model *m, const ps_options *o)
{
    ut_buf src1 = {0}, src2 = {0};
    CXIndex idx;
    ps_ctx x = {m, 1, 0, 0, 0, 0, o};
    int rc;

    if (!ut_is_dir(o->include_dir)) {
        ut_error("include folder '%s' does not exist (give --cuda-include <CUDA>/include)", o->include_dir);
        return CG_EINPUT;
    }
    for (int i = 0; i < PS_NHEADERS; i++) {
        char *p = ut_printf("%s/%s", o->include_dir, ps_headers[i].name);
        if (ut_is_file(p)) {
            m->headers[m->nheaders++] = ut_strdup(ps_headers[i].name);
        } else if (ps_headers[i].required) {
            ut_error("required header '%s' is missing", p);
            free(p);
            return CG_EINPUT;
        }
        free(p);
    }
    {
        char *p = ut_printf("%s/cudaTypedefs.h", o->include_dir);
        int ok = ut_is_file(p);
        if (!ok)
            ut_error("required header '%s' is missing", p);
        free(p);
        if (!ok)
            return CG_EINPUT;
    }
    rc = ps_cuda_version(o->include_dir, &m->cuda_version);
    if (rc)
        return rc;
    for (size_t i = 0; i < sizeof ps_typedef_headers / sizeof ps_typedef_headers[0]; i++) {
        char *p = ut_printf("%s/%s", o->include_dir, ps_typedef_headers[i]);
        if (ut_is_file(p))
            rc = pfn_scan_file(m, p);
        free(p);
        if (rc)
            return rc;
    }

    ut_puts(&src1, "#define __CUDA_API_VERSION_INTERNAL\n");
    for (int i = 0; i < m->nheaders; i++) {
        if (ps_prereq(m->headers[i]))
            ut_bprintf(&src1, "#include <%s>\n", ps_prereq(m->headers[i]));
        ut_bprintf(&src1, "#include <%s>\n", m->headers[i]);
    }
    for (int i = 0; i < m->nheaders; i++)
        if (ps_header_library(m->headers[i]) == LIB_RUNTIME) {
            if (ps_prereq(m->headers[i]))
                ut_bprintf(&src2, "#include <%s>\n", ps_prereq(m->headers[i]));
            ut_bprintf(&src2, "#include <%s>\n", m->headers[i]);
        }

    idx = clang_createIndex(0, 0);
    rc = ps_run(idx, &x, o->include_dir, src1.s);
    if (!rc && !(x.enums_seen & (1 << RET_CURESULT))) {
        ut_error("no definition of 'enum cudaError_enum' (CUresult) in the headers of '%s'", o->include_dir);
        rc = CG_EINPUT;
    }
    if (!rc && !(x.enums_seen & (1 << RET_CUDAERROR))) {
        ut_error("no definition of 'enum cudaError' (cudaError_t) in the headers of '%s'", o->include_dir);
        rc = CG_EINPUT;
    }
    if (!rc) {
        x.pass = 2;
        rc = ps_run(idx, &x, o->include_dir, src2.s);
    }
    clang_disposeIndex(idx);
    ut_buf_free(&src1);
    ut_buf_free(&src2);
    return rc;
}
