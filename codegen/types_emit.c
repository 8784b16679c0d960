/*
 * types_emit.c - type metadata: the enum tables of the parsed headers, the
 * field descriptors of the structs the overlay lists ('struct <TypeName>'),
 * what each pointer parameter points to, and element counts held behind a
 * pointer (docs/generator.md, "Type metadata").
 *
 * parse.c calls te_visit for every top-level enum, typedef and record of the
 * first translation unit, te_param for every parameter and te_structs once
 * the unit has been walked (while its types are still alive). Enums and
 * records are identified by their USR across the two units; USRs are never
 * emitted, so the output does not depend on the libclang version.
 */
#include "cg.h"
#include "cg_clang.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct te_enum {
    char *usr;
    char *name;        /* first typedef naming it, else "enum X", else "enum <anonymous>" */
    char *tag;         /* "enum X", or NULL when anonymous */
    char **aliases;    /* every typedef naming it, in header order */
    int naliases;
    unsigned size;
    int nvalues;
    char **vnames;
    long long *values;
} te_enum;

typedef struct te_field {
    char *name, *type;
    int kind, pointee;
    unsigned offset, size, array_len;
    int bitfield;
    char *enum_usr, *record_usr;
} te_field;

typedef struct te_struct {
    char *name;        /* as listed; "Parent.field" for an anonymous member type */
    char *ctype;       /* the C type: the typedef name, "struct X", or __typeof__ of the member */
    char *usr;
    unsigned size;
    int nfields, cfields;
    te_field *f;
    CXType type;       /* while the unit is alive (te_structs) */
} te_struct;

/* A named field whose type is an anonymous struct or union ('struct { ... } allocFlags;'): described after
   the listed structs, as a struct of its own (te_anon_add). */
typedef struct te_pending {
    char *name, *ctype, *usr;
    CXType type;
} te_pending;

/* A typedef or tag of the open unit: for the lookup of listed structs. */
typedef struct te_name {
    char *name;
    int tag;           /* 1: a struct/union tag, 0: a typedef */
    CXType type;
} te_name;

struct te_types {
    te_enum *e;
    int ne, ce;
    te_struct *s;
    int ns, cs;
    te_name *names;
    int nnames, cnames;
    te_pending *pend;
    int npend, cpend;
};

static struct te_types *te_get(cg_model *m)
{
    if (!m->types)
        m->types = calloc(1, sizeof *m->types);
    if (!m->types) {
        ut_error("out of memory");
        exit(1);
    }
    return m->types;
}

static char *te_usr(CXCursor c)
{
    CXString s = clang_getCursorUSR(c);
    char *r = ut_strdup(clang_getCString(s) ? clang_getCString(s) : "");
    clang_disposeString(s);
    return r;
}

static char *te_spelling(CXCursor c)
{
    CXString s = clang_getCursorSpelling(c);
    char *r = ut_strdup(clang_getCString(s) ? clang_getCString(s) : "");
    clang_disposeString(s);
    return r;
}

static te_enum *te_find_enum(const struct te_types *t, const char *usr)
{
    if (!t || !usr)
        return NULL;
    for (int i = 0; i < t->ne; i++)
        if (!strcmp(t->e[i].usr, usr))
            return &t->e[i];
    return NULL;
}

static int te_struct_index(const struct te_types *t, const char *usr)
{
    if (!t || !usr)
        return -1;
    for (int i = 0; i < t->ns; i++)
        if (!strcmp(t->s[i].usr, usr))
            return i;
    return -1;
}

/* Declared in a file under the CUDA include folder (not a system header). */
static int te_in_include(CXCursor c, const char *inc)
{
    CXFile f;
    unsigned line, col, off;
    CXString fn;
    int yes;
    size_t n = strlen(inc);
    clang_getExpansionLocation(clang_getCursorLocation(c), &f, &line, &col, &off);
    if (!f)
        return 0;
    fn = clang_getFileName(f);
    yes = clang_getCString(fn) && !strncmp(clang_getCString(fn), inc, n) &&
          (clang_getCString(fn)[n] == '/' || (n && inc[n - 1] == '/'));
    clang_disposeString(fn);
    return yes;
}

