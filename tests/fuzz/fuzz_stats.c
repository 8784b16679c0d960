/*
 * fuzz_stats.c - libFuzzer harness for 'cushim stats' (tools/cushim-stats.c, built with
 * CUSHIM_STATS_NO_MAIN, linked with yajl): its reader (yajl's callbacks, the events array's
 * verdicts: whole, cut short, malformed, refused by a bound), gzip input, the otherData budget,
 * and --close. The input is a file (a memfd, named through /proc/self/fd). Checked for every
 * input: the status is 0 or 1, a copy --close wrote is itself read back with status 0, what
 * --format=json prints for a file read with status 0 is strict JSON (RFC 8259: no control byte
 * in a string, UTF-8 only), and the tables are UTF-8 with no control character but their line
 * ends (no C0, DEL, C1 nor bidirectional control), whatever bytes the names in the file held.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_common.h"

int cushim_stats_main(int argc, char **argv);
extern int cushim_stats_quiet;
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int in_fd = -1, out_fd = -1, json_fd = -1, table_fd = -1;
static char in_path[64], out_path[64];

/* ---- a strict JSON checker (structure, strings, numbers; depth bounded) ---- */
typedef struct jc {
    const unsigned char *p, *end;
} jc;

static void jc_ws(jc *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\n' || *j->p == '\r' || *j->p == '\t'))
        j->p++;
}

static int jc_str(jc *j)
{
    if (j->p >= j->end || *j->p != '"')
        return 0;
    for (j->p++; j->p < j->end && *j->p != '"';) {
        unsigned c = *j->p, k;
        if (c < 0x20)
            return 0;
        if (c == '\\') {
            if (++j->p >= j->end)
                return 0;
            if (*j->p == 'u') {
                for (int i = 0; i < 4; i++)
                    if (++j->p >= j->end || !isxdigit(*j->p))
                        return 0;
            } else if (strchr("\"\\/bfnrt", *j->p) == NULL) {
                return 0;
            }
            j->p++;
            continue;
        }
        k = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
        if (k == 0 || (k == 2 && c < 0xc2) || (k == 4 && c > 0xf4) || j->p + k > j->end)
            return 0;
        for (unsigned i = 1; i < k; i++)
            if ((j->p[i] & 0xc0) != 0x80)
                return 0;
        if ((k == 3 && ((c == 0xe0 && j->p[1] < 0xa0) || (c == 0xed && j->p[1] >= 0xa0))) ||
            (k == 4 && ((c == 0xf0 && j->p[1] < 0x90) || (c == 0xf4 && j->p[1] >= 0x90))))
            return 0;
        j->p += k;
    }
    if (j->p >= j->end)
        return 0;
    j->p++;
    return 1;
}

static int jc_value(jc *j, int depth)
{
    jc_ws(j);
    if (j->p >= j->end || depth > 16)
        return 0;
    if (*j->p == '"')
        return jc_str(j);
    if (*j->p == '{' || *j->p == '[') {
        char close = *j->p == '{' ? '}' : ']';
        j->p++;
        jc_ws(j);
        if (j->p < j->end && *j->p == close)
            return j->p++, 1;
        for (;;) {
            if (close == '}') {
                jc_ws(j);
                if (!jc_str(j))
                    return 0;
                jc_ws(j);
                if (j->p >= j->end || *j->p++ != ':')
                    return 0;
            }
            if (!jc_value(j, depth + 1))
                return 0;
            jc_ws(j);
            if (j->p < j->end && *j->p == ',') {
                j->p++;
                continue;
            }
            return j->p < j->end && *j->p++ == close;
        }
    }
    if (j->end - j->p >= 4 && (!memcmp(j->p, "true", 4) || !memcmp(j->p, "null", 4)))
        return j->p += 4, 1;
    if (j->end - j->p >= 5 && !memcmp(j->p, "false", 5))
        return j->p += 5, 1;
    {   /* -?digits[.digits] */
        const unsigned char *from = j->p;
        if (*j->p == '-')
            j->p++;
        if (j->p >= j->end || !isdigit(*j->p))
            return 0;
        while (j->p < j->end && isdigit(*j->p))
            j->p++;
        if (j->p < j->end && *j->p == '.') {
            j->p++;
            if (j->p >= j->end || !isdigit(*j->p))
                return 0;
            while (j->p < j->end && isdigit(*j->p))
                j->p++;
        }
        return j->p > from;
    }
}

/* Text a terminal may be sent: well-formed UTF-8 (RFC 3629), no control character but '\n', no bidirectional
   control (U+061C, U+200E-U+200F, U+202A-U+202E, U+2066-U+2069). */
