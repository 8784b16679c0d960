/*
 * tr_json.h - JSON text for the trace's files and tables: a growable text
 * buffer, numbers in the C locale's form, strings escaped so that strict
 * readers load them. Host-free; part of the trace's text library (lib/),
 * linked by the plugin, 'cushim stats', the flight recorder's 'cushim flight'
 * (its report is written into a tr_sb) and the unit tests.
 */
#ifndef TR_JSON_H
#define TR_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* A growable text buffer. On allocation failure it stops growing and 'oom' is set. */
typedef struct tr_sb {
    char *p;
    size_t len, cap;
    int oom;
} tr_sb;

void tr_sb_free(tr_sb *sb);
/* Room for 'more' bytes and the terminator: 0, or -1 (out of memory: the buffer stays as it was, 'oom' set). */
int tr_sb_grow_slow(tr_sb *sb, size_t more);
/* Inline: the writer appends a few bytes at a time, most of them string literals whose length the compiler
   knows (no strlen, no memcpy call). */
static inline void tr_sb_putn(tr_sb *sb, const char *s, size_t n)
{
    if (sb->len + n + 1 > sb->cap && tr_sb_grow_slow(sb, n) != 0)
        return;
    memcpy(sb->p + sb->len, s, n);
    sb->len += n;
    sb->p[sb->len] = '\0';
}
static inline void tr_sb_puts(tr_sb *sb, const char *s)
{
    tr_sb_putn(sb, s, strlen(s));
}
void tr_sb_printf(tr_sb *sb, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void tr_sb_u64(tr_sb *sb, uint64_t v);
void tr_sb_i64(tr_sb *sb, int64_t v);
/* "0x..." with the quotes */
void tr_sb_hexq(tr_sb *sb, uint64_t v);
/* A JSON string literal of at most 'max' bytes of 's' (then "..."). */
void tr_sb_json_str(tr_sb *sb, const char *s, size_t n, size_t max);
/* The text such a literal holds, as a JSON reader ('cushim stats', Python's json) decodes it: the bytes kept,
   a control byte (\u00XX) itself, a byte that is not UTF-8 (\u00XX) as U+00XX in UTF-8; into 'out' (cut
   before what does not fit in 'cap' - 1 bytes, NUL-terminated); its length. The at-exit tables name rows with
   it, so that they equal the tables read from the file. A NUL byte (never in a C string) is not handled. */
size_t tr_str_plain(char *out, size_t cap, const char *s, size_t n, size_t max);
/* ns as microseconds with 3 decimals: exact. */
void tr_sb_us(tr_sb *sb, uint64_t ns);

/* A number printf's %f, %g or %e wrote, put in the C locale's form in place: the program may have set a locale
   whose decimal point is ',' (de_DE, fr_FR) or a multi-byte character, and JSON and the tables want '.'. Without
   the ' flag those conversions write only digits, a sign, an exponent's letter, "inf"/"nan" and the decimal
   point: each run of other bytes becomes one '.'. Returns the new length. */
static inline int tr_c_number_byte(unsigned char c)   /* a byte printf writes that is not the decimal point */
{
    return (c >= '0' && c <= '9') || c == '-' || c == '+' || ((c | 32) >= 'a' && (c | 32) <= 'z');
}
static inline size_t tr_c_number(char *s)
{
    size_t i = 0, o = 0;
    while (s[i] != '\0') {
        if (tr_c_number_byte((unsigned char)s[i])) {
            s[o++] = s[i++];
            continue;
        }
        while (s[i] != '\0' && !tr_c_number_byte((unsigned char)s[i]))   /* the decimal point: one or more bytes */
            i++;
        s[o++] = '.';
    }
    s[o] = '\0';
    return o;
}

#endif /* TR_JSON_H */