static enum CXChildVisitResult te_enumerator(CXCursor c, CXCursor parent, CXClientData data)
{
    te_enum *e = data;
    CXType it = clang_getCanonicalType(clang_getEnumDeclIntegerType(parent));
    int uns = it.kind == CXType_UInt || it.kind == CXType_ULong || it.kind == CXType_ULongLong ||
              it.kind == CXType_UShort || it.kind == CXType_UChar || it.kind == CXType_Char_U ||
              it.kind == CXType_Bool;
    if (c.kind != CXCursor_EnumConstantDecl)
        return CXChildVisit_Continue;
    if ((e->nvalues & (e->nvalues - 1)) == 0 || e->nvalues == 0) {
        size_t cap = e->nvalues ? 2 * (size_t)e->nvalues : 8;
        e->vnames = ut_realloc(e->vnames, cap * sizeof *e->vnames);
        e->values = ut_realloc(e->values, cap * sizeof *e->values);
    }
    e->vnames[e->nvalues] = te_spelling(c);
    e->values[e->nvalues] = uns ? (long long)clang_getEnumConstantDeclUnsignedValue(c)
                                : clang_getEnumConstantDeclValue(c);
    e->nvalues++;
    return CXChildVisit_Continue;
}

static void te_add_name(struct te_types *t, const char *name, int tag, CXType type)
{
    if (t->nnames == t->cnames) {
        t->cnames = t->cnames ? 2 * t->cnames : 512;
        t->names = ut_realloc(t->names, (size_t)t->cnames * sizeof *t->names);
    }
    t->names[t->nnames].name = ut_strdup(name);
    t->names[t->nnames].tag = tag;
    t->names[t->nnames].type = type;
    t->nnames++;
}

void te_visit(cg_model *m, CXCursor c, const char *inc)
{
    struct te_types *t = te_get(m);
    if (c.kind == CXCursor_EnumDecl) {
        te_enum *e;
        char *usr;
        if (!clang_isCursorDefinition(c) || !te_in_include(c, inc))
            return;
        usr = te_usr(c);
        if (te_find_enum(t, usr)) {
            free(usr);
            return;
        }
        if (t->ne == t->ce) {
            t->ce = t->ce ? 2 * t->ce : 256;
            t->e = ut_realloc(t->e, (size_t)t->ce * sizeof *t->e);
        }
        e = &t->e[t->ne++];
        memset(e, 0, sizeof *e);
        e->usr = usr;
        if (!ty_tag_anonymous(c)) {
            char *sp = te_spelling(c);
            e->tag = ut_printf("enum %s", sp);
            free(sp);
        }
        e->size = (unsigned)clang_Type_getSizeOf(clang_getCursorType(c));
        clang_visitChildren(c, te_enumerator, e);
        return;
    }
    if (c.kind == CXCursor_TypedefDecl) {
        CXType u = clang_getCanonicalType(clang_getTypedefDeclUnderlyingType(c));
        char *name = te_spelling(c);
        if (u.kind == CXType_Enum) {
            char *usr = te_usr(clang_getTypeDeclaration(u));
            te_enum *e = te_find_enum(t, usr);
            if (e) {
                e->aliases = ut_realloc(e->aliases, (size_t)(e->naliases + 1) * sizeof *e->aliases);
                e->aliases[e->naliases++] = ut_strdup(name);
            }
            free(usr);
        } else if (u.kind == CXType_Record) {
            te_add_name(t, name, 0, u);
        }
        free(name);
        return;
    }
    if ((c.kind == CXCursor_StructDecl || c.kind == CXCursor_UnionDecl) && clang_isCursorDefinition(c) &&
        !ty_tag_anonymous(c)) {
        char *name = te_spelling(c);
        te_add_name(t, name, 1, clang_getCanonicalType(clang_getCursorType(c)));
        free(name);
    }
}

/* The enum and record behind a value type, or behind one pointer level. */
static void te_refs(CXType t, char **enum_usr, char **record_usr)
{
    CXType c = clang_getCanonicalType(t);
    if (c.kind == CXType_Pointer)
        c = clang_getCanonicalType(clang_getPointeeType(c));
    else if (c.kind == CXType_ConstantArray || c.kind == CXType_IncompleteArray)
        c = clang_getCanonicalType(clang_getArrayElementType(c));
    if (c.kind == CXType_Enum)
        *enum_usr = te_usr(clang_getTypeDeclaration(c));
    else if (c.kind == CXType_Record)
        *record_usr = te_usr(clang_getTypeDeclaration(c));
}