static int terminal_safe(const unsigned char *p, size_t n)
{
    const unsigned char *end = p + n;
    while (p < end) {
        unsigned c = *p, k;
        uint32_t cp, min;
        if (c < 0x80) {
            if ((c < 0x20 && c != '\n') || c == 0x7f)
                return 0;
            p++;
            continue;
        }
        k = (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
        if (k == 0 || p + k > end)
            return 0;
        cp = c & (k == 2 ? 0x1fu : k == 3 ? 0x0fu : 0x07u);
        min = k == 2 ? 0x80 : k == 3 ? 0x800 : 0x10000;
        for (unsigned i = 1; i < k; i++) {
            if ((p[i] & 0xc0) != 0x80)
                return 0;
            cp = cp << 6 | (p[i] & 0x3fu);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || cp <= 0x9f || cp == 0x61c ||
            cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069))
            return 0;
        p += k;
    }
    return 1;
}

/* cushim stats IN: its stdout (the tables) into the memfd table_fd, checked; its status returned. */
static int table_run(void)
{
    char prog[] = "cushim-stats";
    char *argv[] = {prog, in_path, NULL};
    static unsigned char out[1 << 22];
    int rc, saved;
    ssize_t n;
    fflush(stdout);
    FUZZ_CHECK(ftruncate(table_fd, 0) == 0 && lseek(table_fd, 0, SEEK_SET) == 0);
    saved = dup(1);
    FUZZ_CHECK(saved >= 0 && dup2(table_fd, 1) == 1);
    rc = cushim_stats_main(2, argv);
    fflush(stdout);
    FUZZ_CHECK(dup2(saved, 1) == 1);
    close(saved);
    n = pread(table_fd, out, sizeof out, 0);
    FUZZ_CHECK(n >= 0);
    if ((size_t)n < sizeof out)
        FUZZ_CHECK(terminal_safe(out, (size_t)n));
    return rc;
}

/* cushim stats --format=json IN: its stdout into the memfd json_fd, checked; its status returned. */
static int json_run(void)
{
    char prog[] = "cushim-stats", fmt[] = "--format=json";
    char *argv[] = {prog, fmt, in_path, NULL};
    static unsigned char out[1 << 22];
    int rc, saved;
    ssize_t n;
    jc j;
    fflush(stdout);
    FUZZ_CHECK(ftruncate(json_fd, 0) == 0 && lseek(json_fd, 0, SEEK_SET) == 0);
    saved = dup(1);
    FUZZ_CHECK(saved >= 0 && dup2(json_fd, 1) == 1);
    rc = cushim_stats_main(3, argv);
    fflush(stdout);
    FUZZ_CHECK(dup2(saved, 1) == 1);
    close(saved);
    n = pread(json_fd, out, sizeof out, 0);
    FUZZ_CHECK(n >= 0);
    if (rc == 0 && (size_t)n < sizeof out) {
        j.p = out;
        j.end = out + n;
        FUZZ_CHECK(jc_value(&j, 0));
        jc_ws(&j);
        FUZZ_CHECK(j.p == j.end);
    }
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char prog[] = "cushim-stats", close_opt[] = "--close";
    int rc;
    if (in_fd < 0) {
        in_fd = memfd_create("fuzz-in", 0);
        out_fd = memfd_create("fuzz-out", 0);
        json_fd = memfd_create("fuzz-json", 0);
        table_fd = memfd_create("fuzz-table", 0);
        FUZZ_CHECK(in_fd >= 0 && out_fd >= 0 && json_fd >= 0 && table_fd >= 0);
        snprintf(in_path, sizeof in_path, "/proc/self/fd/%d", in_fd);
        snprintf(out_path, sizeof out_path, "/proc/self/fd/%d", out_fd);
        cushim_stats_quiet = 1;
        FUZZ_CHECK(freopen("/dev/null", "w", stdout) != NULL);   /* the tables */
    }
    FUZZ_CHECK(ftruncate(in_fd, 0) == 0);
    FUZZ_CHECK(size == 0 || pwrite(in_fd, data, size, 0) == (ssize_t)size);
    rc = table_run();
    FUZZ_CHECK(rc == 0 || rc == 1);
    FUZZ_CHECK(json_run() == rc);   /* the same file, the same verdict */
    {
        char *argv[] = {prog, close_opt, in_path, out_path, NULL};
        FUZZ_CHECK(ftruncate(out_fd, 0) == 0);
        rc = cushim_stats_main(4, argv);
        FUZZ_CHECK(rc == 0 || rc == 1);
    }
    if (rc == 0) {   /* a closed copy reads back */
        char *argv[] = {prog, out_path, NULL};
        FUZZ_CHECK(cushim_stats_main(2, argv) == 0);
    }
    return 0;
}
