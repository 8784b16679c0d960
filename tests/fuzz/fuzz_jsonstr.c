/*
 * fuzz_jsonstr.c - libFuzzer harness for the trace writer's JSON strings (tr_sb_json_str,
 * plugins/trace/lib/tr_json.c): every string a trace file holds - call parameters (file names, kernel and
 * symbol names), NVTX messages, thread names - passes through it, and those bytes come from the
 * application. The first input byte picks the bound (max), the rest is the string. Checked for every input,
 * by a reader written apart from the writer:
 *   - the output is one JSON string: quoted, no raw control byte, every escape one of \" \\ \u00XX;
 *   - its raw bytes are well-formed UTF-8 (RFC 3629: decoded code points, no overlong form, no surrogate,
 *     none past U+10FFFF), so a strict reader (Python's json) loads the file;
 *   - read back (\u00XX as the byte XX) it is the input's first min(n, max) bytes, then "..." when cut;
 *   - tr_str_plain gives what a JSON reader decodes from it (\u00XX as U+00XX, in UTF-8), and with a smaller
 *     buffer a prefix of that, cut before a character that does not fit.
 */
#include "fuzz_common.h"
#include "tr_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int fz_hex(int c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* The length of the well-formed UTF-8 sequence at p (at most n bytes), from its decoded code point; 0 if
   none. */
static size_t fz_utf8(const unsigned char *p, size_t n)
{
    size_t k;
    uint32_t cp, min;
    if (p[0] < 0x80)
        return 1;
    if ((p[0] & 0xe0) == 0xc0)
        k = 2, cp = p[0] & 0x1fu, min = 0x80;
    else if ((p[0] & 0xf0) == 0xe0)
        k = 3, cp = p[0] & 0x0fu, min = 0x800;
    else if ((p[0] & 0xf8) == 0xf0)
        k = 4, cp = p[0] & 0x07u, min = 0x10000;
    else
        return 0;
    if (k > n)
        return 0;
    for (size_t j = 1; j < k; j++) {
        if ((p[j] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (p[j] & 0x3fu);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return k;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    size_t max = data[0] == 0xff ? (size_t)-1 : data[0];
    const char *s = (const char *)data + 1;
    size_t n = size - 1;
    tr_sb sb = {0};
    tr_sb_json_str(&sb, s, n, max);
    FUZZ_CHECK(!sb.oom && sb.p != NULL);
    const unsigned char *o = (const unsigned char *)sb.p;
    size_t len = sb.len, i = 1, back = 0, keep = n < max ? n : max;
    unsigned char *got = malloc(len + 1), *dec = malloc(2 * len + 1);
    size_t ndec = 0;
    FUZZ_CHECK(got != NULL && dec != NULL);
    FUZZ_CHECK(len >= 2 && o[0] == '"' && o[len - 1] == '"');
    while (i < len - 1) {
        if (o[i] == '\\') {
            FUZZ_CHECK(i + 1 < len - 1);
            if (o[i + 1] == '"' || o[i + 1] == '\\') {
                got[back++] = o[i + 1];
                dec[ndec++] = o[i + 1];
                i += 2;
                continue;
            }
            FUZZ_CHECK(o[i + 1] == 'u' && i + 5 < len - 1 && o[i + 2] == '0' && o[i + 3] == '0');
            int hi = fz_hex(o[i + 4]), lo = fz_hex(o[i + 5]);
            FUZZ_CHECK(hi >= 0 && lo >= 0);
            got[back++] = (unsigned char)(hi << 4 | lo);
            if (hi >= 8) {   /* U+0080..U+00FF */
                dec[ndec++] = (unsigned char)(0xc0 | (hi << 4 | lo) >> 6);
                dec[ndec++] = (unsigned char)(0x80 | ((hi << 4 | lo) & 0x3f));
            } else {
                dec[ndec++] = (unsigned char)(hi << 4 | lo);
            }
            i += 6;
            continue;
        }
        FUZZ_CHECK(o[i] >= 0x20 && o[i] != 0x7f && o[i] != '"');
        size_t k = fz_utf8(o + i, len - 1 - i);
        FUZZ_CHECK(k > 0);
        memcpy(got + back, o + i, k);
        memcpy(dec + ndec, o + i, k);
        back += k;
        ndec += k;
        i += k;
    }
    {   /* tr_str_plain: the decoded text; with 'cap' bytes, a prefix of it ending on a character's end */
        char *plain = malloc(ndec + 1);
        size_t cap = n > 0 ? (unsigned char)s[0] % (ndec + 1) + 1 : 1, m;
        FUZZ_CHECK(plain != NULL);
        FUZZ_CHECK(tr_str_plain(plain, ndec + 1, s, n, max) == ndec && memcmp(plain, dec, ndec) == 0 &&
                   plain[ndec] == '\0');
        m = tr_str_plain(plain, cap, s, n, max);
        FUZZ_CHECK(m < cap && plain[m] == '\0' && memcmp(plain, dec, m) == 0);
        FUZZ_CHECK(m == ndec || n > max || (dec[m] & 0xc0) != 0x80);
        free(plain);
    }
    if (n > max) {
        FUZZ_CHECK(back == keep + 3 && memcmp(got + keep, "...", 3) == 0);
        back = keep;
    }
    FUZZ_CHECK(back == keep && memcmp(got, s, keep) == 0);
    free(got);
    free(dec);
    tr_sb_free(&sb);
    return 0;
}
