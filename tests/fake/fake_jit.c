/*
 * fake_jit.c - the fake driver's JIT options (cuModuleLoadDataEx, cuLinkAddData, cuLibraryLoadData), enough for a
 * test to see each kind of option carried both ways, as cuda.h documents CUjit_option:
 *   - an option id this header does not name: CUDA_ERROR_INVALID_VALUE;
 *   - CU_JIT_INFO_LOG_BUFFER: "fake-jit <api>: N options:" and each value as the driver received it ("7=3", the
 *     slot's value as an unsigned int; log buffers by id only), cut at the size CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES
 *     gives, NUL included; that size is overwritten with the bytes written, NUL included;
 *   - CU_JIT_ERROR_LOG_BUFFER: after a failure "fake-jit <api>: line 1: syntax error" the same way; after success
 *     an empty string, its size overwritten with 0;
 *   - CU_JIT_WALL_TIME: the slot overwritten with the float 0.25 (its first 4 bytes);
 *   - CU_JIT_THREADS_PER_BLOCK: overwritten with the value rounded down to a multiple of 32.
 * An image whose text starts with ".error" fails (CUDA_ERROR_INVALID_PTX) after writing the logs.
 * A link (fake_module.c) keeps cuLinkCreate's option values, as the driver does, and writes its logs at each later
 * call: the info log "fake-link: N options" and "+NAME" per input added, " = N bytes" at cuLinkComplete (the wall
 * time 0.5 then), the error log "fake-link: NAME: syntax error" after an input that fails; each at the size given
 * to cuLinkCreate.
 */
#include <stdio.h>
#include <string.h>

#include "fake_internal.h"

static uint32_t fk_slot_u32(void *const *vals, unsigned k)
{
    return (uint32_t)(uintptr_t)vals[k];
}

static int fk_jit_find(unsigned n, const CUjit_option *opts, CUjit_option want)
{
    for (unsigned k = 0; k < n; k++)
        if (opts[k] == want)
            return (int)k;
    return -1;
}

/* The log 'text' into the buffer of option 'buf_opt' of 'size' bytes (0xffffffff: its size option's value), the
   size option overwritten with what was written. */
static void fk_jit_log_sized(unsigned n, const CUjit_option *opts, void **vals, CUjit_option buf_opt,
                             CUjit_option size_opt, const char *text, uint32_t size)
{
    int b = fk_jit_find(n, opts, buf_opt), z = fk_jit_find(n, opts, size_opt);
    if (b < 0 || z < 0 || vals[b] == NULL)
        return;
    if (size == 0xffffffffu)
        size = fk_slot_u32(vals, (unsigned)z);
    uint32_t len = (uint32_t)strlen(text);
    uint32_t wrote = len == 0 ? 0 : len + 1 <= size ? len + 1 : size;
    if (size != 0) {
        memcpy(vals[b], text, wrote ? wrote - 1 : 0);
        ((char *)vals[b])[wrote ? wrote - 1 : 0] = '\0';
    }
    vals[z] = (void *)(uintptr_t)wrote;
}

static void fk_jit_log(unsigned n, const CUjit_option *opts, void **vals, CUjit_option buf_opt, CUjit_option size_opt,
                       const char *text)
{
    fk_jit_log_sized(n, opts, vals, buf_opt, size_opt, text, 0xffffffffu);
}

FK_HIDDEN uint32_t fk_jit_size(unsigned n, const CUjit_option *opts, void *const *vals, CUjit_option size_opt)
{
    int z = fk_jit_find(n, opts, size_opt);
    return z < 0 ? 0 : fk_slot_u32(vals, (unsigned)z);
}

FK_HIDDEN void fk_jit_link_log(unsigned n, const CUjit_option *opts, void **vals, int error, const char *text,
                               uint32_t size)
{
    if (error)
        fk_jit_log_sized(n, opts, vals, CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, text, size);
    else
        fk_jit_log_sized(n, opts, vals, CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, text, size);
}

FK_HIDDEN void fk_jit_wall(unsigned n, const CUjit_option *opts, void **vals, float ms)
{
    int at = fk_jit_find(n, opts, CU_JIT_WALL_TIME);
    if (at >= 0)
        memcpy(&vals[at], &ms, sizeof ms);
}

FK_HIDDEN CUresult fk_jit_options(const char *api, unsigned n, CUjit_option *opts, void **vals, int failed)
{
    char info[512];
    int at;
    if (n != 0 && (opts == NULL || vals == NULL))
        return CUDA_ERROR_INVALID_VALUE;
    for (unsigned k = 0; k < n; k++)
        if ((unsigned)opts[k] >= (unsigned)CU_JIT_NUM_OPTIONS)
            return CUDA_ERROR_INVALID_VALUE;
    at = snprintf(info, sizeof info, "fake-jit %s: %u options:", api, n);
    for (unsigned k = 0; k < n && at > 0 && (size_t)at < sizeof info; k++) {
        if (opts[k] == CU_JIT_INFO_LOG_BUFFER || opts[k] == CU_JIT_ERROR_LOG_BUFFER || opts[k] == CU_JIT_WALL_TIME)
            at += snprintf(info + at, sizeof info - (size_t)at, " %d", (int)opts[k]);
        else
            at += snprintf(info + at, sizeof info - (size_t)at, " %d=%u", (int)opts[k], fk_slot_u32(vals, k));
    }
    char error[128];
    snprintf(error, sizeof error, failed ? "fake-jit %s: line 1: syntax error" : "", api);
    fk_jit_log(n, opts, vals, CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, info);
    fk_jit_log(n, opts, vals, CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, error);
    if ((at = fk_jit_find(n, opts, CU_JIT_WALL_TIME)) >= 0) {
        float ms = 0.25f;
        memcpy(&vals[at], &ms, sizeof ms);
    }
    if ((at = fk_jit_find(n, opts, CU_JIT_THREADS_PER_BLOCK)) >= 0)
        vals[at] = (void *)(uintptr_t)(fk_slot_u32(vals, (unsigned)at) & ~31u);
    return CUDA_SUCCESS;
}

/* Does this image fail to compile? Text starting with ".error" (read no further than its NUL). */
FK_HIDDEN int fk_jit_fails(const void *image)
{
    return image != NULL && strncmp(image, ".error", 6) == 0;
}
