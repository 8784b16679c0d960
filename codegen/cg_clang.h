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

#endif
