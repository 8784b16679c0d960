/*
 * cg_clang.h - the parts of cushim-gen that speak libclang types.
 */
#ifndef CUSHIM_CG_CLANG_H
#define CUSHIM_CG_CLANG_H

#include <clang-c/Index.h>

#include "cg.h"

CXType ty_strip(CXType t);
char *ty_spell(CXType t);
char *ty_spell_canon(CXType t);
char *ty_unqual(char *s);
int ty_is_fnptr(CXType t);
int ty_is_raw_fnptr(CXType t);
char *ty_fn_typedef(CXType t, const char *name);
int ty_kind(CXType t);
void ty_pointer_facts(CXType t, cg_param *p);
int ty_tag_anonymous(CXCursor d);
/* types_emit.c: hooks of parse.c while a translation unit is open */
void te_visit(cg_model *m, CXCursor c, const char *include_dir);
void te_param(cg_param *p, CXType t);
int te_structs(cg_model *m, const ps_options *o);

#endif
