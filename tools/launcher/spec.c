/*
 * spec.c - the CUSHIM_PLUGINS syntax on the launcher's side (runtime/loader.c and runtime/options.c read it):
 * specs separated by ';' or a newline, SPEC = [?]NAME-OR-PATH[:KEY=VALUE{,KEY=VALUE}], '\' escaping the next
 * character. Values and paths the launcher puts in a spec are escaped here (',' ';' '\' as '\,' '\;' '\\', a
 * value's trailing spaces as '\ ' since the shim trims a spec's end, and ':' too in a path); a --plugin SPEC is
 * the user's own syntax and only checked; the launcher's specs are appended to the environment's without
 * changing what that says; and an environment spec loading a plugin is recognised as the shim would read it.
 * docs/security.md, "The launcher".
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <string.h>

#include "launcher.h"

void ln_escape_value(ln_str *out, const char *v)
{
    size_t n = strlen(v), keep = n;
    while (keep > 0 && v[keep - 1] == ' ')
        keep--;
    for (size_t i = 0; i < keep; i++) {
        if (v[i] == '\\' || v[i] == ',' || v[i] == ';')
            ln_str_addc(out, '\\');
        ln_str_addc(out, v[i]);
    }
    for (size_t i = keep; i < n; i++)
        ln_str_add(out, "\\ ");
    if (out->s == NULL)
        ln_str_add(out, "");
}

void ln_escape_path(ln_str *out, const char *v)
{
    for (; *v != '\0'; v++) {
        if (*v == '\\' || *v == ':' || *v == ',' || *v == ';')
            ln_str_addc(out, '\\');
        ln_str_addc(out, *v);
    }
    if (out->s == NULL)
        ln_str_add(out, "");
}

int ln_ends_in_escape(const char *s, size_t n)
{
    size_t k = 0;
    while (k < n && s[n - 1 - k] == '\\')
        k++;
    return k % 2 == 1;
}

/* The NAME-OR-PATH of one spec as the shim takes it: white space around it and one leading '?' dropped. */
static int names_plugin(const char *what, size_t n, const char *name)
{
    size_t a = 0, b = n;
    while (a < b && isspace((unsigned char)what[a]))
        a++;
    while (b > a && isspace((unsigned char)what[b - 1]))
        b--;
    if (a < b && what[a] == '?') {
        size_t c = a + 1;
        while (c < b && isspace((unsigned char)what[c]))
            c++;
        if (c < b)   /* a lone '?' is the name itself */
            a = c;
    }
    size_t len = b - a, nl = strlen(name);
    if (len == nl && memcmp(what + a, name, nl) == 0)
        return 1;
    /* a path to NAME.so */
    return len >= nl + 4 && what[b - nl - 4] == '/' && memcmp(what + b - nl - 3, name, nl) == 0 &&
           memcmp(what + b - 3, ".so", 3) == 0;
}

int ln_loads_plugin(const char *list, const char *name)
{
    ln_str what = {0};
    int in_what = 1;
    size_t len = strlen(list);
    for (size_t i = 0; i <= len; i++) {
        char c = list[i];
        if (c == '\\' && i + 1 < len) {
            i++;
            if (in_what)
                ln_str_addc(&what, list[i]);
            continue;
        }
        if (c == '\0' || c == ';' || c == '\n') {
            if (names_plugin(ln_str_get(&what), what.len, name))
                return 1;
            what.len = 0;
            in_what = 1;
        } else if (c == ':') {
            in_what = 0;
        } else if (in_what) {
            ln_str_addc(&what, c);
        }
    }
    return 0;
}

/* OLD (the environment's CUSHIM_PLUGINS) followed by OURS: ours start after its last spec. A lone '\' at its end
   would escape our ';' (it is doubled: '\\' reads as the same one '\'); a ';' or newline at its end ends it
   only when not escaped itself. */
char *ln_plugins_join(const char *old, const char *ours)
{
    ln_str b = {0};
    ln_str_add(&b, old);
    if (ln_ends_in_escape(b.s, b.len))
        ln_str_addc(&b, '\\');
    if (b.len > 0) {
        char last = b.s[b.len - 1];
        if (last == ';' || last == '\n') {
            if (ln_ends_in_escape(b.s, b.len - 1))
                ln_str_addc(&b, ';');
        } else {
            ln_str_addc(&b, ';');
        }
    }
    ln_str_add(&b, ours);
    return b.s;
}

