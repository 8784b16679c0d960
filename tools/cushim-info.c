/*
 * cushim-info.c - what the launcher's 'cushim plugins' and 'cushim version' print.
 *
 *   cushim-info version
 *   cushim-info plugins [--dir DIR]... [NAME-OR-PATH...]
 *   cushim-info select SHIM SELECTOR
 *
 * 'version' prints what this build of the shim was made from: the project version,
 * the CUDA headers of the generated tree and the SDK ABI of sdk/include/cushim/cushim.h,
 * all fixed at compile time (the same tree the shim is built from).
 * 'plugins' dlopens each plugin (every *.so in each --dir, or the ones named; a NAME
 * is looked up as DIR/NAME.so), calls its entry point and prints the definition:
 * version, description, and the declared options with their types, defaults and help.
 * It never loads the shim and never calls init: a plugin definition is static data.
 * A file that is not a regular file (a FIFO: dlopen would wait for a writer forever)
 * is refused with one line. So is a definition the shim's loader would refuse - its
 * size, SDK ABI and name (runtime/plugins.c, pl_load), its declared options' names,
 * types, repeats and defaults (runtime/options.c, op_check_decls): the same rules,
 * written again here (this tool links nothing of the runtime), the same reasons;
 * tests/e2e/run_info.sh checks both say the same of each broken probe plugin.
 * 'select' checks a selector before the launcher starts a program with it (cushim run
 * --trace-filter): the shim the program will run with is dlopened, with every CUSHIM_
 * variable cleared first (its initialisation loads no plugin and writes no file; the
 * real libraries stay unopened), and its own selector engine (host->api_select) says
 * how many APIs the selector matches, or what is wrong with it. Exit status 0 (the
 * count printed), 1 (the reason on stderr), 3 when that shim cannot answer (not
 * loadable, another SDK major): the launcher then leaves the check to the plugin.
 * Exit status: 0, 1 when a plugin could not be described or would be refused, 2 on a
 * usage error.
 */
#define _GNU_SOURCE   /* setenv, unsetenv; cushim_open_regular; strtod_l */
#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <cushim/cushim.h>
#include <cushim/cushim_io.h>
#include "cushim_api_ids.h"
#include "optvalue.h"

#ifndef CUSHIM_INFO_VERSION
#error "CUSHIM_INFO_VERSION (the project version) must be defined by the build"
#endif

#define MAX_DIRS 16

static void usage(FILE *f)
{
    fprintf(f, "usage: cushim-info version\n"
               "       cushim-info plugins [--dir DIR]... [NAME-OR-PATH...]\n"
               "       cushim-info select SHIM SELECTOR\n");
}

static int print_version(void)
{
    /* The same text as host->version() of the shim built from this tree. */
    printf("cushim %s, CUDA %s headers, SDK ABI %u.%u\n", CUSHIM_INFO_VERSION, CUSHIM_GEN_CUDA_VERSION_STRING,
           (unsigned)CUSHIM_ABI_MAJOR, (unsigned)CUSHIM_ABI_MINOR);
    return 0;
}

static const char *type_name(uint32_t type)
{
    switch (type & CUSHIM_OPT_TYPE_MASK) {
    case CUSHIM_OPT_STRING: return "string";
    case CUSHIM_OPT_INT: return "int";
    case CUSHIM_OPT_BOOL: return "bool";
    case CUSHIM_OPT_DOUBLE: return "double";
    case CUSHIM_OPT_BYTES: return "bytes";
    default: return NULL;
    }
}

/* A field of 'def' exists iff its offset is below def->size (append-only ABI). */
#define DEF_HAS(d, field) CUSHIM_HAS(d, cushim_plugin_def, field)

/* ---- the loader's rules (runtime/plugins.c, runtime/options.c): keep them in step ---- */

