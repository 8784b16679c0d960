/*
 * optval.c - a plugin option's value checked before the program starts, as the shim will check it when it
 * loads the plugin (runtime/options.c: int, bool, double and bytes are read the same way here), so that a value
 * the plugin would refuse - making every CUDA call of the program fail - is a usage error instead.
 *
 * The overlay below says what a plugin's declaration cannot (the way codegen's overlay adds what headers
 * cannot say): that a value is a path, made absolute against the launcher's directory since the program may
 * change its own; what an empty value lacks; a stricter check and its words, kept from the bash launcher for
 * the options it always had a flag for; that a value is an API selector, checked with the shim's own engine.
 * An option without a row is checked by its declared type alone: a new option needs no row.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "launcher.h"
#include "optvalue.h"

enum { OV_PATH = 1, OV_SELECTOR = 2 };

typedef struct ln_overlay {
    const char *plugin, *option;
    unsigned flags;
    const char *needs;             /* an empty value: "--FLAG needs <needs>"; NULL: the type's words */
    int (*ok)(const char *v);      /* the stricter check; NULL: the declared type's */
    const char *is_not;            /* its words: "--FLAG: 'v' is not <is_not>" */
} ln_overlay;

static int ov_capture(const char *v)
{
    return strcmp(v, "cudaProfilerApi") == 0 || (strncmp(v, "nvtx:", 5) == 0 && v[5] != '\0');
}

/* stop, repeat or repeat:N (N of 1 to 9 digits, no leading 0) */
static int ov_capture_end(const char *v)
{
    if (strcmp(v, "stop") == 0 || strcmp(v, "repeat") == 0)
        return 1;
    if (strncmp(v, "repeat:", 7) != 0 || v[7] < '1' || v[7] > '9')
        return 0;
    size_t n = strspn(v + 7, "0123456789");
    return v[7 + n] == '\0' && n <= 9;
}

/* seconds: digits, optionally '.' and digits */
static int ov_seconds(const char *v)
{
    size_t n = strspn(v, "0123456789");
    if (n == 0)
        return 0;
    if (v[n] == '.') {
        size_t f = strspn(v + n + 1, "0123456789");
        return f > 0 && v[n + 1 + f] == '\0';
    }
    return v[n] == '\0';
}

static const ln_overlay ln_overlays[] = {
    {"trace", "file", OV_PATH, "a file", NULL, NULL},
    {"trace", "summary_file", OV_PATH, "a file", NULL, NULL},
    {"trace", "filter", OV_SELECTOR, "a selector", NULL, NULL},
    {"trace", "toggle", 0, "a signal (USR1, USR2, RTMIN+N)", NULL, NULL},
    {"trace", "buffer", 0, "a size (e.g. 256MiB)", NULL, NULL},
    {"trace", "capture", 0, NULL, ov_capture, "cudaProfilerApi or nvtx:MESSAGE[@DOMAIN]"},
    {"trace", "capture_end", 0, NULL, ov_capture_end, "stop, repeat or repeat:N"},
    {"trace", "delay", 0, NULL, ov_seconds, "a number of seconds"},
    {"trace", "duration", 0, NULL, ov_seconds, "a number of seconds"},
    {"trace", "gpu_detach", 0, NULL, ov_seconds, "a number of seconds"},
    {"lua", "script", OV_PATH, "a policy file", NULL, NULL},
    {"lua", "report", OV_PATH, "a file", NULL, NULL},
    {NULL, NULL, 0, NULL, NULL, NULL},
};

static const ln_overlay *overlay(const char *plugin, const char *option)
{
    for (const ln_overlay *o = ln_overlays; o->plugin != NULL; o++)
        if (strcmp(o->plugin, plugin) == 0 && strcmp(o->option, option) == 0)
            return o;
    return NULL;
}

int ln_option_is_selector(const char *plugin, const char *option)
{
    const ln_overlay *o = overlay(plugin, option);
    return o != NULL && (o->flags & OV_SELECTOR);
}

/* ---- the declared types, read as runtime/options.c reads them ---- */

/* The type's words, for "'v' is not ..." and "needs ...". */
static const char *type_words(uint32_t type, int needs)
{
    switch (type & CUSHIM_OPT_TYPE_MASK) {
    case CUSHIM_OPT_INT: return needs ? "an int" : "an int (decimal or 0x hex)";
    case CUSHIM_OPT_BOOL: return needs ? "a bool" : "a bool (1/0 true/false yes/no on/off)";
    case CUSHIM_OPT_DOUBLE: return "a number";
    case CUSHIM_OPT_BYTES: return needs ? "a size (e.g. 256MiB)" : "a size (4096, 512K, 8MiB, 1.5G)";
    default: return "a value";
    }
}

/* A value of declared type 'type', as the shim reads it (runtime/optvalue.c). */
static int type_ok(uint32_t type, const char *v)
{
    return op_check_value(type, v) == 0;
}

char *ln_option_value(const char *label, const char *plugin, const cushim_option *o, const char *v)
{
    const ln_overlay *ov = overlay(plugin, o->name);
    uint32_t t = o->type & CUSHIM_OPT_TYPE_MASK;
    if (t < CUSHIM_OPT_STRING || t > CUSHIM_OPT_BYTES)
        ln_die("%s: the %s plugin declares its option '%s' with an unknown type %u (cushim plugins %s)", label,
               plugin, o->name, (unsigned)t, plugin);
    if (v[0] == '\0' && (ov == NULL || ov->ok == NULL))
        ln_bad("run", "%s needs %s", label, ov != NULL && ov->needs != NULL ? ov->needs : type_words(o->type, 1));
    if (ov != NULL && ov->ok != NULL) {
        if (!ov->ok(v))
            ln_bad("run", "%s: '%s' is not %s", label, v, ov->is_not);
    } else if (!type_ok(o->type, v)) {
        ln_bad("run", "%s: '%s' is not %s", label, v, type_words(o->type, 0));
    }
    if (ov != NULL && (ov->flags & OV_PATH))
        return ln_absolute(label, v);
    return ln_strdup(v);
}
