/*
 * limitspec.h - reading smlimit's limits (limitspec.c): percentages per device,
 * 0 (or 100) meaning no limit on that device.
 */
#ifndef SML_LIMITSPEC_H
#define SML_LIMITSPEC_H

#include <stddef.h>

#define SML_LIMIT_DEVICES 16    /* device ordinals 0..15 (= SML_SHM_DEVICES)       */

/* The 'limit' option: "30" | "30%" | "0:30,1:50" | "30,1:50" (a bare number is
   every device not named). Percent in [0, 100]. 0 or -1 with a reason. */
int sml_parse_limits(const char *text, double out[SML_LIMIT_DEVICES], char *err, size_t errlen);
/* HAMi-core's variables, read through 'getenv_fn': CUDA_DEVICE_SM_LIMIT_<i>,
   else CUDA_DEVICE_SM_LIMIT; unset or 0 = none, above 100 = 100 (none). */
int sml_env_limits(const char *(*getenv_fn)(const char *), double out[SML_LIMIT_DEVICES], char *err,
                   size_t errlen);
/* A priority: high, normal, low or HAMi's number (0 high, 1 normal, 2 and more low) into *out (SML_PRIO_*, shm.h).
   0, 1 when 's' is NULL or empty (not given), -1 when it is none of these. */
int sml_parse_priority(const char *s, int *out);
/* "high", "normal", "low"; "none" for anything else (-1: takes no part). */
const char *sml_priority_name(int p);

#endif /* SML_LIMITSPEC_H */
