/*
 * types.c - type spellings that do not depend on the libclang version, and
 * the classification of a parameter type into a cushim_param_kind.
 *
 * libclang 16 wraps every written type name in an Elaborated type where 14
 * reports the Typedef directly, and its spellings differ in details. So the
 * spellings here are built from the type structure: typedef names as
 * written, 'struct X' / 'enum X' for tags, builtins by a fixed table,
 * 'const' before a named type and after a '*', arrays decayed to pointers.
 */
#include "cg.h"
#include "cg_clang.h"

#include <stdlib.h>
#include <string.h>

/* Strips Elaborated, Attributed and Unexposed-with-canonical wrappers. */
CXType ty_strip(CXType t)
{
    for (;;) {
        if (t.kind == CXType_Elaborated)
            t = clang_Type_getNamedType(t);
        else if (t.kind == CXType_Attributed) {
            t = clang_Type_getModifiedType(t);
        } else {
            return t;
        }
    }
}

static const char *ty_builtin(enum CXTypeKind k)
{
    switch (k) {
    case CXType_Void: return "void";
    case CXType_Bool: return "_Bool";
    case CXType_Char_U: case CXType_Char_S: return "char";
    case CXType_UChar: return "unsigned char";
    case CXType_SChar: return "signed char";
    case CXType_UShort: return "unsigned short";
    case CXType_Short: return "short";
    case CXType_UInt: return "unsigned int";
    case CXType_Int: return "int";
    case CXType_ULong: return "unsigned long";
    case CXType_Long: return "long";
    case CXType_ULongLong: return "unsigned long long";
    case CXType_LongLong: return "long long";
    case CXType_UInt128: return "unsigned __int128";
    case CXType_Int128: return "__int128";
    case CXType_Float: return "float";
    case CXType_Double: return "double";
    case CXType_LongDouble: return "long double";
    case CXType_Char16: return "char16_t";
    case CXType_Char32: return "char32_t";
    case CXType_WChar: return "wchar_t";
    default: return NULL;
    }
}

/* Whether a tag declaration is anonymous ('enum {' rather than 'enum X').
 * Read from the tokens, not from the spelling: libclang 16 spells an
 * anonymous tag with the name of its typedef, libclang 14 does not. */
int ty_tag_anonymous(CXCursor d)
{
    static struct {
        unsigned hash;
        int anon;
    } cache[4096];
    static int ncache;
    unsigned h = clang_hashCursor(d);
    CXTranslationUnit tu = clang_Cursor_getTranslationUnit(d);
    CXSourceRange ext = clang_getCursorExtent(d);
    CXSourceLocation start = clang_getRangeStart(ext), end;
    CXFile file;
    unsigned line, col, off;
    CXToken *toks = NULL;
    unsigned ntok = 0;
    int anon = 0;
    for (int i = 0; i < ncache; i++)
        if (cache[i].hash == h)
            return cache[i].anon;
    /* the first tokens of the declaration are enough */
    clang_getSpellingLocation(start, &file, &line, &col, &off);
    end = clang_getLocationForOffset(tu, file, off + 256);
    if (clang_equalLocations(end, clang_getNullLocation()))
        end = clang_getRangeEnd(ext);
    clang_tokenize(tu, clang_getRange(start, end), &toks, &ntok);
    for (unsigned i = 0; i + 1 < ntok; i++) {
        CXString k = clang_getTokenSpelling(tu, toks[i]);
        const char *ks = clang_getCString(k);
        int kw = !strcmp(ks, "enum") || !strcmp(ks, "struct") || !strcmp(ks, "union");
        clang_disposeString(k);
        if (kw) {
            anon = clang_getTokenKind(toks[i + 1]) != CXToken_Identifier;
            break;
        }
    }
    if (toks)
        clang_disposeTokens(tu, toks, ntok);
    if (ncache < (int)(sizeof cache / sizeof cache[0])) {
        cache[ncache].hash = h;
        cache[ncache].anon = anon;
        ncache++;
    }
    return anon;
}

