/*
 * options.c - the shipped plugins and the 'cushim run' flags derived from the options they declare: every
 * option OPT of a shipped plugin NAME (a NAME.so in the plugin directory, what a spec names) is the flag
 * --NAME-OPT=VALUE, with '-' and '_' alike, so a plugin's new option needs no launcher change.
 *
 * A plugin's definition is read as cushim-info reads it (tools/cushim-info.c): the file is dlopen'ed
 * (RTLD_LOCAL, and only when one of its flags is used, or for 'cushim run --help'), its entry point returns the
 * static definition, and init is never called. Only the shipped plugins are read: a --plugin path is the
 * program's business and is never loaded by the launcher.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "launcher.h"

/* A plugin NAME usable in a flag: what the SDK allows a name to be ([a-z0-9_-]+). */
static int flag_name_ok(const char *n, size_t len)
{
    if (len == 0)
        return 0;
    for (size_t i = 0; i < len; i++)
        if (!((n[i] >= 'a' && n[i] <= 'z') || (n[i] >= '0' && n[i] <= '9') || n[i] == '_' || n[i] == '-'))
            return 0;
    return 1;
}

static int is_plugin_file(const struct dirent *e)
{
    size_t n = strlen(e->d_name);
    return e->d_name[0] != '.' && n > 3 && strcmp(e->d_name + n - 3, ".so") == 0 && flag_name_ok(e->d_name, n - 3);
}

void ln_plugins_scan(ln_plugins *ps, const char *plugindir)
{
    memset(ps, 0, sizeof *ps);
    struct dirent **list;
    int n = plugindir != NULL ? scandir(plugindir, &list, is_plugin_file, alphasort) : -1;
    if (n <= 0)
        return;
    ps->v = ln_alloc(sizeof *ps->v * (size_t)n);
    for (int i = 0; i < n; i++) {
        char *path = ln_fmt("%s/%s", plugindir, list[i]->d_name);
        if (ln_is_file(path)) {   /* as the shim looks: a FIFO or directory named x.so is no plugin */
            ln_plugin *p = &ps->v[ps->n++];
            p->name = ln_strndup(list[i]->d_name, strlen(list[i]->d_name) - 3);
            p->path = path;
        }
        free(list[i]);
    }
    free(list);
}

ln_plugin *ln_plugins_find(ln_plugins *ps, const char *name)
{
    for (size_t i = 0; i < ps->n; i++)
        if (strcmp(ps->v[i].name, name) == 0)
            return &ps->v[i];
    return NULL;
}

const cushim_plugin_def *ln_plugin_def(ln_plugin *p)
{
    if (p->tried)
        return p->def;
    p->tried = 1;
    /* RTLD_LOCAL: nothing of one plugin leaks into the next one's symbol look-ups. Kept open: the definition
       is the plugin's static data, read until the launcher execs. */
    p->handle = dlopen(p->path, RTLD_NOW | RTLD_LOCAL);
    if (p->handle == NULL) {
        p->why = ln_fmt("cannot load it: %s", dlerror());
        return NULL;
    }
    cushim_plugin_entry_fn entry;
    void *sym = dlsym(p->handle, CUSHIM_PLUGIN_ENTRY_NAME);
    memcpy(&entry, &sym, sizeof entry);   /* object to function pointer without a pedantic warning */
    if (entry == NULL) {
        p->why = ln_fmt("not a cushim plugin (no %s)", CUSHIM_PLUGIN_ENTRY_NAME);
        return NULL;
    }
    const cushim_plugin_def *d = entry();
    if (d == NULL || d->size < offsetof(cushim_plugin_def, abi_version) + sizeof d->abi_version) {
        p->why = ln_fmt("%s returned no usable definition", CUSHIM_PLUGIN_ENTRY_NAME);
        return NULL;
    }
    if (CUSHIM_ABI_MAJOR_OF(d->abi_version) != CUSHIM_ABI_MAJOR) {
        p->why = ln_fmt("built for SDK ABI %u.x; this launcher knows %u.x", (unsigned)CUSHIM_ABI_MAJOR_OF(d->abi_version),
                        (unsigned)CUSHIM_ABI_MAJOR);
        return NULL;
    }
    if (!CUSHIM_HAS(d, cushim_plugin_def, options)) {
        p->why = ln_fmt("definition too short (size %u)", (unsigned)d->size);
        return NULL;
    }
    p->def = d;
    return d;
}

/* A and B the same, '-' and '_' alike. */
static int same_name(const char *a, size_t alen, const char *b)
{
    size_t blen = strlen(b);
    if (alen != blen)
        return 0;
    for (size_t i = 0; i < alen; i++) {
        char x = a[i] == '_' ? '-' : a[i], y = b[i] == '_' ? '-' : b[i];
        if (x != y)
            return 0;
    }
    return 1;
}