void te_param(cg_param *p, CXType t)
{
    te_refs(t, &p->enum_usr, &p->record_usr);
}

/* ---- listed structs ---- */
typedef struct te_walk {
    struct te_types *t;
    int si;            /* index of the struct in t->s (t->s may move while walking) */
    unsigned base;     /* byte offset of the record being walked */
} te_walk;

static void te_add_field(te_struct *s, te_field *f)
{
    if (s->nfields == s->cfields) {
        s->cfields = s->cfields ? 2 * s->cfields : 16;
        s->f = ut_realloc(s->f, (size_t)s->cfields * sizeof *s->f);
    }
    s->f[s->nfields++] = *f;
}

/* Queues the anonymous record type of field 'field' of 's' (once per record: a struct listed under two names
   walks its fields twice). */
static void te_anon_pend(struct te_types *t, const te_struct *s, const char *field, const char *usr, CXType type)
{
    if (te_struct_index(t, usr) >= 0)
        return;
    for (int i = 0; i < t->npend; i++)
        if (!strcmp(t->pend[i].usr, usr))
            return;
    if (t->npend == t->cpend) {
        t->cpend = t->cpend ? 2 * t->cpend : 8;
        t->pend = ut_realloc(t->pend, (size_t)t->cpend * sizeof *t->pend);
    }
    t->pend[t->npend].name = ut_printf("%s.%s", s->name, field);
    t->pend[t->npend].ctype = ut_printf("__typeof__(((%s *)0)->%s)", s->ctype, field);
    t->pend[t->npend].usr = ut_strdup(usr);
    t->pend[t->npend].type = type;
    t->npend++;
}

static enum CXVisitorResult te_field_visit(CXCursor c, CXClientData data)
{
    te_walk *w = data;
    te_struct *s = &w->t->s[w->si];
    te_field f;
    CXType ft = clang_getCursorType(c), et, ec;
    long long bits = clang_Cursor_getOffsetOfField(c);
    char *name = te_spelling(c);
    ut_buf dims = {0};
    unsigned off = w->base + (unsigned)(bits > 0 ? bits / 8 : 0);

    ec = clang_getCanonicalType(ft);
    /* an anonymous struct/union member: its fields are the parent's */
    if (ec.kind == CXType_Record && (!name[0] || clang_Cursor_isAnonymousRecordDecl(clang_getTypeDeclaration(ec)))) {
        te_walk in = {w->t, w->si, off};
        free(name);
        clang_Type_visitFields(ec, te_field_visit, &in);
        return CXVisit_Continue;
    }
    memset(&f, 0, sizeof f);
    f.name = name;
    f.offset = off;
    f.size = (unsigned)clang_Type_getSizeOf(ft);
    if (clang_Cursor_isBitField(c)) {
        f.bitfield = 1;
        f.size = 0;
    }
    et = ft;
    while (clang_getCanonicalType(et).kind == CXType_ConstantArray) {
        CXType a = ty_strip(et);
        long long n = clang_getArraySize(clang_getCanonicalType(et));
        if (!f.array_len)
            f.array_len = (unsigned)n;
        ut_bprintf(&dims, "[%lld]", n);
        et = a.kind == CXType_ConstantArray ? clang_getArrayElementType(a)
                                             : clang_getArrayElementType(clang_getCanonicalType(et));
    }
    {
        char *sp = ty_unqual(ty_spell(et));
        f.type = dims.len ? ut_printf("%s%s", sp, dims.s) : ut_strdup(sp);
        free(sp);
    }
    ut_buf_free(&dims);
    f.kind = ty_kind(et);
    if (f.kind == KIND_POINTER) {
        CXType pc = clang_getCanonicalType(et);
        f.pointee = ty_kind(clang_getPointeeType(pc.kind == CXType_Pointer ? ty_strip(et) : pc));
    }
    te_refs(et, &f.enum_usr, &f.record_usr);
    if (f.kind != KIND_ENUM && f.pointee != KIND_ENUM) {
        free(f.enum_usr);
        f.enum_usr = NULL;
    }
    if (f.kind != KIND_STRUCT && f.pointee != KIND_STRUCT) {
        free(f.record_usr);
        f.record_usr = NULL;
    }
    if (f.kind == KIND_STRUCT && f.record_usr) {   /* 'struct { ... } allocFlags': its own description, later */
        CXType rt = clang_getCanonicalType(et);
        if (rt.kind == CXType_Record && ty_tag_anonymous(clang_getTypeDeclaration(rt)))
            te_anon_pend(w->t, s, f.name, f.record_usr, rt);
    }
    te_add_field(s, &f);
    return CXVisit_Continue;
}

