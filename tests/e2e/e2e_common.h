/*
 * e2e_common.h - what the end-to-end programs share: checks, and a recorder of the calls the shim sees.
 *
 * The programs run against the fake driver (tests/fake) with libcushim.so
 * preloaded (or as the drop-in libcuda.so.1). They reach the shim only through
 * its host table (cushim_host_get, found with dlsym(RTLD_DEFAULT, ...)),
 * registering themselves as the in-process plugin "e2e", so the same program
 * also runs without the shim: then the hook checks are skipped, unless
 * E2E_EXPECT_SHIM=1 (which ctest sets), in which case a missing shim is a failure.
 *
 * This header includes the generated cushim_params.h, which sees cuda.h with
 * __CUDA_API_VERSION_INTERNAL: the programs call functions by their exported
 * names (cuMemAlloc_v2, cuCtxCreate_v4), which is what a program compiled
 * against plain cuda.h calls too.
 */
#ifndef E2E_COMMON_H
#define E2E_COMMON_H

#include <stdint.h>
#include <stdio.h>

#include "cushim_params.h"
#include "cushim_api_ids.h"
#include "cushim/cushim.h"
#include "fake_cuda.h"   /* FAKE_CUDA_VERSION */

#define E2E_LIB_DRIVER 1u
#define E2E_LIB_RUNTIME 2u

/* Lines of this process in the shim's log (CUSHIM_LOG_FILE, appended to by every run) containing 'needle';
   -1 when there is no such file. */
int e2e_log_lines(const char *needle);

/* Resolve the shim's host table and register "e2e"; 1 if the shim is present. Call first. */
int e2e_init(const char *program);
int e2e_shim(void);
const cushim_host *e2e_host(void);   /* NULL without the shim */
cushim_plugin *e2e_self(void);

/* Record every call of the given libraries (pre and post counts per id, last params and result). */
void e2e_record(unsigned libs);
uint64_t e2e_pre(const char *name);
uint64_t e2e_post(const char *name);
/* Copy of the params struct at the last pre hook of 'name' (single-threaded use), NULL if none. */
const void *e2e_last_params(const char *name);
int e2e_last_result(const char *name);

/* Register a hook (a group of one) by exported name; returns CUSHIM_OK or the shim's error
   (CUSHIM_EINVAL w/o shim). */
int e2e_hook(const char *name, int priority, cushim_pre_fn pre, cushim_post_fn post, void *user,
             uint64_t *handle);
int e2e_unhook(uint64_t handle);
uint32_t e2e_id(const char *name);   /* 0 if unknown or no shim */

/* The fake driver's and runtime's own counts (found however they were loaded). */
uint64_t e2e_fake_count(const char *name);
uint64_t e2e_fake_rt_count(const char *name);
void *e2e_fake_sym(const char *name);

/* 'name' was called exactly n times: by the fake's count, and (with the shim) by the hooks. */
void e2e_expect(const char *name, uint64_t n);
/* Every driver (and/or runtime) API: hooks saw exactly what the fake received. */
void e2e_expect_hooks_match_fake(unsigned libs);

void e2e_fail(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int e2e_failures(void);
/* Print the summary; the exit status for main(). */
int e2e_finish(void);

void e2e_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* E2E_CHECK(cond, "printf format", args...): the message says what was found. */
#define E2E_CHECK(cond, ...)                                                \
    do {                                                                    \
        if (!(cond)) {                                                      \
            e2e_fail(__FILE__, __LINE__, "check '%s' failed", #cond);       \
            e2e_note(__VA_ARGS__);                                          \
        }                                                                   \
    } while (0)

/* A CUDA call that must return 'want'. */
#define E2E_CALL(want, call)                                                                  \
    do {                                                                                      \
        int e2e_r_ = (int)(call);                                                             \
        if (e2e_r_ != (int)(want))                                                            \
            e2e_fail(__FILE__, __LINE__, "%s returned %d, expected %d", #call, e2e_r_, (int)(want)); \
    } while (0)
#define E2E_CU(call) E2E_CALL(0, call)

#endif /* E2E_COMMON_H */
