/*
 * layout.c - where this copy of the launcher looks for the files it uses, relative to its own directory (or
 * absolute). Compiled once for each copy (tools/CMakeLists.txt): the build tree's copy keeps the GNU defaults
 * and looks for a build in the tree it sits in (<build>/tools/cushim); the installed copy (bin/cushim) gets the
 * install layout relative to bin/, so an installed tree can be moved.
 */
#include "launcher.h"

#ifndef LN_INST_LIB
#define LN_INST_LIB "../lib"
#endif
#ifndef LN_INST_LIBEXEC
#define LN_INST_LIBEXEC "../libexec"
#endif
#ifndef LN_INST_DATA
#define LN_INST_DATA "../share"
#endif
#ifndef LN_DEFAULT_BUILD
#define LN_DEFAULT_BUILD ".."   /* the build tree's copy is <build>/tools/cushim */
#endif

const char ln_inst_lib[] = LN_INST_LIB;
const char ln_inst_libexec[] = LN_INST_LIBEXEC;
const char ln_inst_data[] = LN_INST_DATA;
const char ln_default_build[] = LN_DEFAULT_BUILD;