/* ---- anonymous member types ---- */
typedef struct te_plain_walk {
    const struct te_types *t;
    int depth, plain;
} te_plain_walk;

static int te_plain(const struct te_types *t, CXType rec, int depth);

static enum CXVisitorResult te_plain_visit(CXCursor c, CXClientData data)
{
    te_plain_walk *w = data;
    CXType et = clang_getCanonicalType(clang_getCursorType(c));
    while (et.kind == CXType_ConstantArray)
        et = clang_getCanonicalType(clang_getArrayElementType(et));
    switch (ty_kind(clang_getCursorType(c).kind == CXType_ConstantArray ? et : clang_getCursorType(c))) {
    case KIND_SCALAR:
    case KIND_ENUM:
    case KIND_HANDLE:
    case KIND_DEVPTR:
        break;
    case KIND_STRUCT: {
        char *usr = te_usr(clang_getTypeDeclaration(et));
        int described = ty_tag_anonymous(clang_getTypeDeclaration(et)) || te_struct_index(w->t, usr) >= 0;
        free(usr);
        if (!described || !te_plain(w->t, et, w->depth + 1))
            w->plain = 0;
        break;
    }
    default:   /* a pointer, string or callback: the union's bytes may be a host address */
        w->plain = 0;
    }
    return w->plain ? CXVisit_Continue : CXVisit_Break;
}

/* 1 when every member of 'rec' is plain data: scalars, enums, handles, device addresses, arrays of those,
   and nested structs that are described and plain themselves. */
static int te_plain(const struct te_types *t, CXType rec, int depth)
{
    te_plain_walk w = {t, depth, depth <= 8};
    if (w.plain)
        clang_Type_visitFields(rec, te_plain_visit, &w);
    return w.plain;
}

/* The anonymous struct and union types of named fields of the described structs, each described as a struct
   of its own named "Parent.field", after the listed ones (their indexes do not move). A union is described only
   when it is plain data: one with a pointer member stays without a descriptor (read it as raw bytes). */
static void te_anon_structs(struct te_types *t)
{
    for (int i = 0; i < t->npend; i++) {
        te_pending p = t->pend[i];   /* a copy: walking may queue more */
        te_struct *s;
        if (clang_getTypeDeclaration(p.type).kind == CXCursor_UnionDecl && !te_plain(t, p.type, 0)) {
            free(p.name);
            free(p.ctype);
            free(p.usr);
            continue;
        }
        if (t->ns == t->cs) {
            t->cs = t->cs ? 2 * t->cs : 64;
            t->s = ut_realloc(t->s, (size_t)t->cs * sizeof *t->s);
        }
        s = &t->s[t->ns++];
        memset(s, 0, sizeof *s);
        s->name = p.name;
        s->ctype = p.ctype;
        s->usr = p.usr;
        s->size = (unsigned)clang_Type_getSizeOf(p.type);
        {
            te_walk w = {t, t->ns - 1, 0};
            clang_Type_visitFields(p.type, te_field_visit, &w);
        }
    }
    free(t->pend);
    t->pend = NULL;
    t->npend = t->cpend = 0;
}

