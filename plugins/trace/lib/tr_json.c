/*
 * tr_json.c - JSON text (tr_json.h): a growable buffer, numbers, strings
 * escaped for strict readers, and the text such a string decodes to. Part of
 * the trace's text library (lib/), shared by the plugin, 'cushim stats' and
 * 'cushim flight'.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tr_json.h"

void tr_sb_free(tr_sb *sb)
{
    free(sb->p);
    sb->p = NULL;
    sb->len = sb->cap = 0;
}

int tr_sb_grow_slow(tr_sb *sb, size_t more)
{
    size_t want;
    char *np;
    if (sb->oom)
        return -1;
    want = sb->cap ? sb->cap : 256;
    while (want < sb->len + more + 1)
        want *= 2;
    if ((np = realloc(sb->p, want)) == NULL) {
        sb->oom = 1;
        return -1;
    }
    sb->p = np;
    sb->cap = want;
    return 0;
}

static inline int sb_grow(tr_sb *sb, size_t more)
{
    if (sb->len + more + 1 <= sb->cap)
        return 0;
    return tr_sb_grow_slow(sb, more);
}

void tr_sb_printf(tr_sb *sb, const char *fmt, ...)
{
    va_list ap;
    int n;
    char small[128];
    va_start(ap, fmt);
    n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        tr_sb_putn(sb, small, (size_t)n);
        return;
    }
    if (sb_grow(sb, (size_t)n) != 0)
        return;
    va_start(ap, fmt);
    vsnprintf(sb->p + sb->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    sb->len += (size_t)n;
}

void tr_sb_u64(tr_sb *sb, uint64_t v)
{
    char b[24];
    int i = (int)sizeof b;
    do
        b[--i] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    tr_sb_putn(sb, b + i, sizeof b - (size_t)i);
}

void tr_sb_i64(tr_sb *sb, int64_t v)
{
    if (v < 0) {
        tr_sb_putn(sb, "-", 1);
        tr_sb_u64(sb, (uint64_t)0 - (uint64_t)v);
    } else {
        tr_sb_u64(sb, (uint64_t)v);
    }
}

void tr_sb_hexq(tr_sb *sb, uint64_t v)
{
    static const char digits[] = "0123456789abcdef";
    char b[24];
    int i = (int)sizeof b;
    b[--i] = '"';
    do
        b[--i] = digits[v & 15];
    while ((v >>= 4) != 0);
    b[--i] = 'x';
    b[--i] = '0';
    b[--i] = '"';
    tr_sb_putn(sb, b + i, sizeof b - (size_t)i);
}

static void sb_uescape(tr_sb *sb, unsigned c)
{
    static const char digits[] = "0123456789abcdef";
    char e[6] = {'\\', 'u', '0', '0', digits[(c >> 4) & 15], digits[c & 15]};
    tr_sb_putn(sb, e, 6);
}

/* The length of the well-formed UTF-8 sequence that starts at s[i] and ends before s[lim] (2 to 4), or 0
   (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF - a strict reader such as Python's rejects
   the file otherwise). s[i] >= 0x80. */
static size_t utf8_seq(const char *s, size_t i, size_t lim)
{
    unsigned char c = (unsigned char)s[i];
    size_t k = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc2 ? 1 : 0, j;
    int ok = k > 0 && c <= 0xf4 && i + k < lim;
    if (ok && k > 1) {   /* the second byte's narrower range after E0, ED, F0, F4 */
        unsigned char c1 = (unsigned char)s[i + 1];
        ok = c == 0xe0 ? c1 >= 0xa0 : c == 0xed ? c1 < 0xa0 : c == 0xf0 ? c1 >= 0x90 : c == 0xf4 ? c1 < 0x90 : 1;
    }
    for (j = 1; ok && j <= k; j++)
        ok = ((unsigned char)s[i + j] & 0xc0) == 0x80;
    return ok ? k + 1 : 0;
}

void tr_sb_json_str(tr_sb *sb, const char *s, size_t n, size_t max)
{
    size_t i = 0, run, lim = n < max ? n : max;
    tr_sb_putn(sb, "\"", 1);
    while (i < lim) {
        /* the longest run of characters that need no escape, in one copy */
        for (run = i; run < lim; run++) {
            unsigned char c = (unsigned char)s[run];
            if (c < 0x20 || c == '"' || c == '\\' || c >= 0x7f)
                break;
        }
        if (run > i) {
            tr_sb_putn(sb, s + i, run - i);
            i = run;
            continue;
        }
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            tr_sb_putn(sb, e, 2);
        } else if (c < 0x20 || c == 0x7f) {
            sb_uescape(sb, c);
        } else {
            /* keep well-formed UTF-8, escape every other byte alone */
            size_t k = utf8_seq(s, i, lim);
            if (k > 0) {
                tr_sb_putn(sb, s + i, k);
                i += k - 1;
            } else {
                sb_uescape(sb, c);
            }
        }
        i++;
    }
    if (n > max)
        tr_sb_puts(sb, "...");
    tr_sb_putn(sb, "\"", 1);
}

size_t tr_str_plain(char *out, size_t cap, const char *s, size_t n, size_t max)
{
    size_t i = 0, o = 0, lim = n < max ? n : max;
    if (cap == 0)
        return 0;
    while (i < lim) {
        unsigned char c = (unsigned char)s[i];
        size_t k = c < 0x80 ? 1 : utf8_seq(s, i, lim);
        if (k == 0) {   /* a byte the literal escapes as \u00XX: U+00XX to a JSON reader, two bytes in UTF-8 */
            if (o + 2 >= cap)
                break;
            out[o++] = (char)(0xc0 | c >> 6);
            out[o++] = (char)(0x80 | (c & 0x3f));
            i++;
            continue;
        }
        if (o + k >= cap)
            break;
        memcpy(out + o, s + i, k);   /* a control byte too: \u00XX is that byte again */
        o += k;
        i += k;
    }
    if (n > max && i == lim)   /* the cut's mark, after the whole kept text only */
        for (int d = 0; d < 3 && o + 1 < cap; d++)
            out[o++] = '.';
    out[o] = '\0';
    return o;
}

void tr_sb_us(tr_sb *sb, uint64_t ns)
{
    char f[4] = {'.', (char)('0' + ns % 1000 / 100), (char)('0' + ns % 100 / 10), (char)('0' + ns % 10)};
    tr_sb_u64(sb, ns / 1000);
    tr_sb_putn(sb, f, 4);
}
