/*
 * rm_jit.c - JIT and library options over the wire (docs/remote.md, "JIT options"): what each option's value
 * is, from cuda.h's documentation of CUjit_option and CUlibraryOption, and which APIs carry option arrays.
 *
 * An option's value is its slot in 'optionValues' (a void *): an unsigned int, int or enum cast to void *, a
 * value the callee writes back into the slot (a log's size: what it filled; the wall time, a float), or a
 * char * log buffer whose size is the value of a companion option. Every option the tree's enum names has a
 * row: carried exactly by its kind, or refused (CUDA_ERROR_NOT_SUPPORTED, its name and the reason logged).
 * An option this table does not name (a newer driver's) is refused too.
 */
#include <fnmatch.h>
#include <stddef.h>
#include <string.h>

#include "rm_plan.h"

#define RM_JIT_HOSTPTRS "an array of host pointers of the client's process (symbol names, addresses)"

static const rm_jit_opt rm_jit_options[] = {
    { "CU_JIT_MAX_REGISTERS", RM_JIT_VALUE, NULL, NULL },                      /* unsigned int               */
    { "CU_JIT_THREADS_PER_BLOCK", RM_JIT_INOUT, NULL, NULL },                  /* unsigned int, in and out   */
    { "CU_JIT_WALL_TIME", RM_JIT_INOUT, NULL, NULL },                          /* float, overwritten         */
    { "CU_JIT_INFO_LOG_BUFFER", RM_JIT_LOG, "CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES", NULL },   /* char *          */
    { "CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES", RM_JIT_INOUT, NULL, NULL },         /* in: size, out: filled      */
    { "CU_JIT_ERROR_LOG_BUFFER", RM_JIT_LOG, "CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES", NULL }, /* char *          */
    { "CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES", RM_JIT_INOUT, NULL, NULL },        /* in: size, out: filled      */
    { "CU_JIT_OPTIMIZATION_LEVEL", RM_JIT_VALUE, NULL, NULL },                 /* unsigned int               */
    { "CU_JIT_TARGET_FROM_CUCONTEXT", RM_JIT_VALUE, NULL, NULL },              /* no value: the slot as given */
    { "CU_JIT_TARGET", RM_JIT_VALUE, NULL, NULL },                             /* CUjit_target               */
    { "CU_JIT_FALLBACK_STRATEGY", RM_JIT_VALUE, NULL, NULL },                  /* CUjit_fallback             */
    { "CU_JIT_GENERATE_DEBUG_INFO", RM_JIT_VALUE, NULL, NULL },                /* int                        */
    { "CU_JIT_LOG_VERBOSE", RM_JIT_VALUE, NULL, NULL },                        /* int                        */
    { "CU_JIT_GENERATE_LINE_INFO", RM_JIT_VALUE, NULL, NULL },                 /* int                        */
    { "CU_JIT_CACHE_MODE", RM_JIT_VALUE, NULL, NULL },                         /* CUjit_cacheMode            */
    { "CU_JIT_NEW_SM3X_OPT", RM_JIT_VALUE, NULL, NULL },                       /* deprecated: a value        */
    { "CU_JIT_FAST_COMPILE", 0, NULL, "for NVIDIA's internal use: its value's type is not documented" },
    { "CU_JIT_GLOBAL_SYMBOL_NAMES", 0, NULL, RM_JIT_HOSTPTRS },                /* const char **              */
    { "CU_JIT_GLOBAL_SYMBOL_ADDRESSES", 0, NULL, RM_JIT_HOSTPTRS },            /* void ** (host addresses)   */
    { "CU_JIT_GLOBAL_SYMBOL_COUNT", RM_JIT_VALUE, NULL, NULL },                /* unsigned int               */
    { "CU_JIT_LTO", RM_JIT_VALUE, NULL, NULL },                                /* int (deprecated)           */
    { "CU_JIT_FTZ", RM_JIT_VALUE, NULL, NULL },                                /* int (deprecated)           */
    { "CU_JIT_PREC_DIV", RM_JIT_VALUE, NULL, NULL },                           /* int (deprecated)           */
    { "CU_JIT_PREC_SQRT", RM_JIT_VALUE, NULL, NULL },                          /* int (deprecated)           */
    { "CU_JIT_FMA", RM_JIT_VALUE, NULL, NULL },                                /* int (deprecated)           */
    { "CU_JIT_REFERENCED_KERNEL_NAMES", 0, NULL, RM_JIT_HOSTPTRS },            /* const char ** (deprecated) */
    { "CU_JIT_REFERENCED_KERNEL_COUNT", RM_JIT_VALUE, NULL, NULL },            /* unsigned int               */
    { "CU_JIT_REFERENCED_VARIABLE_NAMES", 0, NULL, RM_JIT_HOSTPTRS },          /* const char ** (deprecated) */
    { "CU_JIT_REFERENCED_VARIABLE_COUNT", RM_JIT_VALUE, NULL, NULL },          /* unsigned int               */
    { "CU_JIT_OPTIMIZE_UNUSED_DEVICE_VARIABLES", RM_JIT_VALUE, NULL, NULL },   /* int (deprecated)           */
    { "CU_JIT_POSITION_INDEPENDENT_CODE", RM_JIT_VALUE, NULL, NULL },          /* int (ignored)              */
    { "CU_JIT_MIN_CTA_PER_SM", RM_JIT_VALUE, NULL, NULL },                     /* unsigned int               */
    { "CU_JIT_MAX_THREADS_PER_BLOCK", RM_JIT_VALUE, NULL, NULL },              /* int                        */
    { "CU_JIT_OVERRIDE_DIRECTIVE_VALUES", RM_JIT_VALUE, NULL, NULL },          /* int                        */
    { "CU_JIT_SPLIT_COMPILE", RM_JIT_VALUE, NULL, NULL },                      /* unsigned int (13.x)        */
    { "CU_JIT_BINARY_LOADER_THREAD_COUNT", RM_JIT_VALUE, NULL, NULL },         /* unsigned int (13.x)        */
};