int te_structs(cg_model *m, const ps_options *o)
{
    struct te_types *t = te_get(m);
    int rc = CG_OK;
    for (int i = 0; i < ov_struct_count(o->overlay); i++) {
        unsigned line = 0;
        const char *want = ov_struct_at(o->overlay, i, m->cuda_version, &line);
        int found = -1;
        te_struct *s;
        if (!want)
            continue;
        for (int k = 0; k < t->nnames && found < 0; k++)
            if (!t->names[k].tag && !strcmp(t->names[k].name, want))
                found = k;
        for (int k = 0; k < t->nnames && found < 0; k++)
            if (t->names[k].tag && !strcmp(t->names[k].name, want))
                found = k;
        if (found < 0 || clang_Type_getSizeOf(t->names[found].type) <= 0) {
            ut_error("%s:%u: struct '%s' is not a complete struct or union type in these headers (CUDA_VERSION %u)",
                     o->overlay->path, line, want, m->cuda_version);
            rc = CG_EOVERLAY;
            continue;
        }
        if (t->ns == t->cs) {
            t->cs = t->cs ? 2 * t->cs : 64;
            t->s = ut_realloc(t->s, (size_t)t->cs * sizeof *t->s);
        }
        s = &t->s[t->ns++];
        memset(s, 0, sizeof *s);
        s->name = ut_strdup(want);
        {
            CXCursor d = clang_getTypeDeclaration(t->names[found].type);
            s->ctype = t->names[found].tag ? ut_printf("%s %s", d.kind == CXCursor_UnionDecl ? "union" : "struct", want)
                                           : ut_strdup(want);
            s->usr = te_usr(d);
        }
        s->size = (unsigned)clang_Type_getSizeOf(t->names[found].type);
        {
            te_walk w = {t, t->ns - 1, 0};
            clang_Type_visitFields(t->names[found].type, te_field_visit, &w);
        }
    }
    te_anon_structs(t);
    for (int k = 0; k < t->nnames; k++)
        free(t->names[k].name);
    free(t->names);
    t->names = NULL;
    t->nnames = t->cnames = 0;
    return rc;
}

/* ---- counts behind a pointer ---- */
static int te_is_count_name(const char *n)
{
    if (n[0] == 'p' && n[1] == 'N') /* pNumRootNodes */
        return ut_starts(n + 1, "Num");
    return ut_starts(n, "num") || !strcmp(n, "count") || ut_ends(n, "Count");
}

/* 'T *items, size_t *numItems': the element count follows, behind a pointer
 * (cuGraphGetNodes). The overlay's count= wins (it applies later). */
void te_indirect_counts(cg_model *m)
{
    for (int i = 0; i < m->napis; i++) {
        cg_api *a = &m->apis[i];
        for (int j = 0; j + 1 < a->nparams; j++) {
            cg_param *p = &a->params[j], *n = &a->params[j + 1];
            if (p->kind != KIND_POINTER || !p->elem_known || p->count_param >= 0 || p->fixed_count ||
                p->pointee_class == KIND_POINTER || te_is_count_name(p->name))
                continue;
            if (n->kind == KIND_POINTER && n->pointee_class == KIND_SCALAR && te_is_count_name(n->name)) {
                p->count_param = j + 1;
                p->count_indirect = 1;
            }
        }
    }
}

/* ---- emission ---- */
static void te_str(ut_buf *b, const char *s)
{
    ut_puts(b, "\"");
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            ut_bprintf(b, "\\%c", *s);
        else
            ut_putn(b, s, 1);
    }
    ut_puts(b, "\"");
}

static const char *te_kind(int k)
{
    static const char *n[] = {"CUSHIM_KIND_UNKNOWN", "CUSHIM_KIND_SCALAR", "CUSHIM_KIND_ENUM",
                              "CUSHIM_KIND_HANDLE", "CUSHIM_KIND_POINTER", "CUSHIM_KIND_STRING",
                              "CUSHIM_KIND_STRUCT", "CUSHIM_KIND_CALLBACK", "CUSHIM_KIND_DEVPTR"};
    return k >= 0 && k <= KIND_DEVPTR ? n[k] : n[0];
}

static const char *te_enum_name(const te_enum *e)
{
    return e->naliases ? e->aliases[0] : e->tag ? e->tag : "enum <anonymous>";
}

static void te_ref(ut_buf *b, const cg_model *m, const char *enum_usr, const char *record_usr)
{
    const struct te_types *t = m->types;
    const te_enum *e = te_find_enum(t, enum_usr);
    int s = te_struct_index(t, record_usr);
    if (e)
        ut_bprintf(b, ", &cushim_gen_enums[%d]", (int)(e - t->e));
    else
        ut_puts(b, ", NULL");
    if (s >= 0)
        ut_bprintf(b, ", &cushim_gen_structs[%d]", s);
    else
        ut_puts(b, ", NULL");
}

