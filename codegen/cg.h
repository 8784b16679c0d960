/*
 * cg.h - shared declarations of cushim-gen, the generator of the CUDA API
 * tables (see docs/generator.md).
 *
 * Modules and their prefixes:
 *   util.c     ut_   strings, buffers, files, errors
 *   typedefs.c pfn_  the PFN_<base>_v<N> typedefs of the *Typedefs.h headers
 *   parse.c    ps_   libclang: function declarations of the CUDA headers
 *   types.c    ty_   version-independent type spellings and classification
 *   overlay.c  ov_   the hand-written overlay (codegen/overlay.txt)
 *   model.c    md_   the API model: variants, directions, categories
 *   ids.c      id_   the stable id registry (codegen/api_ids.tsv)
 *   emit.c     em_   the generated tree
 *   report.c   rp_   coverage report against the shipped libraries
 *   libdesc.c  ld_   library descriptors (codegen/libs/<name>.lib)
 *   types_emit.c te_  type metadata: enum tables, struct fields, pointees
 *   roles.c    rl_   allocation roles ('role' overlay entries)
 * Every function that can fail returns 0 or a negative CG_E* code after
 * printing what failed.
 */
#ifndef CUSHIM_CG_H
#define CUSHIM_CG_H

#include <stddef.h>
#include <stdint.h>

#define CG_VERSION "0.1.0"

enum {
    CG_OK = 0,
    CG_EIO = -1,      /* file system                      */
    CG_EINPUT = -2,   /* bad or missing input             */
    CG_EPARSE = -3,   /* header diagnostics               */
    CG_EOVERLAY = -4, /* bad overlay entry                */
    CG_EDIFF = -5,    /* --verify found differences       */
    CG_ENOMEM = -6
};

/* ---- util.c ---- */
typedef struct ut_buf {
    char *s;
    size_t len, cap;
} ut_buf;