/* The tag name of a record or enum; for an anonymous one the name of the
 * typedef that named it ('tdname'), else "<anonymous>". */
static char *ty_tag(CXType t, const char *tdname)
{
    CXCursor d = clang_getTypeDeclaration(t);
    CXString s = clang_getCursorSpelling(d);
    const char *c = clang_getCString(s);
    char *r;
    const char *kw = t.kind == CXType_Enum ? "enum" : d.kind == CXCursor_UnionDecl ? "union" : "struct";
    if (!c || !*c || strchr(c, '(') || strchr(c, ' ') || ty_tag_anonymous(d))
        r = tdname ? ut_strdup(tdname) : ut_printf("%s <anonymous>", kw);
    else
        r = ut_printf("%s %s", kw, c);
    clang_disposeString(s);
    return r;
}

/* The function type behind a pointee, keeping typedef names of its result
 * and parameters (the canonical function type has lost them). */
static CXType ty_fn_of(CXType t)
{
    for (int guard = 0; guard < 16; guard++) {
        t = ty_strip(t);
        if (t.kind == CXType_FunctionProto || t.kind == CXType_FunctionNoProto)
            return t;
        if (t.kind != CXType_Typedef)
            break;
        t = clang_getTypedefDeclUnderlyingType(clang_getTypeDeclaration(t));
    }
    return clang_getCanonicalType(t);
}

static char *ty_fn(CXType fn, int canon, const char *inner);

/* Spelling of 't'. 'canon': follow typedefs down to the canonical type. */
static char *ty_spell_(CXType t, int canon, const char *tdname)
{
    int cq = clang_isConstQualifiedType(t);
    int vq = clang_isVolatileQualifiedType(t);
    char *core = NULL, *r;
    const char *b;
    t = ty_strip(t);
    cq |= clang_isConstQualifiedType(t);
    vq |= clang_isVolatileQualifiedType(t);

    switch (t.kind) {
    case CXType_Pointer:
    case CXType_ConstantArray:
    case CXType_IncompleteArray:
    case CXType_VariableArray:
    case CXType_DependentSizedArray: {
        CXType p = t.kind == CXType_Pointer ? clang_getPointeeType(t) : clang_getArrayElementType(t);
        CXType pc = clang_getCanonicalType(p);
        char *in;
        if (pc.kind == CXType_FunctionProto || pc.kind == CXType_FunctionNoProto) {
            CXType ps = ty_strip(p);
            if (canon || ps.kind == CXType_FunctionProto || ps.kind == CXType_FunctionNoProto ||
                ps.kind == CXType_Unexposed) {
                r = ty_fn(ty_fn_of(p), canon, cq ? "*const" : "*");
                return r;
            }
        }
        in = ty_spell_(p, canon, NULL);
        r = ut_printf("%s%s*%s%s", in, ut_ends(in, "*") ? "" : " ", cq && t.kind == CXType_Pointer ? "const" : "",
                      vq && t.kind == CXType_Pointer ? (cq ? " volatile" : "volatile") : "");
        free(in);
        return r;
    }
    case CXType_Typedef:
        if (!canon) {
            CXString s = clang_getTypedefName(t);
            core = ut_strdup(clang_getCString(s));
            clang_disposeString(s);
        } else {
            CXString s = clang_getTypedefName(t);
            CXCursor d = clang_getTypeDeclaration(t);
            CXType u = clang_getTypedefDeclUnderlyingType(d);
            char *nm = ut_strdup(clang_getCString(s));
            clang_disposeString(s);
            /* qualifiers of the typedef use go on top of the underlying */
            r = ty_spell_(u, 1, nm);
            free(nm);
            if (cq && strncmp(r, "const ", 6) && !ut_ends(r, "const")) {
                char *q;
                if (ut_ends(r, "*"))
                    q = ut_printf("%sconst", r);
                else
                    q = ut_printf("const %s", r);
                free(r);
                r = q;
            }
            return r;
        }
        break;
    case CXType_Record:
    case CXType_Enum:
        core = ty_tag(t, tdname);
        break;
    case CXType_FunctionProto:
    case CXType_FunctionNoProto:
        return ty_fn(t, canon, "");
    default:
        b = ty_builtin(t.kind);
        if (b) {
            core = ut_strdup(b);
        } else {
            CXType c = clang_getCanonicalType(t);
            if (!(c.kind == t.kind && c.data[0] == t.data[0]) && c.kind != CXType_Invalid)
                return ty_spell_(c, canon, tdname);
            {
                CXString s = clang_getTypeSpelling(t);
                core = ut_strdup(clang_getCString(s));
                clang_disposeString(s);
            }
        }
        break;
    }
    r = ut_printf("%s%s%s", cq ? "const " : "", vq ? "volatile " : "", core);
    free(core);
    return r;
}