/* The smallest definition the loader takes: up to its init (PL_DEF_MIN). */
#define INFO_DEF_MIN (offsetof(cushim_plugin_def, init) + sizeof(void (*)(void)))
#define INFO_MAX_DECL 256   /* OP_MAX_DECL */

/* 's' with each byte that is not printable ASCII as '?' (names come from the plugin: never raw to a terminal). */
static const char *printable(const char *s, char *buf, size_t cap)
{
    size_t o = 0;
    for (; *s && o + 1 < cap; s++)
        buf[o++] = (unsigned char)*s >= 0x20 && (unsigned char)*s < 0x7f ? *s : '?';
    buf[o] = '\0';
    return buf;
}


/* Why the loader would refuse 'd' (its reason, as runtime/plugins.c and options.c word it), into 'why'; 0 if it
   would take it. The checks before init, in the loader's order; init itself is never called here. */
static int refused(const cushim_plugin_def *d, char *why, size_t cap)
{
    char a[80], b[80];
    uint32_t n = 0;
    if (d->size < INFO_DEF_MIN) {
        snprintf(why, cap, "plugin definition too small (%u bytes; at least %zu)", (unsigned)d->size,
                 (size_t)INFO_DEF_MIN);
        return 1;
    }
    if (CUSHIM_ABI_MAJOR_OF(d->abi_version) != CUSHIM_ABI_MAJOR ||
        CUSHIM_ABI_MINOR_OF(d->abi_version) > CUSHIM_ABI_MINOR) {
        snprintf(why, cap, "was built for SDK ABI %u.%u, this shim provides %u.%u",
                 (unsigned)CUSHIM_ABI_MAJOR_OF(d->abi_version), (unsigned)CUSHIM_ABI_MINOR_OF(d->abi_version),
                 (unsigned)CUSHIM_ABI_MAJOR, (unsigned)CUSHIM_ABI_MINOR);
        return 1;
    }
    if (!op_name_ok(d->name)) {
        snprintf(why, cap, "the plugin's name is not [a-z0-9_-]{1,63}");
        return 1;
    }
    for (const cushim_option *decl = d->options; decl != NULL && decl[n].name != NULL; n++) {
        const cushim_option *o = &decl[n];
        uint32_t t = o->type & CUSHIM_OPT_TYPE_MASK;
        if (n >= INFO_MAX_DECL) {
            snprintf(why, cap, "more than %d options declared", INFO_MAX_DECL);
            return 1;
        }
        if (o->name[0] == '\0' || !op_name_ok(o->name)) {
            snprintf(why, cap, "declared option name '%s' is not [a-z0-9_-]+", printable(o->name, a, sizeof a));
            return 1;
        }
        if (t < CUSHIM_OPT_STRING || t > CUSHIM_OPT_BYTES ||
            (o->type & ~(CUSHIM_OPT_TYPE_MASK | CUSHIM_OPT_REPEAT | CUSHIM_OPT_REQUIRED)) != 0) {
            snprintf(why, cap, "option '%s' declares an unknown type 0x%x", o->name, (unsigned)o->type);
            return 1;
        }
        for (uint32_t k = 0; k < n; k++)
            if (strcmp(decl[k].name, o->name) == 0) {
                snprintf(why, cap, "option '%s' is declared twice", o->name);
                return 1;
            }
        if (o->default_value != NULL && op_check_value(o->type, o->default_value) != 0) {
            snprintf(why, cap, "the default '%s' of option '%s' is not a valid %s",
                     printable(o->default_value, b, sizeof b), o->name, op_type_name(o->type));
            return 1;
        }
    }
    return 0;
}

/* 1 when 'path' is a regular file or cannot be opened (dlopen then says why, as it always did); 0, with a line
   on stderr, when it is a FIFO, device, socket or directory: dlopen of a FIFO waits for a writer forever. Looked
   at without blocking; a file replaced before the dlopen that follows is left (runtime/loader.c says why). */