static const rm_jit_opt rm_library_options[] = {
    { "CU_LIBRARY_HOST_UNIVERSAL_FUNCTION_AND_DATA_TABLE", 0, NULL,
      "a table of host function and data addresses of the client's process" },
    { "CU_LIBRARY_BINARY_IS_PRESERVED", RM_JIT_ZERO, NULL, NULL },
};

static const rm_jit_table rm_jit_tables[] = {
    { "CUjit_option", rm_jit_options, sizeof rm_jit_options / sizeof rm_jit_options[0] },
    { "CUlibraryOption", rm_library_options, sizeof rm_library_options / sizeof rm_library_options[0] },
};

/* The APIs that take option arrays. cuLinkCreate keeps its values until cuLinkDestroy (its logs, sizes and wall
   time accumulate over the link's calls): only values going in are carried there. cuLinkAddFile and
   cuLibraryLoadFromFile are answered in the client as cuLinkAddData and cuLibraryLoadData of the file's bytes
   (plugins/remote/rp_jit.c). */
static const rm_jitopts rm_jitopts_rows[] = {
    { "cuModuleLoadDataEx", "optionValues", "options", 0 },
    { "cuLinkCreate*", "optionValues", "options", 1 },
    { "cuLinkAddData*", "optionValues", "options", 0 },
    { "cuLinkAddFile*", "optionValues", "options", 0 },
    { "cuLibraryLoadData", "jitOptionsValues", "jitOptions", 0 },
    { "cuLibraryLoadData", "libraryOptionValues", "libraryOptions", 0 },
    { "cuLibraryLoadFromFile", "jitOptionsValues", "jitOptions", 0 },
    { "cuLibraryLoadFromFile", "libraryOptionValues", "libraryOptions", 0 },
};

const rm_jitopts *rm_jitopts_find(const char *api, const char *values)
{
    for (size_t i = 0; i < sizeof rm_jitopts_rows / sizeof rm_jitopts_rows[0]; i++)
        if (fnmatch(rm_jitopts_rows[i].glob, api, 0) == 0 && strcmp(rm_jitopts_rows[i].values, values) == 0)
            return &rm_jitopts_rows[i];
    return NULL;
}

const rm_jit_table *rm_jit_table_find(const char *enum_name)
{
    for (size_t i = 0; enum_name != NULL && i < sizeof rm_jit_tables / sizeof rm_jit_tables[0]; i++)
        if (strcmp(rm_jit_tables[i].enum_name, enum_name) == 0)
            return &rm_jit_tables[i];
    return NULL;
}

const rm_jit_opt *rm_jit_opt_of(const rm_pplan *pp, int64_t value)
{
    const rm_jit_table *t = pp->jit;
    const cushim_enum_info *e = pp->attr_enum;
    for (uint32_t k = 0; t != NULL && e != NULL && k < e->nvalues; k++) {
        if (e->values[k].value != value)
            continue;
        for (uint32_t j = 0; j < t->n; j++)
            if (strcmp(t->rows[j].name, e->values[k].name) == 0)
                return &t->rows[j];
    }
    return NULL;
}

int rm_jit_value_of(const rm_pplan *pp, const char *name, int32_t *value)
{
    const cushim_enum_info *e = pp->attr_enum;
    for (uint32_t k = 0; e != NULL && name != NULL && k < e->nvalues; k++)
        if (strcmp(e->values[k].name, name) == 0) {
            *value = (int32_t)e->values[k].value;
            return 1;
        }
    return 0;
}

uint32_t rm_jit_hash(const rm_jit_table *t, const cushim_enum_info *e)
{
    uint32_t h = 2166136261u;
    for (uint32_t k = 0; t != NULL && e != NULL && k < e->nvalues; k++)
        for (uint32_t j = 0; j < t->n; j++)
            if (strcmp(t->rows[j].name, e->values[k].name) == 0) {
                uint32_t w[2] = { (uint32_t)e->values[k].value, t->rows[j].kind };
                for (size_t b = 0; b < sizeof w; b++)
                    h = (h ^ ((const uint8_t *)w)[b]) * 16777619u;
            }
    return h;
}
