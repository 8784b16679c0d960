/*
 * host.c - the host table (struct cushim_host of the SDK ABI): the one way
 * plugins, and programs configuring the shim in-process, reach it.
 *
 * One static const instance, handed to every plugin's init and returned by
 * the one exported SDK function, cushim_host_get(). Each slot is a thin
 * adapter onto the module that owns the state (hooks.c, thread.c, plugins.c,
 * select.c, ...); slots are named hs_<slot> so no function pointer handed to a
 * plugin shares a name with an exported symbol.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "base.h"
#include "clock.h"
#include "config.h"
#include "dispatch.h"
#include "env.h"
#include "hooks.h"
#include "host.h"
#include "invoke.h"
#include "lifecycle.h"
#include "log.h"
#include "options.h"
#include "optvalue.h"
#include "plugins.h"
#include "roles.h"
#include "select.h"
#include "slots.h"
#include "thread.h"
#include "types.h"

#ifndef CUSHIM_VERSION_STRING
#define CUSHIM_VERSION_STRING "0.0.0"
#endif

static const char *hs_version(void)
{
#define HS_STR_(x) #x
#define HS_STR(x) HS_STR_(x)
    return "cushim " CUSHIM_VERSION_STRING ", CUDA " CUSHIM_GEN_CUDA_VERSION_STRING " headers, SDK ABI " HS_STR(
        CUSHIM_ABI_MAJOR) "." HS_STR(CUSHIM_ABI_MINOR);
}

static uint32_t hs_api_count(void)
{
    return cushim_gen_api_count;
}

/* Index order is id order: the generated array is sorted by id. */
static const cushim_api_info *hs_api_at(uint32_t index)
{
    return index < cushim_gen_api_count ? &cushim_gen_apis[index] : NULL;
}

static uint32_t hs_api_id_limit(void)
{
    return CUSHIM_API_ID_LIMIT;
}

static const cushim_api_info *hs_api_by_id(uint32_t api_id)
{
    return api_info(api_id);
}

static const cushim_api_info *hs_api_by_name(const char *name)
{
    return api_by_name(name);
}

/* By the host's stride (sizeof_param_info), never a plugin's. */
static const cushim_param_info *hs_api_param(const cushim_api_info *api, uint32_t index)
{
    if (api == NULL || index >= api->nparams || api->params == NULL)
        return NULL;
    return &api->params[index];
}

static int hs_api_match(const char *selector, uint32_t api_id)
{
    return sel_match(selector, api_id);
}

static int hs_api_select(const char *selector, uint32_t *ids, uint32_t cap, char *err, size_t errlen)
{
    return sel_select(selector, ids, ids != NULL ? cap : 0, err, errlen);
}

/* Every CUresult and cudaError_t enumerator of the generated tree, driver's
   first, each in header order (cushim_results.inc). A linear scan: a few
   hundred entries, read when plugins resolve names or log, never per call. */
static const struct hs_result {
    uint32_t kind;
    int32_t code;
    const char *name;
} hs_results[] = {
#define CUSHIM_RESULT(KIND, VALUE, NAME) { .kind = (KIND), .code = (int32_t)(VALUE), .name = (NAME) },
#include "cushim_results.inc"
#undef CUSHIM_RESULT
};

/* An alias (two names, one value) answers with the name the header gives first. */
static const char *hs_result_name(uint32_t ret_kind, int32_t code)
{
    for (size_t i = 0; i < sizeof hs_results / sizeof hs_results[0]; i++)
        if (hs_results[i].kind == ret_kind && hs_results[i].code == code)
            return hs_results[i].name;
    return NULL;
}

static int hs_result_by_name(const char *name, uint32_t *ret_kind, int32_t *code)
{
    for (size_t i = 0; name != NULL && i < sizeof hs_results / sizeof hs_results[0]; i++)
        if (strcmp(hs_results[i].name, name) == 0) {
            if (ret_kind != NULL)
                *ret_kind = hs_results[i].kind;
            if (code != NULL)
                *code = hs_results[i].code;
            return CUSHIM_OK;
        }
    return CUSHIM_ENOENT;
}

static int hs_hooks_add(cushim_plugin *self, const cushim_hook_spec *spec, uint64_t *group)
{
    return hk_add(pl_valid(self) ? &self->hooks : NULL, spec, group);
}

static int hs_hooks_remove(cushim_plugin *self, uint64_t group)
{
    return hk_remove(pl_valid(self) ? &self->hooks : NULL, group);
}

static int hs_hooks_sync(void)
{
    return hk_sync();
}

/* The function calls are forwarded to: never a hook, never counted. For the
   cuGetProcAddress family it is the handler that maps returned pointers to
   our wrappers (getproc.c), so pointers obtained through it stay interposed. */
