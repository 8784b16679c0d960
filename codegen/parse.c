/*
 * parse.c - read the function declarations of the CUDA headers with
 * libclang.
 *
 * The headers, macros and status types come from the library descriptors
 * (libdesc.c). Two translation units:
 *  1. every library's headers exactly as generated/.../
 *     cushim_cuda_headers.h includes them (the descriptors' macros defined:
 *     with __CUDA_API_VERSION_INTERNAL cuda.h declares every exported ABI
 *     variant under its exported name, cuda_runtime_api.h its _ptds/_ptsz
 *     exports);
 *  2. the headers of libraries with 'legacy-pass', without any define: the
 *     legacy runtime names.
 * Static and inline functions and definitions are skipped (the runtime has
 * static inline helpers that reuse export names). Any diagnostic of
 * severity error is fatal. The first unit also yields the enumerators of
 * each library's status enum (CUresult: enum cudaError_enum, cudaError_t:
 * enum cudaError), the result names of cushim_results.inc.
 */
#include "cg.h"
#include "cg_clang.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The headers, parse macros and status types come from the library
   descriptors (m->libs, libdesc.c). */
static const cg_model *ps_model;

const char *ps_prereq(const char *header)
{
    for (int i = 0; ps_model && i < ps_model->nlibs; i++)
        for (int j = 0; j < ps_model->libs[i].nheaders; j++)
            if (!strcmp(ps_model->libs[i].headers[j].name, header))
                return ps_model->libs[i].headers[j].prereq;
    return NULL;
}

typedef struct ps_ctx {
    cg_model *m;
    int pass;          /* 1: driver+runtime (internal), 2: runtime legacy */
    int order;
    int rc;
    int enums_seen;    /* 1 << library index: its status enum was read */
    int enum_kind;     /* the ret kind of the one being read */
    const ps_options *o;
} ps_ctx;