static void te_value(ut_buf *b, long long v)
{
    if (v == (-9223372036854775807LL - 1))
        ut_puts(b, "INT64_MIN");
    else
        ut_bprintf(b, "%lld", v);
}

void te_emit_types(ut_buf *b, const cg_model *m)
{
    const struct te_types *t = m->types;
    int ne = t ? t->ne : 0, ns = t ? t->ns : 0;
    ut_puts(b, "/* ---- type metadata: every enum of the headers, the structs codegen/overlay.txt lists ---- */\n");
    for (int i = 0; i < ne; i++) {
        const te_enum *e = &t->e[i];
        if (!e->nvalues)
            continue;
        ut_bprintf(b, "static const cushim_enum_value cushim_gen_ev_%d[] = {", i);
        for (int k = 0; k < e->nvalues; k++) {
            ut_bprintf(b, "%s{\"%s\", ", k % 2 ? " " : "\n    ", e->vnames[k]);
            te_value(b, e->values[k]);
            ut_puts(b, "},");
        }
        ut_puts(b, "\n};\n");
    }
    ut_bprintf(b, "\nconst cushim_enum_info cushim_gen_enums[%d] = {\n", ne ? ne : 1);
    for (int i = 0; i < ne; i++) {
        const te_enum *e = &t->e[i];
        ut_puts(b, "    { ");
        te_str(b, te_enum_name(e));
        if (e->nvalues)
            ut_bprintf(b, ", %u, %d, cushim_gen_ev_%d },\n", e->size, e->nvalues, i);
        else
            ut_bprintf(b, ", %u, 0, NULL },\n", e->size);
    }
    if (!ne)
        ut_puts(b, "    { NULL, 0, 0, NULL },\n");
    ut_bprintf(b, "};\nconst uint32_t cushim_gen_enum_count = %d;\n\n", ne);
    ut_bprintf(b, "extern const cushim_struct_info cushim_gen_structs[%d];\n", ns ? ns : 1);
    for (int i = 0; i < ns; i++) {
        const te_struct *s = &t->s[i];
        if (te_struct_index(t, s->usr) != i)
            continue; /* another name of a struct already described: shares its fields */
        ut_bprintf(b, "static const cushim_field_info cushim_gen_sf_%d[] = { /* %s */\n", i, s->name);
        for (int k = 0; k < s->nfields; k++) {
            const te_field *f = &s->f[k];
            ut_puts(b, "    { ");
            te_str(b, f->name);
            ut_puts(b, ", ");
            te_str(b, f->type);
            ut_bprintf(b, ", %s, %s, 0, %u, %u, %u", te_kind(f->kind), te_kind(f->pointee), f->offset, f->size,
                       f->array_len);
            te_ref(b, m, f->enum_usr, f->record_usr);
            ut_puts(b, " },\n");
        }
        ut_puts(b, "};\n");
    }
    ut_bprintf(b, "const cushim_struct_info cushim_gen_structs[%d] = {\n", ns ? ns : 1);
    for (int i = 0; i < ns; i++)
        ut_bprintf(b, "    { \"%s\", %u, %d, cushim_gen_sf_%d },\n", t->s[i].name, t->s[i].size, t->s[i].nfields,
                   te_struct_index(t, t->s[i].usr));
    if (!ns)
        ut_puts(b, "    { NULL, 0, 0, NULL },\n");
    ut_bprintf(b, "};\nconst uint32_t cushim_gen_struct_count = %d;\n\n", ns);
}

void te_emit_param_tail(ut_buf *b, const cg_model *m, const cg_param *p)
{
    int pointee = p->kind == KIND_POINTER ? p->pointee_class : 0;
    int want_enum = p->kind == KIND_ENUM || pointee == KIND_ENUM;
    int want_rec = p->kind == KIND_STRUCT || pointee == KIND_STRUCT;
    ut_bprintf(b, ", %s, %d, 0", te_kind(pointee), p->count_indirect);
    te_ref(b, m, want_enum ? p->enum_usr : NULL, want_rec ? p->record_usr : NULL);
}

typedef struct te_key {
    const char *name;
    int a, b;
} te_key;

static int te_key_cmp(const void *x, const void *y)
{
    const te_key *p = x, *q = y;
    int c = strcmp(p->name, q->name);
    if (c)
        return c;
    return p->a != q->a ? p->a - q->a : p->b - q->b;
}

