/*
 * util.c - the launcher's small helpers: growable strings, values shown in one-line messages, and paths made
 * absolute the way the bash launcher did ($PWD/PATH: the working directory as the user's shell names it, not a
 * lexical clean-up, which could change the meaning of '..' after a symbolic link).
 * The launcher runs for milliseconds and then execs: memory is not freed, and running out of it ends the
 * launcher with one line.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launcher.h"

void *ln_alloc(size_t n)
{
    void *p = calloc(1, n != 0 ? n : 1);
    if (p == NULL)
        ln_die("out of memory");
    return p;
}

void *ln_grow(void *p, size_t n)
{
    void *q = realloc(p, n != 0 ? n : 1);
    if (q == NULL)
        ln_die("out of memory");
    return q;
}

char *ln_strndup(const char *s, size_t n)
{
    char *d = ln_alloc(n + 1);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *ln_strdup(const char *s)
{
    return ln_strndup(s, strlen(s));
}

void ln_str_addn(ln_str *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap != 0 ? b->cap : 64;
        while (cap < b->len + n + 1)
            cap *= 2;
        b->s = ln_grow(b->s, cap);
        b->cap = cap;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

void ln_str_add(ln_str *b, const char *s)
{
    ln_str_addn(b, s, strlen(s));
}

void ln_str_addc(ln_str *b, char c)
{
    ln_str_addn(b, &c, 1);
}

static void ln_str_vaddf(ln_str *b, const char *fmt, va_list ap)
{
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        ln_die("out of memory");
    ln_str_add(b, s);
    free(s);
}

void ln_str_addf(ln_str *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ln_str_vaddf(b, fmt, ap);
    va_end(ap);
}

const char *ln_str_get(const ln_str *b)
{
    return b->s != NULL ? b->s : "";
}

char *ln_fmt(const char *fmt, ...)
{
    ln_str b = {0};
    va_list ap;
    va_start(ap, fmt);
    ln_str_vaddf(&b, fmt, ap);
    va_end(ap);
    return b.s != NULL ? b.s : ln_strdup("");
}

int ln_has_cntrl(const char *s)
{
    for (; *s != '\0'; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s == 0x7f)
            return 1;
    return 0;
}

char *ln_shown(const char *v)
{
    ln_str b = {0};
    ln_str_addc(&b, '\'');
    for (; *v != '\0'; v++) {
        unsigned char c = (unsigned char)*v;
        if (c < 0x20 || c == 0x7f)
            ln_str_addf(&b, "\\x%02x", c);
        else
            ln_str_addc(&b, (char)c);
    }
    ln_str_addc(&b, '\'');
    return b.s;
}

/* As a POSIX shell sets $PWD at start: the inherited value when it is absolute and names the working directory
   itself (a path through a symbolic link, as the user typed it), else the physical one. */
const char *ln_pwd(void)
{
    static char *pwd;
    if (pwd != NULL)
        return pwd;
    const char *env = getenv("PWD");
    struct stat a, b;
    if (env != NULL && env[0] == '/' && stat(env, &a) == 0 && stat(".", &b) == 0 && a.st_dev == b.st_dev &&
        a.st_ino == b.st_ino) {
        pwd = ln_strdup(env);
        return pwd;
    }
    pwd = getcwd(NULL, 0);
    if (pwd == NULL)
        ln_die("cannot tell the current directory: %s; give absolute paths", strerror(errno));
    return pwd;
}

char *ln_absolute(const char *label, const char *path)
{
    if (path[0] == '/')
        return ln_strdup(path);
    const char *pwd = ln_pwd();
    if (ln_has_cntrl(pwd))
        ln_die("%s: the current directory %s has a control character in its name; give an absolute path", label,
               ln_shown(pwd));
    while (path[0] == '.' && path[1] == '/')
        path += 2;
    return ln_fmt("%s/%s", pwd, path);
}

/* realpath -s: absolute against the physical working directory, then '.', '..' and repeated '/' removed as
   text (symbolic links kept). */
char *ln_clean_path(const char *path)
{
    ln_str in = {0}, out = {0};
    if (path[0] != '/') {
        char *cwd = getcwd(NULL, 0);
        ln_str_add(&in, cwd != NULL ? cwd : ln_pwd());
        ln_str_addc(&in, '/');
        free(cwd);
    }
    ln_str_add(&in, path);
    const char *p = ln_str_get(&in);
    while (*p != '\0') {
        while (*p == '/')
            p++;
        const char *e = p;
        while (*e != '\0' && *e != '/')
            e++;
        size_t n = (size_t)(e - p);
        if (n == 0 || (n == 1 && p[0] == '.')) {
            /* nothing */
        } else if (n == 2 && p[0] == '.' && p[1] == '.') {
            while (out.len > 0 && out.s[out.len - 1] != '/')
                out.len--;
            if (out.len > 0)
                out.len--;   /* the '/' before the component */
            if (out.s != NULL)
                out.s[out.len] = '\0';
        } else {
            ln_str_addc(&out, '/');
            ln_str_addn(&out, p, n);
        }
        p = e;
    }
    if (out.len == 0)
        ln_str_addc(&out, '/');
    free(in.s);
    return out.s;
}

int ln_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

int ln_is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}
