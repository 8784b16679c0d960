/*
 * paths.c - the files the launcher uses, found as the bash launcher found them: the shim is $CUSHIM_LIB, else
 * the installed one (the layout of layout.c, relative to this program's directory from /proc/self/exe), else a
 * build tree's ($CUSHIM_BUILD_DIR, else the tree this copy was built in). The drop-in, the fake driver and the
 * shipped plugins sit next to the shim (<libdir>/cushim/... installed, <build>/... in a build tree); the helpers
 * and the API list are installed, else in the shim's build tree, else in the build tree. Every path found is
 * normalised as 'realpath -s' does (no '..'; symbolic links kept). 'cushim where' prints them.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launcher.h"

static char *ln_dirname(const char *p)
{
    const char *s = strrchr(p, '/');
    if (s == NULL)
        return ln_strdup(".");
    if (s == p)
        return ln_strdup("/");
    return ln_strndup(p, (size_t)(s - p));
}

/* The first of the paths (NULL-terminated) that exists, normalised; NULL if none. */
static char *find_first(const char *first, ...)
{
    va_list ap;
    va_start(ap, first);
    for (const char *p = first; p != NULL; p = va_arg(ap, char *)) {
        if (p[0] != '\0' && ln_exists(p)) {
            va_end(ap);
            return ln_clean_path(p);
        }
    }
    va_end(ap);
    return NULL;
}

static char *from_here(const char *here, const char *rel)
{
    return rel[0] == '/' ? ln_strdup(rel) : ln_fmt("%s/%s", here, rel);
}

static char *self_exe(void)
{
    char buf[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0)
        ln_die("cannot find this program's own file (/proc/self/exe): is /proc mounted?");
    buf[n] = '\0';
    return ln_strdup(buf);
}

void ln_where_find(ln_where *w)
{
    memset(w, 0, sizeof *w);
    w->exe = self_exe();
    char *here = ln_dirname(w->exe);
    char *libdir = from_here(here, ln_inst_lib), *libexecdir = from_here(here, ln_inst_libexec);
    char *datadir = from_here(here, ln_inst_data);
    const char *b = getenv("CUSHIM_BUILD_DIR");
    char *build = b != NULL && b[0] != '\0' ? ln_strdup(b) : from_here(here, ln_default_build);
    w->build = ln_clean_path(build);

    const char *lib = getenv("CUSHIM_LIB");
    char *p1 = ln_fmt("%s/libcushim.so", libdir), *p2 = ln_fmt("%s/runtime/libcushim.so", build);
    w->shim = find_first(lib != NULL ? lib : "", p1, p2, (char *)NULL);
    char *base = ln_strdup("/nonexistent");
    if (w->shim != NULL) {
        /* The drop-in, the fake driver and the plugins sit next to the shim. */
        base = ln_dirname(w->shim);
        w->dropin = find_first(ln_fmt("%s/cushim/dropin", base), ln_fmt("%s/../dropin", base), (char *)NULL);
        char *fake = find_first(ln_fmt("%s/cushim/fake/libcuda.so.1", base),
                                ln_fmt("%s/../tests/fake/libcuda.so.1", base), (char *)NULL);
        w->fake = fake != NULL ? ln_dirname(fake) : NULL;
        w->plugindir = find_first(ln_fmt("%s/cushim/plugins", base), ln_fmt("%s/../plugins", base), (char *)NULL);
    } else {
        w->plugindir = find_first(ln_fmt("%s/cushim/plugins", libdir), (char *)NULL);
    }
    /* The helpers and the API list: installed, else in the shim's build tree, else in the build tree. */
    w->info = find_first(ln_fmt("%s/cushim/cushim-info", libexecdir), ln_fmt("%s/../tools/cushim-info", base),
                         ln_fmt("%s/tools/cushim-info", build), (char *)NULL);
    w->stats = find_first(ln_fmt("%s/cushim/cushim-stats", libexecdir), ln_fmt("%s/../tools/cushim-stats", base),
                          ln_fmt("%s/tools/cushim-stats", build), (char *)NULL);
    w->usage = find_first(ln_fmt("%s/cushim/cushim-usage", libexecdir), ln_fmt("%s/../tools/cushim-usage", base),
                          ln_fmt("%s/tools/cushim-usage", build), (char *)NULL);
    w->serve = find_first(ln_fmt("%s/cushim/cushim-serve", libexecdir), ln_fmt("%s/../remote/cushim-serve", base),
                          ln_fmt("%s/remote/cushim-serve", build), (char *)NULL);
    w->flight = find_first(ln_fmt("%s/cushim/cushim-flight", libexecdir), ln_fmt("%s/../tools/cushim-flight", base),
                           ln_fmt("%s/tools/cushim-flight", build), (char *)NULL);
    w->limit = find_first(ln_fmt("%s/cushim/cushim-limit", libexecdir), ln_fmt("%s/../tools/cushim-limit", base),
                          ln_fmt("%s/tools/cushim-limit", build), (char *)NULL);
    w->apis = find_first(ln_fmt("%s/cushim/apis.tsv", datadir), ln_fmt("%s/../tools/apis.tsv", base),
                         ln_fmt("%s/tools/apis.tsv", build), (char *)NULL);
}

int ln_cmd_where(const ln_where *w, int argc, char **argv)
{
    if (argc > 0) {
        ln_help_or_bad(w, "where", argv[0]);
        ln_bad("where", "no arguments expected");
    }
#define Q(p) ((p) != NULL ? (p) : "?")
    printf("launcher\t%s\nshim\t%s\ndropin\t%s\nfake\t%s\nplugins\t%s\ninfo\t%s\napis\t%s\nserve\t%s\n", w->exe,
           Q(w->shim), Q(w->dropin), Q(w->fake), Q(w->plugindir), Q(w->info), Q(w->apis), Q(w->serve));
#undef Q
    return 0;
}
