/*
 * rt_test_host.h - what the runtime's whitebox tests share: the host table,
 * a test plugin registered in-process, and one-API hook registration.
 *
 * The tests link the runtime's objects (cushim_rt), so cushim_host_get is an
 * ordinary function here; plugins of the tests are registered with
 * host->plugin_register, as a program configuring the shim in-process would.
 */
#ifndef RT_TEST_HOST_H
#define RT_TEST_HOST_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cushim/cushim.h"

const cushim_host *cushim_host_get(uint32_t abi_version);

static inline const cushim_host *rt_host(void)
{
    return cushim_host_get(CUSHIM_ABI_VERSION);
}

/* A plugin without callbacks, named 'name' (static storage: up to 8 per test). */
static inline cushim_plugin *rt_test_plugin(const char *name)
{
    static cushim_plugin_def defs[8];
    static char names[8][32];
    static int n;
    if (n >= 8)
        return NULL;
    snprintf(names[n], sizeof names[n], "%s", name);
    defs[n] = (cushim_plugin_def){ .size = sizeof(cushim_plugin_def), .abi_version = CUSHIM_ABI_VERSION,
                                   .name = names[n], .version = "test" };
    cushim_plugin *p = NULL;
    char err[256] = "";
    if (rt_host()->plugin_register(&defs[n], NULL, &p, err, sizeof err) != CUSHIM_OK)
        fprintf(stderr, "rt_test_plugin(%s): %s\n", name, err);
    n++;
    return p;
}

/* One hook on one API, by id (the old cushim_hook_add shape). */
static inline int rt_hook(cushim_plugin *p, uint32_t api_id, int priority, cushim_pre_fn pre, cushim_post_fn post,
                          void *user, uint64_t *group)
{
    cushim_hook_spec spec = { .size = sizeof spec, .api_id = api_id, .priority = priority, .pre = pre,
                              .post = post, .user = user };
    return rt_host()->hooks_add(p, &spec, group);
}

static inline int rt_hook_sel(cushim_plugin *p, const char *selector, int priority, cushim_pre_fn pre,
                              cushim_post_fn post, void *user, uint64_t *group)
{
    cushim_hook_spec spec = { .size = sizeof spec, .select = selector, .priority = priority, .pre = pre,
                              .post = post, .user = user };
    return rt_host()->hooks_add(p, &spec, group);
}

/* The log file's contents (CUSHIM_LOG_FILE), up to 128 KiB. */
static inline char *rt_test_log_text(void)
{
    static char buf[1 << 17];
    const char *path = getenv("CUSHIM_LOG_FILE");
    FILE *f = path != NULL ? fopen(path, "r") : NULL;
    if (f == NULL)
        return strcpy(buf, "");
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* The SDK ABI this build serves, as the host's messages write it ("1.1"), and the next minor's: tests that
   quote a refusal follow a minor release without edits. */
#define RT_ABI_STR_(x) #x
#define RT_ABI_STR(x) RT_ABI_STR_(x)
#define RT_ABI_NOW RT_ABI_STR(CUSHIM_ABI_MAJOR) "." RT_ABI_STR(CUSHIM_ABI_MINOR)
static inline const char *rt_abi_next(void)
{
    static char s[16];
    snprintf(s, sizeof s, "%u.%u", (unsigned)CUSHIM_ABI_MAJOR, (unsigned)CUSHIM_ABI_MINOR + 1);
    return s;
}

#endif /* RT_TEST_HOST_H */
