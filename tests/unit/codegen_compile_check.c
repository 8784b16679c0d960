/*
 * codegen_compile_check.c - compile check of a generated tree: every
 * X-macro line becomes a forwarding wrapper 'RET NAME PROTO' that must
 * match the header declaration exactly, an invoker that unpacks the params
 * struct, and the procaddr table must name existing ids. Built with
 * -Wall -Wextra -Werror against generated/cuda-<X.Y> and that version's
 * headers (tests/unit/codegen.cmake).
 */
#include <stddef.h>
#include <stdint.h>

#include "cushim_params.h"
#include "cushim_api_ids.h"
#include "cushim/cushim_meta.h"

#define CUSHIM_API(ID, NAME, RET, RETKIND, PROTO, ARGS, UNPACK)                   \
    static RET(*check_real_##NAME) PROTO;                                         \
    RET NAME PROTO                                                                \
    {                                                                             \
        return check_real_##NAME ARGS;                                            \
    }                                                                             \
    static RET check_invoke_##NAME(cushim_params_##NAME *p)                       \
    {                                                                             \
        (void)p;                                                                  \
        return check_real_##NAME UNPACK;                                          \
    }                                                                             \
    static const int check_kind_##NAME = RETKIND + 0 * (ID);
#include "cushim_driver_apis.inc"
#include "cushim_runtime_apis.inc"
#undef CUSHIM_API

enum { CUSHIM_PA_LEGACY = 0, CUSHIM_PA_PER_THREAD = 1 };
struct check_pa {
    const char *base;
    int flag;
    int version;
    int id;
};
#define CUSHIM_PROCADDR(BASE, FLAG, VER, ID) {BASE, FLAG, VER, ID},
const struct check_pa check_pa_table[] = {
#include "cushim_procaddr.inc"
};

/* Keep the static helpers referenced. */
#define CUSHIM_API(ID, NAME, RET, RETKIND, PROTO, ARGS, UNPACK) \
    (void *)check_invoke_##NAME, (void *)&check_kind_##NAME,
void *const check_refs[] = {
#include "cushim_driver_apis.inc"
#include "cushim_runtime_apis.inc"
};
#undef CUSHIM_API

extern const cushim_api_info cushim_gen_apis[];
extern const uint32_t cushim_gen_api_count;

int main(void)
{
    return cushim_gen_api_count == 0 || cushim_gen_apis[0].id == 0;
}