static int regular_file(const char *path)
{
    char why[400];
    int fd = cushim_open_regular(path, O_RDONLY, 0, why, sizeof why);
    if (fd < 0 && errno == EINVAL) {
        fprintf(stderr, "cushim-info: %s: cannot load: %s\n", path, why);
        return 0;
    }
    if (fd >= 0)
        close(fd);
    return 1;
}

/* Prints one plugin's definition; 0 on success, 1 (with a line on stderr) if it cannot be described. */
static int describe(const char *path)
{
    if (!regular_file(path))
        return 1;
    /* RTLD_LOCAL: nothing of the plugin leaks into the next one's symbol look-ups. */
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        fprintf(stderr, "cushim-info: %s: cannot load: %s\n", path, dlerror());
        return 1;
    }
    cushim_plugin_entry_fn entry;
    void *sym = dlsym(h, CUSHIM_PLUGIN_ENTRY_NAME);
    memcpy(&entry, &sym, sizeof entry);   /* object to function pointer without a pedantic warning */
    if (entry == NULL) {
        fprintf(stderr, "cushim-info: %s: not a cushim plugin (no %s)\n", path, CUSHIM_PLUGIN_ENTRY_NAME);
        dlclose(h);
        return 1;
    }
    const cushim_plugin_def *d = entry();
    /* The two leading fields are all an unknown major version promises. */
    if (d == NULL || d->size < offsetof(cushim_plugin_def, abi_version) + sizeof d->abi_version) {
        fprintf(stderr, "cushim-info: %s: %s returned no usable definition\n", path, CUSHIM_PLUGIN_ENTRY_NAME);
        dlclose(h);
        return 1;
    }
    uint32_t maj = CUSHIM_ABI_MAJOR_OF(d->abi_version), min = CUSHIM_ABI_MINOR_OF(d->abi_version);
    char why[400];
    if (refused(d, why, sizeof why)) {   /* one line, the loader's reason; nothing of it on stdout */
        fprintf(stderr, "cushim-info: %s: the shim would refuse it: %s\n", path, why);
        dlclose(h);
        return 1;
    }
    printf("%s %s\n", d->name, d->version ? d->version : "(no version)");
    printf("  %s\n", d->description ? d->description : "(no description)");
    printf("  file: %s\n", path);
    printf("  SDK ABI: %u.%u\n", (unsigned)maj, (unsigned)min);
    if (d->options == NULL || d->options[0].name == NULL) {
        printf("  options: none\n");
    } else {
        printf("  options:\n");
        for (const cushim_option *o = d->options; o->name != NULL; o++) {
            printf("    %s=%s", o->name, type_name(o->type));   /* checked above: a known type */
            if (o->type & CUSHIM_OPT_REQUIRED)
                printf(", required");
            if (o->type & CUSHIM_OPT_REPEAT)
                printf(", repeatable");
            if (o->default_value != NULL)
                printf(", default '%s'", o->default_value);
            printf("\n");
            if (o->help != NULL && o->help[0] != '\0')
                printf("        %s\n", o->help);
        }
    }
    /* Definitions are static data of the plugin: done with it before it is unmapped. */
    dlclose(h);
    return 0;
}

static int is_plugin_file(const struct dirent *e)
{
    size_t n = strlen(e->d_name);
    return e->d_name[0] != '.' && n > 3 && strcmp(e->d_name + n - 3, ".so") == 0;
}

/* Every *.so of 'dir', in name order. */
static int describe_dir(const char *dir, int *count)
{
    struct dirent **list;
    int n = scandir(dir, &list, is_plugin_file, alphasort);
    if (n < 0)
        return 0;   /* no shipped plugins in this build: not an error */
    int status = 0;
    for (int i = 0; i < n; i++) {
        char path[4096];
        if (snprintf(path, sizeof path, "%s/%s", dir, list[i]->d_name) < (int)sizeof path) {
            if (*count > 0)
                printf("\n");
            status |= describe(path);
            (*count)++;
        }
        free(list[i]);
    }
    free(list);
    return status;
}

