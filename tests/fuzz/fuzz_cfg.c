/*
 * fuzz_cfg.c - libFuzzer harness for the configuration value parser
 * (env_parse, runtime/env.c) and the quoting of values in log lines
 * (env_quote). Input: byte 0 picks the variable (also out-of-range numbers)
 * and the message buffer's size, the rest is the value. Checked for every
 * input: the result is 0 or -1, the value chosen is one the variable can
 * have, a message exists exactly when the value is refused and is one
 * printable, terminated line that names the variable.
 */
#include "fuzz_common.h"
#include "rt_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int var = (int)(data[0] % (ENV_VAR_COUNT_ + 2)) - 1;   /* -1 .. ENV_VAR_COUNT_ */
    size_t cap = (data[0] & 0x80) ? (size_t)(data[0] >> 3 & 0x0f) : 600;
    char *value = fuzz_cstr(data + 1, size - 1);
    char *msg = malloc(cap ? cap : 1);
    FUZZ_CHECK(msg != NULL);
    int out = -12345;
    int r = env_parse(var, value, &out, cap ? msg : NULL, cap);
    FUZZ_CHECK(r == 0 || r == -1);
    FUZZ_CHECK(out != -12345);
    if (var < 0 || var >= ENV_VAR_COUNT_) {
        FUZZ_CHECK(r == -1 && out == 0);
    } else if (var == ENV_VAR_DISABLE) {
        FUZZ_CHECK(out == 0 || out == 1);
    } else if (var == ENV_VAR_LOG) {
        FUZZ_CHECK(out >= LOG_DEBUG && out <= LOG_OFF);
        FUZZ_CHECK(r == -1 ? out == LOG_WARN : 1);
    } else {
        FUZZ_CHECK(out == 0 || out == ENV_PATH_FILE || out == ENV_PATH_STDERR);
        FUZZ_CHECK(r == 0 ? out != 0 : out == 0);
        FUZZ_CHECK(r == 0 ? strlen(value) < ENV_PATH_MAX : 1);
    }
    if (cap > 0) {
        fuzz_check_line(msg, cap);
        FUZZ_CHECK(r == 0 ? msg[0] == '\0' : (cap < 2 || msg[0] != '\0'));   /* cap 1 holds only the NUL */
        if (r == -1 && var >= 0 && var < ENV_VAR_COUNT_ && cap >= 600)
            FUZZ_CHECK(strncmp(msg, "CUSHIM_", 7) == 0 && strchr(msg, '=') != NULL);
    }
    /* the quoting alone, at the buffer size the input chose */
    char *q = malloc(cap ? cap : 1);
    FUZZ_CHECK(q != NULL);
    if (cap > 0) {
        env_quote(value, q, cap);
        fuzz_check_line(q, cap);
    }
    free(q);
    free(msg);
    free(value);
    return 0;
}