static void *hs_real(uint32_t api_id)
{
    const cushim_api_info *info = api_info(api_id);
    if (info == NULL)
        return NULL;
    void *r = rt_resolve(api_id);
    /* cuGetProcAddress(_v2) with no driver function (no libcuda on this machine: the remoting's client): their
       handler, which then answers from the shim's own table (getproc.c, gp_own), so that a plugin serving the
       calls can hand out the shim's functions */
    if (r == NULL && info->library == CUSHIM_LIB_DRIVER)
        r = sl_handler(api_id);
    return r;
}

static uint64_t hs_thread_id(void)
{
    return th_tid();
}

RT_HOT_FN static uint64_t hs_now_ns(void)   /* on every recorded call of the trace plugin: with the call path (rt_internal.h) */
{
    return clk_now_ns();
}

static const cushim_call *hs_current_call(void)
{
    return rt_current_call();
}

static int hs_tls_create(cushim_plugin *self, void (*destructor)(void *), uint32_t *key)
{
    if (!pl_valid(self))
        return CUSHIM_EINVAL;
    return th_tls_create(self, destructor, key);
}

static void *hs_tls_get(uint32_t key)
{
    return th_tls_get(key);
}

static int hs_tls_set(uint32_t key, void *value)
{
    return th_tls_set(key, value);
}