/* 'RET (inner)(ARGS)' for a function type. */
static char *ty_fn(CXType fn, int canon, const char *inner)
{
    ut_buf b = {0};
    int i, n = clang_getNumArgTypes(fn);
    char *ret = ty_spell_(clang_getResultType(fn), canon, NULL);
    ut_bprintf(&b, "%s (%s)(", ret, inner);
    free(ret);
    if (n <= 0 && !clang_isFunctionTypeVariadic(fn))
        ut_puts(&b, fn.kind == CXType_FunctionProto ? "void" : "");
    for (i = 0; i < n; i++) {
        char *a = ty_spell_(clang_getArgType(fn, (unsigned)i), canon, NULL);
        ut_bprintf(&b, "%s%s", i ? ", " : "", a);
        free(a);
    }
    if (clang_isFunctionTypeVariadic(fn))
        ut_puts(&b, n > 0 ? ", ..." : "...");
    ut_puts(&b, ")");
    return b.s;
}

char *ty_spell(CXType t)
{
    return ty_spell_(t, 0, NULL);
}

char *ty_spell_canon(CXType t)
{
    return ty_spell_(t, 1, NULL);
}

/* Removes a top-level const/volatile: irrelevant to a prototype and it
 * would make the params field read-only. */
char *ty_unqual(char *s)
{
    char *r;
    if (ut_starts(s, "const ") && !strchr(s, '*')) {
        r = ut_strdup(s + 6);
        free(s);
        return r;
    }
    if (ut_ends(s, "*const")) {
        s[strlen(s) - 5] = 0;
        return s;
    }
    return s;
}

/* A pointer whose pointee is a function (after typedefs). */
int ty_is_fnptr(CXType t)
{
    CXType c = clang_getCanonicalType(t);
    if (c.kind != CXType_Pointer)
        return 0;
    c = clang_getCanonicalType(clang_getPointeeType(c));
    return c.kind == CXType_FunctionProto || c.kind == CXType_FunctionNoProto;
}

/* The written type is a pointer to function with no typedef name. */
int ty_is_raw_fnptr(CXType t)
{
    CXType s = ty_strip(t), p;
    if (!ty_is_fnptr(t))
        return 0;
    if (s.kind != CXType_Pointer)
        return 0;
    p = ty_strip(clang_getPointeeType(s));
    return p.kind != CXType_Typedef;
}

char *ty_fn_typedef(CXType t, const char *name)
{
    CXType fn = ty_fn_of(clang_getPointeeType(ty_strip(t)));
    char *in = ut_printf("*%s", name);
    char *r = ty_fn(fn, 0, in);
    free(in);
    return r;
}

/* Any typedef on the way to the canonical type named '<prefix>*'. */
static int ty_is_named(CXType t, const char *prefix)
{
    for (int guard = 0; guard < 16; guard++) {
        t = ty_strip(t);
        if (t.kind != CXType_Typedef)
            return 0;
        {
            CXString s = clang_getTypedefName(t);
            int yes = ut_starts(clang_getCString(s), prefix);
            clang_disposeString(s);
            if (yes)
                return 1;
        }
        t = clang_getTypedefDeclUnderlyingType(clang_getTypeDeclaration(t));
    }
    return 0;
}