/* NAME-OR-PATH as the shim reads it: with a '/' a path, else DIR/NAME.so in the first DIR that has it. */
static int describe_named(const char *arg, const char *const *dirs, int ndirs)
{
    if (strchr(arg, '/') != NULL)
        return describe(arg);
    for (int i = 0; i < ndirs; i++) {
        char path[4096];
        if (snprintf(path, sizeof path, "%s/%s.so", dirs[i], arg) >= (int)sizeof path)
            continue;
        if (access(path, F_OK) == 0)   /* as the shim looks (runtime/loader.c); describe() refuses a FIFO */
            return describe(path);
    }
    fprintf(stderr, "cushim-info: no shipped plugin named '%s'\n", arg);
    return 1;
}

static int plugins(int argc, char **argv)
{
    const char *dirs[MAX_DIRS];
    int ndirs = 0, i = 0;
    for (; i < argc; i++) {
        if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc) {
            if (ndirs == MAX_DIRS) {
                fprintf(stderr, "cushim-info: at most %d --dir\n", MAX_DIRS);
                return 2;
            }
            dirs[ndirs++] = argv[++i];
        } else if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        } else if (argv[i][0] == '-') {
            usage(stderr);
            return 2;
        } else {
            break;
        }
    }
    int status = 0, count = 0;
    if (i == argc) {
        for (int d = 0; d < ndirs; d++)
            status |= describe_dir(dirs[d], &count);
        if (count == 0)
            printf("no shipped plugins found\n");
        return status;
    }
    for (; i < argc; i++) {
        if (count++ > 0)
            printf("\n");
        status |= describe_named(argv[i], dirs, ndirs);
    }
    return status;
}

extern char **environ;

static int select_check(const char *shim, const char *selector)
{
    /* unset while walking environ would skip the entry after each removal: restart after one */
    for (int again = 1; again;) {
        again = 0;
        for (char **e = environ; e != NULL && *e != NULL; e++) {
            const char *eq = strchr(*e, '=');
            if (strncmp(*e, "CUSHIM_", 7) == 0 && eq != NULL && (size_t)(eq - *e) < 128) {
                char name[128];
                memcpy(name, *e, (size_t)(eq - *e));
                name[eq - *e] = '\0';
                unsetenv(name);
                again = 1;
                break;
            }
        }
    }
    setenv("CUSHIM_LOG", "off", 1);
    if (!regular_file(shim))
        return 3;
    void *h = dlopen(shim, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        fprintf(stderr, "cushim-info: cannot load the shim: %s\n", dlerror());
        return 3;
    }
    cushim_host_get_fn get = (cushim_host_get_fn)(uintptr_t)dlsym(h, CUSHIM_HOST_GET_NAME);
    const cushim_host *host = get != NULL ? get((uint32_t)CUSHIM_ABI_MAJOR << 16) : NULL;
    if (host == NULL || !CUSHIM_HOST_HAS(host, api_select) || host->api_select == NULL) {
        fprintf(stderr, "cushim-info: %s serves no selector engine of SDK ABI %u.x\n", shim, (unsigned)CUSHIM_ABI_MAJOR);
        return 3;
    }
    char err[512] = "";
    int n = host->api_select(selector, NULL, 0, err, sizeof err);
    if (n > 0) {
        printf("%d\n", n);
        return 0;
    }
    fprintf(stderr, "%s\n", err[0] != '\0' ? err : "the selector matches no API of this build");
    return 1;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "version") == 0 && argc == 2)
        return print_version();
    if (argc >= 2 && strcmp(argv[1], "plugins") == 0)
        return plugins(argc - 2, argv + 2);
    if (argc == 4 && strcmp(argv[1], "select") == 0)
        return select_check(argv[2], argv[3]);
    usage(stderr);
    return 2;
}