void ut_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void ut_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void *ut_alloc(size_t n);
void *ut_realloc(void *p, size_t n);
char *ut_strdup(const char *s);
/* the words of cushim_meta.h's category list: bit number of a word (-1 if none), word of a bit (NULL) */
int ut_cat_bit(const char *name);
const char *ut_cat_name(int bit);
char *ut_strndup(const char *s, size_t n);
char *ut_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void ut_puts(ut_buf *b, const char *s);
void ut_putn(ut_buf *b, const char *s, size_t n);
void ut_bprintf(ut_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ut_buf_free(ut_buf *b);
int ut_read_file(const char *path, char **out, size_t *len);
int ut_write_file(const char *path, const char *data, size_t len);
int ut_is_dir(const char *path);
int ut_is_file(const char *path);
int ut_rmtree(const char *path);
const char *ut_basename(const char *path);
int ut_starts(const char *s, const char *prefix);
int ut_ends(const char *s, const char *suffix);
double ut_now(void);

/* ---- model types ---- */
enum { PT_NONE = 0, PT_PTDS = 1, PT_PTSZ = 2 };
enum { KIND_UNKNOWN = 0, KIND_SCALAR, KIND_ENUM, KIND_HANDLE, KIND_POINTER, KIND_STRING,
       KIND_STRUCT, KIND_CALLBACK, KIND_DEVPTR };
enum { DIR_UNKNOWN = 0, DIR_IN = 1, DIR_OUT = 2, DIR_INOUT = 3 };
enum { RET_OTHER = 3 };   /* CUSHIM_RET_OTHER; a library's status kind comes from its descriptor */
enum { SRC_NONE = 0, SRC_TYPE, SRC_DOC, SRC_OVERLAY };

typedef struct cg_param {
    char *name;        /* as declared, argN when unnamed                  */
    char *type;        /* normalised type as written (field type)         */
    char *canon;       /* normalised canonical type                       */
    char *fnty;        /* generated typedef name for a raw function pointer */
    char *fnty_def;    /* ... and its definition                          */
    int kind, dir, dir_src;
    int elem_known;    /* pointer to a complete non-void, non-function type */
    int pointee_const; /* pointee is const-qualified                       */
    int pointee_class; /* kind of the pointee (KIND_*), 0 if not a pointer */
    int ptr_like;      /* data pointer: the only kind a direction applies to */
    int count_param;   /* index, -1 if none                                */
    unsigned fixed_count;
    char *doc;         /* description from the doc comment, or NULL       */
    int doc_dir;       /* marker [in]/[out]/[in,out], DIR_UNKNOWN if none  */
    /* type metadata (types_emit.c) */
    char *enum_usr;    /* USR of the enum of the value or pointee, or NULL */
    char *record_usr;  /* USR of the struct of the value or pointee, or NULL */
    int count_indirect; /* count_param points to the count               */
} cg_param;

typedef struct cg_role cg_role;   /* roles.c */

typedef struct cg_api {
    char *name;
    char *base;
    unsigned abi_version;
    int per_thread;
    int library;
    char *ret_type;
    int ret_kind;
    int ret_void;
    int deprecated;
    unsigned cats;
    char *header;      /* basename */
    unsigned line;
    int nparams;
    cg_param *params;
    unsigned id;
    int order;         /* header appearance order */
    cg_role *role;     /* allocation role (roles.c), NULL if none */
} cg_api;

typedef struct cg_pfn {
    char *base;
    unsigned version;
    int per_thread;
    char *file;        /* basename */
    unsigned line;
    char *exported;    /* derived export name */
    int present;       /* exported name is among the parsed APIs */
} cg_pfn;

/* One enumerator of CUresult or cudaError_t (cushim_results.inc). */
typedef struct cg_result {
    char *name;
    long long value;
    int kind;          /* the ret kind of its library's status type */
} cg_result;

/* ---- library descriptors (libdesc.c; docs/generator.md) ---- */
#define LD_MAX 16
#define CG_MAX_LIBS 8
typedef struct cg_lib_header {
    char *name;
    int required;
    char *prereq;      /* a system header it uses but does not include */
} cg_lib_header;

typedef struct cg_lib {
    char *name;                 /* "driver": apis.tsv, selectors, file names */
    char *sdk;                  /* "CUSHIM_LIB_DRIVER" ...                   */
    int value;                  /* ... and its value                         */
    char *sonames[LD_MAX];
    int nsonames;
    cg_lib_header headers[LD_MAX];   /* in include order */
    int nheaders;
    char *typedefs[LD_MAX];     /* PFN_<base>_v<N> headers (entry lookups) */
    int ntypedefs;
    char *defines[LD_MAX];      /* macros of the parse (and cushim_cuda_headers.h) */
    int ndefines;
    int legacy_pass;            /* a second parse without the defines ... */
    char *legacy_defines[LD_MAX];   /* ... but with these */
    int nlegacy_defines;
    char *prefixes[LD_MAX];
    int nprefixes;
    char *status_type, *status_enum;   /* "CUresult", "cudaError_enum" */
    char *ret_kind_name;        /* "CUSHIM_RET_CURESULT" */
    int ret_kind;
    char *success, *fail, *fail_init;
    char *entry;                /* the library's own entry-point lookup */
    char *overlay;              /* its own overlay file, relative to the descriptor */
    int separate;               /* own cushim_<name>_params.h (headers outside cushim_cuda_headers.h) */
    int opt_in;                 /* interposed only when CUSHIM_LIBS names it */
    char *version_macro, *version_header;
    int strip_v, strip_64, pt_suffixes;
    struct { char *path, *extra_note; } reports[LD_MAX];
    int nreports;
    struct { char *prefix, *reason; } skips[LD_MAX];
    int nskips;
} cg_lib;

typedef struct cg_model {
    cg_lib libs[CG_MAX_LIBS];  /* in the order given: include and id order */
    int nlibs;
    char *voids[64];           /* void functions left out (parse.c) */
    int nvoids;
    cg_api *apis;      /* sorted by id after md_finish */
    int napis, capis;
    cg_pfn *pfns;      /* sorted: base, legacy first, version */
    int npfns, cpfns;
    unsigned cuda_version;     /* CUDA_VERSION of cuda.h */
    char *headers[CG_MAX_LIBS * LD_MAX];   /* headers present, in include order */
    int header_lib[CG_MAX_LIBS * LD_MAX];  /* ... and the index of their library */
    int nheaders;
    int unclassified;          /* params with kind or dir unknown */
    cg_result *results;        /* header order within each kind */
    int nresults, cresults;
    struct te_types *types;    /* type metadata (types_emit.c) */
} cg_model;

/* ---- libdesc.c ---- */
int ld_load(cg_model *m, const char *dir, const char *name);
const cg_lib *ld_by_value(const cg_model *m, int value);
int ld_index(const cg_model *m, int value);
const char *ld_retkind_name(const cg_model *m, int kind);
void ld_free(cg_lib *l);
int ld_define_first(const cg_model *m, int l, int i);
int ld_check_results(const cg_model *m);
int ld_status_shared(const cg_model *m, int l);

/* ---- typedefs.c ---- */
int pfn_scan_file(cg_model *m, const char *path);

/* ---- parse.c ---- */
typedef struct ov_overlay ov_overlay;
typedef struct ps_options {
    const char *include_dir;
    const char *extra_include[4];   /* --include: headers of libraries outside the toolkit */
    int nextra;
    int verbose;
    const ov_overlay *overlay;  /* its 'struct' entries: the structs described */
} ps_options;
int ps_parse(cg_model *m, const ps_options *o);
const char *ps_prereq(const char *header);
void ps_put_define(ut_buf *b, const char *define);

/* ---- overlay.c ---- */
typedef struct ov_entry ov_entry;
struct ov_overlay {
    ov_entry *e;
    int n, cap;
    char *path;
};
int ov_load(ov_overlay *ov, const char *path);
int ov_apply(const ov_overlay *ov, cg_model *m);
void ov_free(ov_overlay *ov);
/* The i-th 'struct' entry's type name if it applies to 'cuda_version', else NULL; n = count. */
int ov_struct_count(const ov_overlay *ov);
const char *ov_struct_at(const ov_overlay *ov, int i, unsigned cuda_version, unsigned *line);

/* ---- model.c ---- */
int md_add_api(cg_model *m, cg_api *a);
cg_api *md_find(const cg_model *m, const char *name);
int md_variants(cg_model *m);
void md_classify(cg_model *m);
void md_categories(cg_model *m);
void md_count_unclassified(cg_model *m, int print);
void md_sort_by_id(cg_model *m);
void md_free(cg_model *m);

/* ---- ids.c ---- */
int id_assign(cg_model *m, const char *ids_path, int may_write);
int id_commit(void);

/* ---- emit.c ---- */
int em_write_tree(const cg_model *m, const char *dir);
int em_verify(const cg_model *m, const char *dir);
int em_generate(const cg_model *m, const char *out);

/* ---- types_emit.c ---- */
void te_indirect_counts(cg_model *m);
void te_report(const cg_model *m);
void te_free(cg_model *m);         /* before md_free */
void te_emit_types(ut_buf *b, const cg_model *m);            /* before the parameter arrays */
void te_emit_param_tail(ut_buf *b, const cg_model *m, const cg_param *p);
void te_emit_lookup(ut_buf *b, const cg_model *m);           /* after the API table */
void te_emit_check(ut_buf *b, const cg_model *m);            /* cushim_types_check.h */
/* ---- roles.c ---- */
int rl_parse(const char *path, char **tok, int n, unsigned line);
int rl_apply(cg_model *m);
void rl_emit(ut_buf *b, const cg_model *m);
int rl_check(const cg_model *m);
void rl_free(void);
void rl_free_roles(cg_model *m);   /* before md_free */

/* ---- report.c ---- */
int rp_report(const cg_model *m, const char *cuda_root);

#endif