/* Any typedef on the way to the canonical type named 'CUdeviceptr*'. */
static int ty_is_devptr(CXType t)
{
    for (int guard = 0; guard < 16; guard++) {
        t = ty_strip(t);
        if (t.kind != CXType_Typedef)
            return 0;
        {
            CXString s = clang_getTypedefName(t);
            int yes = ut_starts(clang_getCString(s), "CUdeviceptr");
            clang_disposeString(s);
            if (yes)
                return 1;
        }
        t = clang_getTypedefDeclUnderlyingType(clang_getTypeDeclaration(t));
    }
    return 0;
}

static int ty_is_integer(enum CXTypeKind k)
{
    return (k >= CXType_Bool && k <= CXType_Int128) || k == CXType_Float || k == CXType_Double ||
           k == CXType_LongDouble;
}

static int ty_is_char(enum CXTypeKind k)
{
    return k == CXType_Char_S || k == CXType_Char_U || k == CXType_SChar || k == CXType_UChar;
}

/* Classifies 't' (a parameter or pointee type). */
int ty_kind(CXType t)
{
    CXType c = clang_getCanonicalType(t);
    if (ty_is_devptr(t) && c.kind != CXType_Pointer)
        return KIND_DEVPTR;
    /* an integer naming a driver object (the VMM allocation handle) */
    if (ty_is_named(t, "CUmemGenericAllocationHandle") && c.kind != CXType_Pointer)
        return KIND_HANDLE;
    switch (c.kind) {
    case CXType_Enum:
        return KIND_ENUM;
    case CXType_Record:
        return KIND_STRUCT;
    case CXType_ConstantArray:
    case CXType_IncompleteArray:
    case CXType_VariableArray:
    case CXType_Pointer: {
        /* an array parameter is a pointer to its element */
        CXType p = clang_getCanonicalType(c.kind == CXType_Pointer ? clang_getPointeeType(c)
                                                                    : clang_getArrayElementType(c));
        if (p.kind == CXType_FunctionProto || p.kind == CXType_FunctionNoProto)
            return KIND_CALLBACK;
        if (p.kind == CXType_Record && clang_Type_getSizeOf(p) == CXTypeLayoutError_Incomplete)
            return KIND_HANDLE;
        if (ty_is_char(p.kind) && clang_isConstQualifiedType(p))
            return KIND_STRING;
        /* a typedef of 'void *' (EGLImageKHR, EGLStreamKHR...) is opaque */
        if (p.kind == CXType_Void && ty_strip(t).kind == CXType_Typedef)
            return KIND_HANDLE;
        return KIND_POINTER;
    }
    default:
        if (ty_is_integer(c.kind))
            return KIND_SCALAR;
        return KIND_UNKNOWN;
    }
}

/* Fills the pointer facts of 'p' from its type 't'. */
void ty_pointer_facts(CXType t, cg_param *p)
{
    CXType c = clang_getCanonicalType(t);
    CXType pt, pc;
    if (c.kind == CXType_ConstantArray || c.kind == CXType_IncompleteArray || c.kind == CXType_VariableArray) {
        pt = clang_getArrayElementType(c);
    } else if (c.kind == CXType_Pointer) {
        pt = clang_getPointeeType(ty_strip(t));
        if (pt.kind == CXType_Invalid)
            pt = clang_getPointeeType(c);
    } else {
        return;
    }
    pc = clang_getCanonicalType(pt);
    p->pointee_const = clang_isConstQualifiedType(pc);
    p->pointee_class = ty_kind(pt);
    if (p->pointee_class == KIND_UNKNOWN && pc.kind == CXType_Void)
        p->pointee_class = KIND_UNKNOWN;
    p->elem_known = pc.kind != CXType_Void && pc.kind != CXType_FunctionProto &&
                    pc.kind != CXType_FunctionNoProto && clang_Type_getSizeOf(pc) > 0;
}