/* Sorts, drops repeated names (the first, by enum order, stays). */
static int te_sort_keys(te_key *k, int n)
{
    int o = 0;
    qsort(k, (size_t)n, sizeof *k, te_key_cmp);
    for (int i = 0; i < n; i++)
        if (!o || strcmp(k[o - 1].name, k[i].name))
            k[o++] = k[i];
    return o;
}

void te_emit_lookup(ut_buf *b, const cg_model *m)
{
    const struct te_types *t = m->types;
    int ne = t ? t->ne : 0, ns = t ? t->ns : 0, nk = 0, cap = 16;
    te_key *k;
    for (int i = 0; i < ne; i++)
        cap += t->e[i].naliases + 1 + t->e[i].nvalues;
    cap += ns;
    k = ut_alloc((size_t)cap * sizeof *k);

    /* enum type names: every typedef naming it and 'enum TAG' and bare 'TAG' */
    for (int i = 0; i < ne; i++) {
        const te_enum *e = &t->e[i];
        for (int j = 0; j < e->naliases; j++)
            k[nk++] = (te_key){e->aliases[j], i, 0};
        if (e->tag) {
            k[nk++] = (te_key){e->tag, i, 1};
            k[nk++] = (te_key){e->tag + 5, i, 2};
        }
    }
    nk = te_sort_keys(k, nk);
    ut_puts(b, "\n/* enum type names (typedefs, 'enum TAG' and TAG), sorted: host enum_by_name */\n");
    ut_bprintf(b, "const uint32_t cushim_gen_enum_name_count = %d;\n", nk);
    ut_bprintf(b, "const char *const cushim_gen_enum_names[%d] = {", nk ? nk : 1);
    for (int i = 0; i < nk; i++) {
        ut_puts(b, i % 4 ? " " : "\n    ");
        te_str(b, k[i].name);
        ut_puts(b, ",");
    }
    ut_bprintf(b, "%s\n};\nconst uint16_t cushim_gen_enum_name_index[%d] = {", nk ? "" : " NULL", nk ? nk : 1);
    for (int i = 0; i < nk; i++)
        ut_bprintf(b, "%s%d,", i % 16 ? " " : "\n    ", k[i].a);
    ut_puts(b, nk ? "\n};\n" : " 0 };\n");

    nk = 0;
    for (int i = 0; i < ne; i++)
        for (int j = 0; j < t->e[i].nvalues; j++)
            k[nk++] = (te_key){t->e[i].vnames[j], i, j};
    nk = te_sort_keys(k, nk);
    ut_puts(b, "\n/* every enumerator, sorted by name: host enum_constant */\n");
    ut_bprintf(b, "const uint32_t cushim_gen_enum_const_count = %d;\n", nk);
    ut_bprintf(b, "const char *const cushim_gen_enum_const_names[%d] = {", nk ? nk : 1);
    for (int i = 0; i < nk; i++)
        ut_bprintf(b, "%s\"%s\",", i % 4 ? " " : "\n    ", k[i].name);
    ut_bprintf(b, "%s\n};\nconst uint16_t cushim_gen_enum_const_at[%d][2] = { /* enum, value index */", nk ? "" : " NULL",
               nk ? nk : 1);
    for (int i = 0; i < nk; i++)
        ut_bprintf(b, "%s{%d, %d},", i % 8 ? " " : "\n    ", k[i].a, k[i].b);
    ut_puts(b, nk ? "\n};\n" : " {0, 0} };\n");

    nk = 0;
    for (int i = 0; i < ns; i++)
        k[nk++] = (te_key){t->s[i].name, i, 0};
    nk = te_sort_keys(k, nk);
    ut_puts(b, "\n/* listed structs by name: host struct_by_name */\n");
    ut_bprintf(b, "const uint16_t cushim_gen_struct_by_name[%d] = {", nk ? nk : 1);
    for (int i = 0; i < nk; i++)
        ut_bprintf(b, "%s%d,", i % 16 ? " " : "\n    ", k[i].a);
    ut_puts(b, nk ? "\n};\n" : " 0 };\n");
    free(k);
}