static void hs_log(cushim_plugin *self, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void hs_log(cushim_plugin *self, int level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pl_vlog(self, level, fmt, ap);
    va_end(ap);
}

static int hs_log_enabled(int level)
{
    return level >= CUSHIM_LOG_DEBUG && level <= CUSHIM_LOG_ERROR && level >= log_level();
}

/* The option 'name' of 'self' if declared with a type in 'types' (bit per type). */
static const op_set *hs_opt(cushim_plugin *self, const char *name, unsigned types, uint32_t *index)
{
    if (!pl_valid(self)) {
        log_warn("host->opt_*: not a plugin record");
        return NULL;
    }
    const cushim_option *o = op_decl(&self->opts, name, index);
    if (o == NULL) {
        pl_log(self, LOG_WARN, "option '%s' is not declared", name ? name : "(null)");
        return NULL;
    }
    if (!(types & (1u << (o->type & CUSHIM_OPT_TYPE_MASK)))) {
        pl_log(self, LOG_WARN, "option '%s' is read as another type than declared", name);
        return NULL;
    }
    return &self->opts;
}

#define HS_ANY 0xffffffffu
#define HS_T(t) (1u << (t))

/* The text of option 'name' (given, else its default) when its type is one of
   'types'; NULL otherwise. 'type' gets the declared type. */
static const char *hs_opt_text(cushim_plugin *self, const char *name, uint32_t types, uint32_t *type)
{
    uint32_t i;
    const op_set *s = hs_opt(self, name, types, &i);
    if (s == NULL)
        return NULL;
    if (type != NULL)
        *type = s->decl[i].type & CUSHIM_OPT_TYPE_MASK;
    return op_text(s, i, 0);
}

static const char *hs_opt_string(cushim_plugin *self, const char *name)
{
    return hs_opt_text(self, name, HS_ANY, NULL);
}

static int64_t hs_opt_int(cushim_plugin *self, const char *name)
{
    int64_t v = 0;
    const char *t = hs_opt_text(self, name, HS_T(CUSHIM_OPT_INT), NULL);
    return t != NULL && op_parse_int(t, &v) == 0 ? v : 0;
}

static int hs_opt_bool(cushim_plugin *self, const char *name)
{
    int v = 0;
    const char *t = hs_opt_text(self, name, HS_T(CUSHIM_OPT_BOOL), NULL);
    return t != NULL && op_parse_bool(t, &v) == 0 ? v : 0;
}

static double hs_opt_double(cushim_plugin *self, const char *name)
{
    uint32_t type = 0;
    double v = 0;
    int64_t iv;
    const char *t = hs_opt_text(self, name, HS_T(CUSHIM_OPT_DOUBLE) | HS_T(CUSHIM_OPT_INT), &type);
    if (t == NULL)
        return 0;
    if (type == CUSHIM_OPT_INT)
        return op_parse_int(t, &iv) == 0 ? (double)iv : 0;
    return op_parse_double(t, &v) == 0 ? v : 0;
}

static uint64_t hs_opt_bytes(cushim_plugin *self, const char *name)
{
    uint64_t v = 0;
    const char *t = hs_opt_text(self, name, HS_T(CUSHIM_OPT_BYTES), NULL);
    return t != NULL && op_parse_bytes(t, &v) == 0 ? v : 0;
}

static uint32_t hs_opt_count(cushim_plugin *self, const char *name)
{
    uint32_t i;
    const op_set *s = hs_opt(self, name, HS_ANY, &i);
    return s ? op_count(s, i) : 0;
}

static const char *hs_opt_string_at(cushim_plugin *self, const char *name, uint32_t index)
{
    uint32_t i;
    const op_set *s = hs_opt(self, name, HS_ANY, &i);
    return s && index < op_count(s, i) ? op_text(s, i, index) : NULL;
}

static int hs_opt_given(cushim_plugin *self, const char *name)
{
    uint32_t i;
    const op_set *s = hs_opt(self, name, HS_ANY, &i);
    return s ? op_count(s, i) > 0 : 0;
}

static int hs_secure(void)
{
    return env_secure();
}

static const char *hs_env(const char *name)
{
    return name != NULL ? getenv(name) : NULL;
}

/* NULL in secure-execution mode, with one line per variable (config.c). */
static const char *hs_env_path(const char *name)
{
    return name != NULL ? cfg_env_path(name) : NULL;
}

static const char *hs_plugin_name(const cushim_plugin *self)
{
    return pl_valid(self) ? self->name : NULL;
}

static void hs_plugin_set_data(cushim_plugin *self, void *data)
{
    pl_set_data(self, data);
}

static void *hs_plugin_data(const cushim_plugin *self)
{
    return pl_valid(self) ? self->data : NULL;
}

static int hs_plugin_register(const cushim_plugin_def *def, const char *options, cushim_plugin **self,
                              char *err, size_t errlen)
{
    return pl_register(&hs_host, def, options, self, err, errlen);
}

/* Type metadata (types.c). */
static const cushim_enum_info *hs_enum_by_name(const char *type_name)
{
    return types_enum_by_name(type_name);
}

static const char *hs_enum_value_name(const cushim_enum_info *e, int64_t value)
{
    return types_enum_value_name(e, value);
}

static int hs_enum_constant(const char *constant_name, int64_t *value, const cushim_enum_info **type)
{
    return types_enum_constant(constant_name, value, type);
}

static const cushim_struct_info *hs_struct_by_name(const char *type_name)
{
    return types_struct_by_name(type_name);
}

/* The arrays' elements have this build's layout, the one every plugin of this major reads today (1.0 and 1.1
   elements are the same size): when a later minor appends to them, the host hands 1.0 plugins copies of the 1.0
   layout and these accessors stay the way for everyone else. */
static const cushim_field_info *hs_struct_field(const cushim_struct_info *s, uint32_t index)
{
    return s != NULL && index < s->nfields ? &s->fields[index] : NULL;
}

static const cushim_enum_value *hs_enum_value_at(const cushim_enum_info *e, uint32_t index)
{
    return e != NULL && index < e->nvalues ? &e->values[index] : NULL;
}

const cushim_host hs_host = {
    .size = sizeof(cushim_host),
    .abi_version = CUSHIM_ABI_VERSION,
    .sizeof_call = sizeof(cushim_call),
    .sizeof_api_info = sizeof(cushim_api_info),
    .sizeof_param_info = sizeof(cushim_param_info),
    .cuda_version = CUSHIM_GEN_CUDA_VERSION,
    .version = hs_version,
    .api_count = hs_api_count,
    .api_at = hs_api_at,
    .api_id_limit = hs_api_id_limit,
    .api_by_id = hs_api_by_id,
    .api_by_name = hs_api_by_name,
    .api_param = hs_api_param,
    .api_match = hs_api_match,
    .api_select = hs_api_select,
    .result_name = hs_result_name,
    .result_by_name = hs_result_by_name,
    .hooks_add = hs_hooks_add,
    .hooks_remove = hs_hooks_remove,
    .hooks_sync = hs_hooks_sync,
    .real = hs_real,
    .thread_id = hs_thread_id,
    .now_ns = hs_now_ns,
    .current_call = hs_current_call,
    .tls_create = hs_tls_create,
    .tls_get = hs_tls_get,
    .tls_set = hs_tls_set,
    .log = hs_log,
    .log_enabled = hs_log_enabled,
    .opt_string = hs_opt_string,
    .opt_int = hs_opt_int,
    .opt_bool = hs_opt_bool,
    .opt_double = hs_opt_double,
    .opt_bytes = hs_opt_bytes,
    .opt_count = hs_opt_count,
    .opt_string_at = hs_opt_string_at,
    .opt_given = hs_opt_given,
    .env = hs_env,
    .env_path = hs_env_path,
    .secure = hs_secure,
    .plugin_name = hs_plugin_name,
    .plugin_set_data = hs_plugin_set_data,
    .plugin_data = hs_plugin_data,
    .plugin_register = hs_plugin_register,
    /* type metadata */
    .enum_by_name = hs_enum_by_name,
    .enum_value_name = hs_enum_value_name,
    .enum_constant = hs_enum_constant,
    .struct_by_name = hs_struct_by_name,
    /* lua */
    .call_real = rt_call_real,

    .alloc_role = rt_alloc_role,
    /* 1.1 */
    .struct_field = hs_struct_field,
    .enum_value_at = hs_enum_value_at,
    /* 1.2 */
    .call = rt_call_hooked,
};

CUSHIM_EXPORT const cushim_host *cushim_host_get(uint32_t abi_version)
{
    if (CUSHIM_ABI_MAJOR_OF(abi_version) != CUSHIM_ABI_MAJOR || CUSHIM_ABI_MINOR_OF(abi_version) > CUSHIM_ABI_MINOR)
        return NULL;
    rt_init();
    return &hs_host;
}
