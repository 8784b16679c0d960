/*
 * util.c - small helpers of cushim-gen: messages, allocation that exits on
 * out-of-memory (a generator has no better answer), growable buffers and
 * whole-file reads and writes.
 */
#define _GNU_SOURCE
#include "cg.h"
#include "cushim/cushim_meta.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void ut_error(const char *fmt, ...)
{
    va_list ap;
    fputs("cushim-gen: error: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

void ut_note(const char *fmt, ...)
{
    va_list ap;
    fputs("cushim-gen: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static void ut_oom(void)
{
    fputs("cushim-gen: error: out of memory\n", stderr);
    exit(3);
}

void *ut_alloc(size_t n)
{
    void *p = calloc(1, n ? n : 1);
    if (!p)
        ut_oom();
    return p;
}

void *ut_realloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        ut_oom();
    return q;
}

char *ut_strdup(const char *s)
{
    return ut_strndup(s, strlen(s));
}

char *ut_strndup(const char *s, size_t n)
{
    char *d = ut_alloc(n + 1);
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}

char *ut_printf(const char *fmt, ...)
{
    va_list ap;
    char *s = NULL;
    va_start(ap, fmt);
    if (vasprintf(&s, fmt, ap) < 0)
        ut_oom();
    va_end(ap);
    return s;
}

void ut_putn(ut_buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        b->s = ut_realloc(b->s, cap);
        b->cap = cap;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = 0;
}

void ut_puts(ut_buf *b, const char *s)
{
    ut_putn(b, s, strlen(s));
}

void ut_bprintf(ut_buf *b, const char *fmt, ...)
{
    va_list ap;
    char *s = NULL;
    int n;
    va_start(ap, fmt);
    n = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (n < 0)
        ut_oom();
    ut_putn(b, s, (size_t)n);
    free(s);
}

void ut_buf_free(ut_buf *b)
{
    free(b->s);
    b->s = NULL;
    b->len = b->cap = 0;
}

int ut_read_file(const char *path, char **out, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ut_buf b = {0};
    char tmp[65536];
    size_t n;
    if (!f) {
        ut_error("cannot open '%s': %s", path, strerror(errno));
        return CG_EIO;
    }
    while ((n = fread(tmp, 1, sizeof tmp, f)) > 0)
        ut_putn(&b, tmp, n);
    if (ferror(f)) {
        ut_error("cannot read '%s': %s", path, strerror(errno));
        fclose(f);
        ut_buf_free(&b);
        return CG_EIO;
    }
    fclose(f);
    if (!b.s)
        ut_putn(&b, "", 0);
    *out = b.s;
    if (len)
        *len = b.len;
    return CG_OK;
}

int ut_write_file(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f) {
        ut_error("cannot create '%s': %s", path, strerror(errno));
        return CG_EIO;
    }
    if (fwrite(data, 1, len, f) != len || fclose(f) != 0) {
        ut_error("cannot write '%s': %s", path, strerror(errno));
        return CG_EIO;
    }
    return CG_OK;
}

int ut_is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int ut_is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Removes a folder of plain files (the generated tree has no subfolders). */
int ut_rmtree(const char *path)
{
    DIR *d = opendir(path);
    struct dirent *e;
    int rc = CG_OK;
    if (!d)
        return errno == ENOENT ? CG_OK : CG_EIO;
    while ((e = readdir(d)) != NULL) {
        char *p;
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        p = ut_printf("%s/%s", path, e->d_name);
        if (ut_is_dir(p))
            rc |= ut_rmtree(p);
        else if (unlink(p) != 0)
            rc = CG_EIO;
        free(p);
    }
    closedir(d);
    if (rmdir(path) != 0)
        rc = CG_EIO;
    return rc;
}

const char *ut_basename(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

int ut_starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

int ut_ends(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

double ut_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The words of cushim_meta.h's one list of categories, in bit order (index = bit number): the lowest module
   owns them, so the overlay, the roles and the model read them without depending on each other. */
#define UT_CAT(word, bit) #word,
static const char *ut_cat_names[] = { CUSHIM_CATEGORY_LIST(UT_CAT) };
#undef UT_CAT
#define UT_NCATS (int)(sizeof ut_cat_names / sizeof ut_cat_names[0])

int ut_cat_bit(const char *name)
{
    for (int i = 0; i < UT_NCATS; i++)
        if (!strcmp(ut_cat_names[i], name))
            return i;
    return -1;
}

const char *ut_cat_name(int bit)
{
    return bit >= 0 && bit < UT_NCATS ? ut_cat_names[bit] : NULL;
}