void te_emit_check(ut_buf *b, const cg_model *m)
{
    const struct te_types *t = m->types;
    ut_puts(b, "/* CUSHIM_STRUCT_CHECK(NAME, CTYPE, SIZE) and CUSHIM_FIELD_CHECK(NAME, CTYPE, FIELD, OFFSET, SIZE):\n"
               "   the layout libclang gave the generator, for a compiled offsetof() check of cushim_gen_structs\n"
               "   (tests/unit/codegen_compile_check.c); bit-fields are left out. Define both before including. */\n");
    for (int i = 0; t && i < t->ns; i++) {
        const te_struct *s = &t->s[i];
        /* NVML's structs (nvml.h, which cushim_cuda_headers.h does not include): checked where nvml.h is */
        int nvml = strncmp(s->name, "nvml", 4) == 0;
        if (nvml)
            ut_puts(b, "#ifdef NVML_API_VERSION\n");
        ut_bprintf(b, "CUSHIM_STRUCT_CHECK(%s, %s, %u)\n", s->name, s->ctype, s->size);
        for (int k = 0; k < s->nfields; k++)
            if (!s->f[k].bitfield && s->f[k].name[0])
                ut_bprintf(b, "CUSHIM_FIELD_CHECK(%s, %s, %s, %u, %u)\n", s->name, s->ctype, s->f[k].name,
                           s->f[k].offset, s->f[k].size);
        if (nvml)
            ut_puts(b, "#endif\n");
    }
}

/* ---- --report ---- */
/* A plural name, less the plural words that name one value (flags, bytes, ...). */
static int te_plural(const char *n)
{
    static const char *single[] = {"flags", "Flags", "bytes", "Bytes", "Properties", "Requirements", "Props",
                                   "Status", "status", "Params", "params", "Attributes", "Milliseconds", "Access"};
    size_t l = strlen(n);
    for (size_t i = 0; i < sizeof single / sizeof single[0]; i++)
        if (ut_ends(n, single[i]))
            return 0;
    return l > 2 && n[l - 1] == 's' && n[l - 2] != 's';
}

void te_report(const cg_model *m)
{
    const struct te_types *t = m->types;
    int nunk = 0, nind = 0;
    printf("type metadata: %d enums, %d listed structs\n", t ? t->ne : 0, t ? t->ns : 0);
    for (int i = 0; i < m->napis; i++) {
        const cg_api *a = &m->apis[i];
        for (int j = 0; j < a->nparams; j++) {
            const cg_param *p = &a->params[j];
            const char *d = p->doc;
            int arrayish;
            if (p->count_indirect)
                nind++;
            if (p->kind != KIND_POINTER || !p->elem_known || p->count_param >= 0 || p->fixed_count ||
                te_is_count_name(p->name))
                continue;
            arrayish = te_plural(p->name) || (d && (strstr(d, "array of") || strstr(d, "Array of") || strstr(d, "list of")));
            if (!arrayish)
                continue;
            nunk++;
            printf("  array count unknown %s %s (%s)%s%s\n", a->name, p->name, p->type, d ? ": " : "", d ? d : "");
        }
    }
    printf("arrays with an unknown element count: %d; counts read behind a pointer: %d\n", nunk, nind);
}

void te_free(cg_model *m)
{
    struct te_types *t = m->types;
    if (!t)
        return;
    for (int i = 0; i < t->ne; i++) {
        te_enum *e = &t->e[i];
        free(e->usr);
        free(e->name);
        free(e->tag);
        for (int k = 0; k < e->naliases; k++)
            free(e->aliases[k]);
        free(e->aliases);
        for (int k = 0; k < e->nvalues; k++)
            free(e->vnames[k]);
        free(e->vnames);
        free(e->values);
    }
    for (int i = 0; i < t->ns; i++) {
        te_struct *s = &t->s[i];
        for (int k = 0; k < s->nfields; k++) {
            free(s->f[k].name);
            free(s->f[k].type);
            free(s->f[k].enum_usr);
            free(s->f[k].record_usr);
        }
        free(s->f);
        free(s->name);
        free(s->ctype);
        free(s->usr);
    }
    for (int k = 0; k < t->nnames; k++)
        free(t->names[k].name);
    free(t->names);
    for (int k = 0; k < t->npend; k++) {
        free(t->pend[k].name);
        free(t->pend[k].ctype);
        free(t->pend[k].usr);
    }
    free(t->pend);
    free(t->e);
    free(t->s);
    free(t);
    m->types = NULL;
}