/* One --plugin=SPEC: one spec (no unescaped ';', no lone '\' at its end: it would escape the ';' after it), a
   relative plugin path made absolute (the directory we prepend escaped, the part the user wrote already in the
   spec syntax), a shipped NAME that is not there refused now (unless optional: every CUDA call would fail). */
char *ln_plugin_arg(const ln_where *w, const char *arg)
{
    const char *spec = arg;
    for (const char *p = spec; *p != '\0'; p++) {
        if (*p == '\\' && p[1] != '\0')
            p++;
        else if (*p == ';')
            ln_bad("run", "--plugin=%s: one SPEC per --plugin (write a ';' in a value as '\\;')", spec);
    }
    if (ln_ends_in_escape(spec, strlen(spec)))
        ln_bad("run", "--plugin=%s: a lone '\\' at the end would escape the ';' after it (write a '\\' as '\\\\')",
               spec);
    const char *opt = "";
    if (spec[0] == '?') {
        opt = "?";
        spec++;
    }
    size_t nplen = strcspn(spec, ":");
    char *np = ln_strndup(spec, nplen);
    const char *rest = spec + nplen;
    if (np[0] == '\0')
        ln_bad("run", "--plugin: no plugin name or path in '%s'", arg);
    ln_str out = {0};
    ln_str_add(&out, opt);
    if (strchr(np, '/') != NULL) {
        if (np[0] != '/') {
            char *label = ln_fmt("--plugin=%s", arg);
            char *dir = ln_absolute(label, ".");   /* $PWD/. */
            dir[strlen(dir) - 2] = '\0';
            const char *rel = np;
            while (rel[0] == '.' && rel[1] == '/')
                rel += 2;
            ln_escape_path(&out, dir);
            ln_str_addc(&out, '/');
            ln_str_add(&out, rel);
        } else {
            ln_str_add(&out, np);
        }
    } else {
        ln_str_add(&out, np);
        if (opt[0] == '\0' && w->shim != NULL) {
            char *so = ln_fmt("%s/%s.so", w->plugindir != NULL ? w->plugindir : "", np);
            if (w->plugindir == NULL || !ln_is_file(so)) {
                char *dir = w->plugindir;
                if (dir == NULL) {
                    dir = ln_strdup(w->shim);
                    *strrchr(dir, '/') = '\0';
                    dir = ln_fmt("%s/cushim/plugins", dir);
                }
                ln_die("--plugin: no shipped plugin '%s' in %s (cushim plugins lists them; a path needs a '/')", np,
                       dir);
            }
        }
    }
    ln_str_add(&out, rest);
    return out.s;
}

void ln_spec_set(ln_spec *s, const char *flag, const char *key, const char *raw, int repeat)
{
    ln_item *it = NULL;
    if (!repeat)
        for (size_t i = 0; i < s->n; i++)
            if (strcmp(s->items[i].key, key) == 0)
                it = &s->items[i];
    if (it == NULL) {
        if (s->n == s->cap) {
            s->cap = s->cap != 0 ? 2 * s->cap : 8;
            s->items = ln_grow(s->items, s->cap * sizeof *s->items);
        }
        it = &s->items[s->n++];
        it->key = ln_strdup(key);
    }
    ln_str v = {0};
    ln_escape_value(&v, raw);
    it->value = v.s;
    it->raw = ln_strdup(raw);
    it->flag = ln_strdup(flag);
    it->repeat = repeat;
}

const ln_item *ln_spec_get(const ln_spec *s, const char *key)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->items[i].key, key) == 0)
            return &s->items[i];
    return NULL;
}

void ln_spec_text(ln_str *out, const ln_spec *s)
{
    if (s->plugin == NULL) {
        ln_str_add(out, s->text);
        return;
    }
    ln_str_add(out, s->plugin);
    for (size_t i = 0; i < s->n; i++) {
        ln_str_addc(out, i == 0 ? ':' : ',');
        ln_str_add(out, s->items[i].key);
        ln_str_addc(out, '=');
        ln_str_add(out, s->items[i].value);
    }
}
