/*
 * ml_limits.h - memlimit's configuration text: byte sizes, the per-device
 * limit list of limit= / --mem-limit, and HAMi-core's environment
 * (CUDA_DEVICE_MEMORY_LIMIT, CUDA_DEVICE_MEMORY_LIMIT_<i>,
 * CUDA_DEVICE_MEMORY_SHARED_CACHE, CUDA_VISIBLE_DEVICES). Host-free: the unit
 * test and the usage tool link it alone.
 */
#ifndef ML_LIMITS_H
#define ML_LIMITS_H

#include <stddef.h>
#include <stdint.h>

#define ML_MAX_DEVICES 16

typedef struct ml_limits {
    uint64_t all;                      /* every device without its own entry; 0: none */
    uint64_t dev[ML_MAX_DEVICES];      /* per CUDA ordinal; 0: use 'all'              */
    int any;                           /* some limit was given                        */
} ml_limits;

/* "4096", "512K", "8MiB", "8GiB", "1.5G", "8gb", "0x1000" (K = KiB = 1024).
   0 on success, -1 on bad text or overflow. */
int ml_parse_bytes(const char *s, uint64_t *out);

/* "8GiB" (every device) or "0:8GiB,1:4GiB" (per CUDA ordinal; "*:2GiB" for the
   rest). 0, or -1 with a reason in err. */
int ml_parse_spec(const char *s, ml_limits *l, char *err, size_t errlen);

/* HAMi-core's meaning: CUDA_DEVICE_MEMORY_LIMIT_<i> for CUDA ordinal i, else
   CUDA_DEVICE_MEMORY_LIMIT; 0 (or unset, or empty) means no limit there. A
   value is HAMi's syntax (ml_hami_value) or ours (ml_parse_bytes: 3MiB, 1.5GiB).
   Returns 1 if any variable set a limit, 0 if none did, -1 with the variable
   and its text in 'err' when one cannot be read (a quota that a typo would
   turn off fails closed instead). 'get' is getenv-like. */
int ml_from_hami_env(const char *(*get)(const char *), ml_limits *l, char *err, size_t errlen);

/* One HAMi variable's value (exposed for the unit test): HAMi's digits (strtoul
   base 0) with an optional one-letter suffix G, M or K (either case, powers of
   1024), else our sizes (ml_parse_bytes). 0 with *out set (0 for NULL or ""),
   -1 for text that is neither (a typo, a sign, a value past 2^64-1). */
int ml_hami_value(const char *s, uint64_t *out);

/* The limit of CUDA ordinal 'dev' (0: none). */
static inline uint64_t ml_limit_of(const ml_limits *l, int dev)
{
    if (dev >= 0 && dev < ML_MAX_DEVICES && l->dev[dev])
        return l->dev[dev];
    return l->all;
}

/* CUDA_VISIBLE_DEVICES as numeric host indexes: map[i] = host (NVML) index of
   CUDA ordinal i. Returns the count, 0 when unset/empty (identity), -1 when it
   holds something else (UUIDs, MIG names: mapping by index is impossible). */
int ml_visible_devices(const char *s, int *map, int cap);

#endif
