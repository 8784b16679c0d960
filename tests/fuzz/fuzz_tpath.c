/*
 * fuzz_tpath.c - libFuzzer harness for the trace file's name (tr_path, tr_path_alt: plugins/trace/tr_path.c):
 * the 'file' option comes from the user (CUSHIM_PLUGINS, cushim run --trace=FILE) and is expanded in the
 * program's process at start and in every forked child. The first input byte picks a forked child's form (bit 0),
 * the rest is the option. Checked for every input, against a reference written apart from the parser:
 *   - the name equals the reference expansion: %p the pid, %h the host name, %q{VAR} the variable (FZ_SET is
 *     set, FZ_UNSET is not: empty, and its name reported), %% a '%', any other '%' kept; "" the default name; a
 *     child's name without an expanded %p gets ".<pid>" before .json / .json.gz;
 *   - the other names (tr_path_alt, k = 1 and 2) are the name with ".<pid>" / ".<pid>-2" before .json.gz, .json,
 *     .perfetto-trace.gz, .perfetto-trace, .pftrace.gz, .pftrace, .gz or at the end.
 */
#include <unistd.h>

#include "fuzz_common.h"
#include "tr_path.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { FZ_PID = 4242 };

typedef struct fz_buf {
    char *p;
    size_t n, cap;
} fz_buf;

static void fz_put(fz_buf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        b->cap = (b->n + n + 1) * 2;
        b->p = realloc(b->p, b->cap);
        FUZZ_CHECK(b->p != NULL);
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

/* the part of 'name' before its extension (.json.gz, .json, .perfetto-trace[.gz], .pftrace[.gz], .gz) */
static size_t fz_stem(const char *name)
{
    size_t n = strlen(name);
    if (n > 8 && strcmp(name + n - 8, ".json.gz") == 0)
        return n - 8;
    if (n > 5 && strcmp(name + n - 5, ".json") == 0)
        return n - 5;
    if (n > 18 && strcmp(name + n - 18, ".perfetto-trace.gz") == 0)
        return n - 18;
    if (n > 15 && strcmp(name + n - 15, ".perfetto-trace") == 0)
        return n - 15;
    if (n > 11 && strcmp(name + n - 11, ".pftrace.gz") == 0)
        return n - 11;
    if (n > 8 && strcmp(name + n - 8, ".pftrace") == 0)
        return n - 8;
    if (n > 3 && strcmp(name + n - 3, ".gz") == 0)
        return n - 3;
    return n;
}

static char *fz_insert(const char *name, const char *what)
{
    fz_buf b = {0};
    size_t stem = fz_stem(name);
    fz_put(&b, "", 0);
    fz_put(&b, name, stem);
    fz_put(&b, what, strlen(what));
    fz_put(&b, name + stem, strlen(name + stem));
    return b.p;
}

/* The reference: the option's text, one character at a time. */
static char *fz_expand(const char *s, int child, char *unset_out)
{
    fz_buf b = {0};
    char num[32], host[256];
    int had_pid = 0;
    unset_out[0] = '\0';
    fz_put(&b, "", 0);
    if (*s == '\0') {
        snprintf(num, sizeof num, "cushim-%d.json", FZ_PID);
        fz_put(&b, num, strlen(num));
        return b.p;
    }
    for (size_t i = 0; s[i] != '\0'; i++) {
        if (s[i] == '%' && s[i + 1] == 'p') {
            snprintf(num, sizeof num, "%d", FZ_PID);
            fz_put(&b, num, strlen(num));
            had_pid = 1;
            i++;
        } else if (s[i] == '%' && s[i + 1] == 'h') {
            if (gethostname(host, sizeof host) != 0)
                strcpy(host, "unknown-host");
            host[sizeof host - 1] = '\0';
            fz_put(&b, host, strlen(host));
            i++;
        } else if (s[i] == '%' && s[i + 1] == '%') {
            fz_put(&b, "%", 1);
            i++;
        } else if (s[i] == '%' && s[i + 1] == 'q' && s[i + 2] == '{' && s[i + 3] != '}' && s[i + 3] != '\0' &&
                   strchr(s + i + 3, '}') != NULL) {
            const char *end = strchr(s + i + 3, '}');
            size_t len = (size_t)(end - (s + i + 3));
            if (len == 6 && memcmp(s + i + 3, "FZ_SET", 6) == 0)
                fz_put(&b, "value", 5);
            else if (len == 8 && memcmp(s + i + 3, "FZ_UNSET", 8) == 0 && unset_out[0] == '\0')
                strcpy(unset_out, "FZ_UNSET");
            else if (!(len == 8 && memcmp(s + i + 3, "FZ_UNSET", 8) == 0)) {
                /* any other variable: whatever the environment holds (the harness sets none other) */
                char name[128];
                const char *v;
                snprintf(name, sizeof name, "%.*s", (int)len, s + i + 3);
                if ((v = getenv(name)) != NULL)
                    fz_put(&b, v, strlen(v));
                else if (unset_out[0] == '\0')
                    snprintf(unset_out, 128, "%s", name);
            }
            i = (size_t)(end - s);
        } else {
            fz_put(&b, s + i, 1);
        }
    }
    if (child && !had_pid) {
        char *with;
        snprintf(num, sizeof num, ".%d", FZ_PID);
        with = fz_insert(b.p, num);
        free(b.p);
        return with;
    }
    return b.p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int env_set;
    char unset[128], unset_ref[128], num[32];
    char *opt, *got, *want;
    int child;
    if (size < 1)
        return 0;
    if (!env_set) {
        setenv("FZ_SET", "value", 1);
        unsetenv("FZ_UNSET");
        env_set = 1;
    }
    child = data[0] & 1;
    opt = fuzz_cstr(data + 1, size - 1);
    got = tr_path(opt, FZ_PID, child, unset, sizeof unset);
    FUZZ_CHECK(got != NULL);
    want = fz_expand(opt, child, unset_ref);
    if (strcmp(got, want) != 0 || strcmp(unset, unset_ref) != 0) {
        fprintf(stderr, "option '%s' child %d: got '%s' (unset '%s'), want '%s' (unset '%s')\n", opt, child, got,
                unset, want, unset_ref);
        FUZZ_CHECK(0);
    }
    for (int k = 1; k <= 2; k++) {
        char *alt = tr_path_alt(got, FZ_PID, k), *ref;
        FUZZ_CHECK(alt != NULL);
        if (k == 1)
            snprintf(num, sizeof num, ".%d", FZ_PID);
        else
            snprintf(num, sizeof num, ".%d-%d", FZ_PID, k);
        ref = fz_insert(got, num);
        FUZZ_CHECK(strcmp(alt, ref) == 0);
        free(ref);
        free(alt);
    }
    free(want);
    free(got);
    free(opt);
    return 0;
}