const cushim_option *ln_plugin_option(ln_plugin *p, const char *name)
{
    const cushim_plugin_def *d = ln_plugin_def(p);
    if (d == NULL || d->options == NULL)
        return NULL;
    for (const cushim_option *o = d->options; o->name != NULL; o++)
        if (strcmp(o->name, name) == 0)
            return o;
    return NULL;
}

int ln_flag_match(ln_plugins *ps, const char *arg, ln_flag *f, char *why, size_t whylen)
{
    if (whylen > 0)
        why[0] = '\0';
    if (strncmp(arg, "--", 2) != 0)
        return 0;
    const char *body = arg + 2, *eq = strchr(body, '=');
    size_t blen = eq != NULL ? (size_t)(eq - body) : strlen(body);
    /* the plugin whose NAME- begins the flag; the longest NAME when several do */
    ln_plugin *p = NULL;
    size_t plen = 0;
    for (size_t i = 0; i < ps->n; i++) {
        size_t n = strlen(ps->v[i].name);
        if (n + 1 < blen && n >= plen && same_name(body, n, ps->v[i].name) && (body[n] == '-' || body[n] == '_')) {
            p = &ps->v[i];
            plen = n;
        }
    }
    if (p == NULL)
        return 0;
    const cushim_plugin_def *d = ln_plugin_def(p);
    if (d == NULL)
        ln_die("%.*s: the shipped plugin %s cannot be read: %s", (int)(blen + 2), arg, p->path, p->why);
    const char *oname = body + plen + 1;
    size_t olen = blen - plen - 1;
    for (const cushim_option *o = d->options; o != NULL && o->name != NULL; o++) {
        if (same_name(oname, olen, o->name)) {
            f->plugin = p;
            f->opt = o;
            f->name = ln_strndup(arg, blen + 2);
            f->value = eq != NULL ? eq + 1 : NULL;
            return 1;
        }
    }
    snprintf(why, whylen, "the %s plugin declares no option '%.*s': cushim plugins %s", p->name, (int)olen, oname,
             p->name);
    return 0;
}

static const char *type_arg(uint32_t type)
{
    switch (type & CUSHIM_OPT_TYPE_MASK) {
    case CUSHIM_OPT_STRING: return "=STRING";
    case CUSHIM_OPT_INT: return "=INT";
    case CUSHIM_OPT_BOOL: return "[=BOOL]";
    case CUSHIM_OPT_DOUBLE: return "=NUMBER";
    case CUSHIM_OPT_BYTES: return "=SIZE";
    default: return "=?";
    }
}

/* Each shipped plugin's flags, from its declared options: the flag, its type, default and help. */
void ln_plugins_help(ln_plugins *ps, FILE *f)
{
    if (ps->n == 0) {
        fprintf(f, "\n(no shipped plugins found: cushim where)\n");
        return;
    }
    for (size_t i = 0; i < ps->n; i++) {
        ln_plugin *p = &ps->v[i];
        const cushim_plugin_def *d = ln_plugin_def(p);
        fprintf(f, "\n%s:", p->name);
        if (d == NULL) {
            fprintf(f, " cannot be read: %s\n", p->why);
            continue;
        }
        fprintf(f, " %s\n", d->description != NULL ? d->description : "");
        if (d->options == NULL || d->options[0].name == NULL)
            fprintf(f, "  (no options)\n");
        for (const cushim_option *o = d->options; o != NULL && o->name != NULL; o++) {
            ln_str flag = {0};
            ln_str_addf(&flag, "--%s-%s", p->name, o->name);
            for (char *c = flag.s + 2; *c != '\0'; c++)
                if (*c == '_')
                    *c = '-';
            fprintf(f, "  %s%s", flag.s, type_arg(o->type));
            if (o->type & CUSHIM_OPT_REQUIRED)
                fprintf(f, ", required");
            if (o->type & CUSHIM_OPT_REPEAT)
                fprintf(f, ", repeatable");
            if (o->default_value != NULL && o->default_value[0] != '\0')
                fprintf(f, ", default %s", o->default_value);
            if (ln_option_is_selector(p->name, o->name))
                fprintf(f, ", checked before CMD starts");
            fprintf(f, "\n");
            if (o->help != NULL && o->help[0] != '\0')
                fprintf(f, "        %s\n", o->help);
            free(flag.s);
        }
    }
}

void ln_help_run_more(const ln_where *w, FILE *f)
{
    ln_plugins ps;
    ln_plugins_scan(&ps, w->plugindir);
    ln_plugins_help(&ps, f);
}