/* Index of the library whose descriptor lists 'base', -1 if none. */
static int ps_header_library(const char *base)
{
    for (int i = 0; i < ps_model->nlibs; i++)
        for (int j = 0; j < ps_model->libs[i].nheaders; j++)
            if (!strcmp(ps_model->libs[i].headers[j].name, base))
                return i;
    return -1;
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

/* The ret kind of a library whose status type this is (by name, else by
   the canonical 'enum <tag>'), RET_OTHER if none. */
static int ps_ret_kind(CXType t, const char *spelled)
{
    char *c;
    int k = RET_OTHER;
    for (int i = 0; i < ps_model->nlibs; i++)
        if (ps_model->libs[i].status_type && !strcmp(spelled, ps_model->libs[i].status_type))
            return ps_model->libs[i].ret_kind;
    c = ty_spell_canon(t);
    for (int i = 0; i < ps_model->nlibs && k == RET_OTHER; i++) {
        const cg_lib *l = &ps_model->libs[i];
        if (l->status_enum && ut_starts(c, "enum ") && !strcmp(c + 5, l->status_enum))
            k = l->ret_kind;
    }
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
    if (lib < 0 || (x->pass == 2 && !x->m->libs[lib].legacy_pass)) {
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
    a.library = x->m->libs[lib].value;
    /* id order: library by library; within a library with a legacy pass,
     * its legacy names, then the names only the defines declare
     * (the runtime's _ptds/_ptsz) */
    a.order = lib * 4000000 + (x->m->libs[lib].legacy_pass && x->pass == 1 ? 2000000 : 0) + x->order++;
    clang_disposeString(sname);
    clang_disposeString(sfile);

    ft = clang_getCursorType(c);
    rt = clang_getResultType(ft);
    a.ret_type = ty_unqual(ty_spell(rt));
    a.ret_kind = ps_ret_kind(rt, a.ret_type);
    a.ret_void = clang_getCanonicalType(rt).kind == CXType_Void;
    if (a.ret_void && x->m->libs[lib].value > 2) {
        /* The wrapper body (runtime/wrap.h) needs a return value; the CUDA headers have no void
           function, NCCL and cuBLAS three (ncclResetDebugInit, cublasXerbla): listed by --report. */
        if (x->m->nvoids < (int)(sizeof x->m->voids / sizeof x->m->voids[0]))
            x->m->voids[x->m->nvoids++] = ut_strdup(a.name);
        free(a.name);
        free(a.header);
        free(a.ret_type);
        return;
    }
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

/* The definition of a library's status enum (CUresult: enum cudaError_enum,
 * cudaError_t: enum cudaError), wherever it lies: cudaError is in
 * driver_types.h, which is not one of the API headers. Only the first
 * definition counts. */
static void ps_result_enum(ps_ctx *x, CXCursor c)
{
    CXString s;
    int lib = -1;
    if (x->pass != 1 || !clang_isCursorDefinition(c))
        return;
    s = clang_getCursorSpelling(c);
    for (int i = 0; i < x->m->nlibs && lib < 0; i++)
        if (x->m->libs[i].status_enum && !strcmp(clang_getCString(s), x->m->libs[i].status_enum))
            lib = i;
    clang_disposeString(s);
    if (lib < 0 || (x->enums_seen & (1 << lib)))
        return;
    x->enums_seen |= 1 << lib;
    x->enum_kind = x->m->libs[lib].ret_kind;
    clang_visitChildren(c, ps_enumerator, x);
}

/* 'typedef enum { ... } ncclResult_t;': a status type whose enum has no tag
   (descriptor 'status TYPE -'): its enumerators, found through the typedef. */
static void ps_result_typedef(ps_ctx *x, CXCursor c)
{
    CXString s;
    int lib = -1;
    if (x->pass != 1)
        return;
    s = clang_getCursorSpelling(c);
    for (int i = 0; i < x->m->nlibs && lib < 0; i++)
        if (!x->m->libs[i].status_enum && x->m->libs[i].status_type &&
            !strcmp(clang_getCString(s), x->m->libs[i].status_type))
            lib = i;
    clang_disposeString(s);
    if (lib < 0 || (x->enums_seen & (1 << lib)))
        return;
    CXCursor d = clang_getTypeDeclaration(clang_getCanonicalType(clang_getTypedefDeclUnderlyingType(c)));
    if (d.kind != CXCursor_EnumDecl)
        return;
    x->enums_seen |= 1 << lib;
    x->enum_kind = x->m->libs[lib].ret_kind;
    clang_visitChildren(d, ps_enumerator, x);
}

static enum CXChildVisitResult ps_visit(CXCursor c, CXCursor parent, CXClientData data)
{
    ps_ctx *x = data;
    (void)parent;
    if (c.kind == CXCursor_TypedefDecl)
        ps_result_typedef(x, c);
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

static int ps_run(CXIndex idx, ps_ctx *x, const ps_options *o, const char *src)
{
    const char *inc = o->include_dir;
    char *iflag = ut_printf("-I%s", inc), *xflags[4] = {0};
    const char *args[9] = {"-x", "c", "-std=gnu11", iflag, "-Wno-everything"};
    int nargs = 5;
    for (int i = 0; i < o->nextra && i < 4; i++)
        args[nargs++] = xflags[i] = ut_printf("-I%s", o->extra_include[i]);
    struct CXUnsavedFile uf = {"/cushim-gen/parse.c", src, (unsigned long)strlen(src)};
    CXTranslationUnit tu = NULL;
    enum CXErrorCode ec;
    int rc;
    ec = clang_parseTranslationUnit2(idx, uf.Filename, args, nargs, &uf, 1,
                                     CXTranslationUnit_SkipFunctionBodies, &tu);
    free(iflag);
    for (int i = 0; i < 4; i++)
        free(xflags[i]);
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

/* '#define <macro> <N>' of the first library that names a version macro
   (the driver: CUDA_VERSION in cuda.h): the version of the tree. */
static int ps_version(const cg_model *m, const char *inc, unsigned *ver)
{
    const cg_lib *l = NULL;
    char *path, *text = NULL, *s, *pat;
    int rc;
    for (int i = 0; i < m->nlibs && !l; i++)
        if (m->libs[i].version_macro)
            l = &m->libs[i];
    if (!l) {
        ut_error("no library descriptor names a 'version' macro");
        return CG_EINPUT;
    }
    path = ut_printf("%s/%s", inc, l->version_header);
    pat = ut_printf("#define %s", l->version_macro);
    rc = ut_read_file(path, &text, NULL);
    if (rc) {
        free(path);
        free(pat);
        return rc;
    }
    rc = CG_EINPUT;
    for (s = text; (s = strstr(s, pat)) != NULL; s++) {
        char *e, *v = s + strlen(pat);
        unsigned long n = strtoul(v, &e, 10);
        if (e != v && (*v == ' ' || *v == '\t') && n > 0) {
            *ver = (unsigned)n;
            rc = CG_OK;
            break;
        }
    }
    if (rc)
        ut_error("%s: no '%s <N>' found", path, pat);
    free(text);
    free(path);
    free(pat);
    return rc;
}

/* '#define NAME' or, for NAME=VALUE, '#define NAME VALUE'. */
void ps_put_define(ut_buf *b, const char *d)
{
    const char *eq = strchr(d, '=');
    if (eq)
        ut_bprintf(b, "#define %.*s %s\n", (int)(eq - d), d, eq + 1);
    else
        ut_bprintf(b, "#define %s\n", d);
}

int ps_parse(cg_model *m, const ps_options *o)
{
    ut_buf src1 = {0}, src2 = {0};
    CXIndex idx;
    ps_ctx x = {m, 1, 0, 0, 0, 0, o};
    int rc;

    ps_model = m;
    if (!ut_is_dir(o->include_dir)) {
        ut_error("include folder '%s' does not exist (give --cuda-include <CUDA>/include)", o->include_dir);
        return CG_EINPUT;
    }
    for (int l = 0; l < m->nlibs; l++)
        for (int i = 0; i < m->libs[l].nheaders; i++) {
            const cg_lib_header *h = &m->libs[l].headers[i];
            char *p = ut_printf("%s/%s", o->include_dir, h->name);
            for (int k = 0; k < o->nextra && !ut_is_file(p); k++) {
                free(p);
                p = ut_printf("%s/%s", o->extra_include[k], h->name);
            }
            if (ut_is_file(p)) {
                m->header_lib[m->nheaders] = l;
                m->headers[m->nheaders++] = ut_strdup(h->name);
            } else if (h->required) {
                ut_error("required header '%s' is missing (library '%s')", p, m->libs[l].name);
                free(p);
                return CG_EINPUT;
            }
            free(p);
        }
    for (int l = 0; l < m->nlibs; l++)
        for (int i = 0; i < m->libs[l].ntypedefs; i++) {
            char *p = ut_printf("%s/%s", o->include_dir, m->libs[l].typedefs[i]);
            if (i == 0 && !ut_is_file(p)) {   /* the first is required: it holds the variant rule */
                ut_error("required header '%s' is missing", p);
                free(p);
                return CG_EINPUT;
            }
            free(p);
        }
    rc = ps_version(m, o->include_dir, &m->cuda_version);
    if (rc)
        return rc;
    for (int l = 0; l < m->nlibs; l++)
        for (int i = 0; i < m->libs[l].ntypedefs; i++) {
            char *p = ut_printf("%s/%s", o->include_dir, m->libs[l].typedefs[i]);
            if (ut_is_file(p))
                rc = pfn_scan_file(m, p);
            free(p);
            if (rc)
                return rc;
        }

    /* pass 1: every library's headers under every library's macros */
    for (int l = 0; l < m->nlibs; l++)
        for (int i = 0; i < m->libs[l].ndefines; i++)
            if (ld_define_first(m, l, i))
                ps_put_define(&src1, m->libs[l].defines[i]);
    for (int i = 0; i < m->nheaders; i++) {
        if (ps_prereq(m->headers[i]))
            ut_bprintf(&src1, "#include <%s>\n", ps_prereq(m->headers[i]));
        ut_bprintf(&src1, "#include <%s>\n", m->headers[i]);
    }
    /* pass 2: the headers of libraries with a legacy pass, without their
       macros but with their legacy ones */
    for (int l = 0; l < m->nlibs; l++)
        for (int i = 0; m->libs[l].legacy_pass && i < m->libs[l].nlegacy_defines; i++)
            ps_put_define(&src2, m->libs[l].legacy_defines[i]);
    for (int i = 0; i < m->nheaders; i++)
        if (m->libs[m->header_lib[i]].legacy_pass) {
            if (ps_prereq(m->headers[i]))
                ut_bprintf(&src2, "#include <%s>\n", ps_prereq(m->headers[i]));
            ut_bprintf(&src2, "#include <%s>\n", m->headers[i]);
        }

    idx = clang_createIndex(0, 0);
    rc = ps_run(idx, &x, o, src1.s);
    for (int l = 0; !rc && l < m->nlibs; l++)
        if (m->libs[l].status_type && !(x.enums_seen & (1 << l)) &&
            !ld_status_shared(m, l)) {
            ut_error("no definition of 'enum %s' (%s) in the headers of '%s'",
                     m->libs[l].status_enum ? m->libs[l].status_enum : "<no tag>", m->libs[l].status_type,
                     o->include_dir);
            rc = CG_EINPUT;
        }
    if (!rc && src2.s) {
        x.pass = 2;
        rc = ps_run(idx, &x, o, src2.s);
    }
    clang_disposeIndex(idx);
    ut_buf_free(&src1);
    ut_buf_free(&src2);
    return rc;
}
