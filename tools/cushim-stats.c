/*
 * cushim-stats.c - 'cushim stats FILE': the summary tables of a trace file the
 * trace plugin wrote (.json or .json.gz): the CUDA API table (Nsight Systems'
 * cuda_api_sum columns) and, when the trace holds GPU work, the kernel table
 * (cuda_gpu_kern_sum). The tables are printed by the plugin's own code
 * (plugins/trace/tr_stats.c) from the same nanosecond durations, so they equal
 * the table printed at the traced program's exit.
 *
 * A small JSON reader: events are the objects of the top-level "traceEvents"
 * array; an API call is a "ph":"X" event of category cuda_driver or
 * cuda_runtime, a kernel one of category kernel; "dur" is microseconds with
 * up to three decimals, read exactly as nanoseconds.
 *
 * A file that ends early - its process was killed by SIGKILL (the OOM killer)
 * or left through _exit, which no handler sees, or it is still being written -
 * is summarised from its complete events, with a warning. 'cushim stats --close
 * FILE OUT' writes a copy that ends properly (its complete events, then the
 * closing brackets and "otherData":{"truncated":true}), which JSON readers and
 * the Perfetto UI open; OUT ending in .gz is compressed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "tr_stats.h"

typedef struct js {
    const char *p, *end;
    int err;
} js;

static void ws(js *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\n' || *j->p == '\r' || *j->p == '\t'))
        j->p++;
}

/* A string: its decoded text into out (bounded; escapes other than \" \\ \/ kept raw). */
static int str(js *j, char *out, size_t cap)
{
    size_t o = 0;
    if (j->p >= j->end || *j->p != '"')
        return j->err = 1, -1;
    j->p++;
    while (j->p < j->end && *j->p != '"') {
        char c = *j->p++;
        if (c == '\\' && j->p < j->end) {
            char e = *j->p++;
            c = e == 'n' ? '\n' : e == 't' ? '\t' : e;
            if (e == 'u') {
                for (int k = 0; k < 4 && j->p < j->end; k++)
                    j->p++;
                c = '?';
            }
        }
        if (out != NULL && o + 1 < cap)
            out[o++] = c;
    }
    if (j->p >= j->end)
        return j->err = 1, -1;
    j->p++;
    if (out != NULL)
        out[o] = '\0';
    return 0;
}

static int skip(js *j, int depth);

static int skip_container(js *j, char close, int depth)
{
    j->p++;
    ws(j);
    if (j->p < j->end && *j->p == close) {
        j->p++;
        return 0;
    }
    for (;;) {
        ws(j);
        if (close == '}') {
            if (str(j, NULL, 0) != 0)
                return -1;
            ws(j);
            if (j->p >= j->end || *j->p++ != ':')
                return j->err = 1, -1;
        }
        if (skip(j, depth + 1) != 0)
            return -1;
        ws(j);
        if (j->p < j->end && *j->p == ',') {
            j->p++;
            continue;
        }
        if (j->p < j->end && *j->p == close) {
            j->p++;
            return 0;
        }
        return j->err = 1, -1;
    }
}

static int skip(js *j, int depth)
{
    ws(j);
    if (j->p >= j->end || depth > 64)
        return j->err = 1, -1;
    switch (*j->p) {
    case '"': return str(j, NULL, 0);
    case '{': return skip_container(j, '}', depth);
    case '[': return skip_container(j, ']', depth);
    default:
        while (j->p < j->end && strchr(",}] \n\r\t", *j->p) == NULL)
            j->p++;
        return 0;
    }
}

/* "12.345" microseconds -> 12345 ns */
static unsigned long long us_to_ns(const char *s, const char *e)
{
    unsigned long long v = 0;
    int frac = -1;
    for (; s < e; s++) {
        if (*s == '.') {
            frac = 0;
            continue;
        }
        if (*s < '0' || *s > '9')
            break;
        if (frac >= 3)
            continue;
        v = v * 10 + (unsigned long long)(*s - '0');
        if (frac >= 0)
            frac++;
    }
    for (int k = frac < 0 ? 0 : frac; k < 3; k++)
        v *= 10;
    return v;
}

static int event(js *j, tr_stats *api, tr_stats *kern)
{
    char key[32], ph[8] = "", cat[48] = "", name[8192] = "";
    unsigned long long dur = 0;
    int has_dur = 0;
    ws(j);
    if (j->p >= j->end || *j->p != '{')
        return skip(j, 1);
    j->p++;
    ws(j);
    if (j->p < j->end && *j->p == '}') {
        j->p++;
        return 0;
    }
    for (;;) {
        ws(j);
        if (str(j, key, sizeof key) != 0)
            return -1;
        ws(j);
        if (j->p >= j->end || *j->p++ != ':')
            return j->err = 1, -1;
        ws(j);
        if (!strcmp(key, "ph") && j->p < j->end && *j->p == '"')
            str(j, ph, sizeof ph);
        else if (!strcmp(key, "cat") && j->p < j->end && *j->p == '"')
            str(j, cat, sizeof cat);
        else if (!strcmp(key, "name") && j->p < j->end && *j->p == '"')
            str(j, name, sizeof name);
        else if (!strcmp(key, "dur")) {
            const char *s = j->p;
            skip(j, 1);
            dur = us_to_ns(s, j->p);
            has_dur = 1;
        } else if (skip(j, 1) != 0)
            return -1;
        ws(j);
        if (j->p < j->end && *j->p == ',') {
            j->p++;
            continue;
        }
        if (j->p < j->end && *j->p == '}') {
            j->p++;
            break;
        }
        return j->err = 1, -1;
    }
    if (strcmp(ph, "X") != 0 || !has_dur)
        return 0;
    if (!strcmp(cat, "cuda_driver") || !strcmp(cat, "cuda_runtime"))
        tr_stats_add(api, name, dur);
    else if (!strcmp(cat, "kernel"))
        tr_stats_add(kern, name[0] ? name : "?", dur);
    return 0;
}

/* The file's text (gunzipped); *cut set when a compressed file ends early (what came before it is kept). */
static char *slurp(const char *path, size_t *n, int *cut)
{
    gzFile f = gzopen(path, "rb");
    size_t cap = 1 << 20, len = 0;
    char *buf;
    int k;
    if (f == NULL)
        return NULL;
    if ((buf = malloc(cap)) == NULL) {
        gzclose(f);
        return NULL;
    }
    while ((k = gzread(f, buf + len, (unsigned)(cap - len))) > 0) {
        len += (size_t)k;
        if (len == cap) {
            char *nb = realloc(buf, cap * 2);
            if (nb == NULL) {
                free(buf);
                gzclose(f);
                return NULL;
            }
            buf = nb;
            cap *= 2;
        }
    }
    *cut = k < 0;
    if (k < 0 && len == 0) {
        free(buf);
        gzclose(f);
        return NULL;
    }
    gzclose(f);
    *n = len;
    return buf;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* --close: text[0, good) (up to the last complete event) and the end of the file. */
static int write_closed(const char *out, const char *text, size_t good)
{
    static const char tail[] = "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"truncated\":true}}\n";
    int ok;
    if (ends_with(out, ".gz")) {
        gzFile g = gzopen(out, "wb6");
        if (g == NULL)
            return -1;
        ok = (good == 0 || gzwrite(g, text, (unsigned)good) == (int)good) &&
             gzwrite(g, tail, sizeof tail - 1) == (int)(sizeof tail - 1);
        return gzclose(g) == Z_OK && ok ? 0 : -1;
    }
    FILE *f = fopen(out, "wb");
    if (f == NULL)
        return -1;
    ok = fwrite(text, 1, good, f) == good && fwrite(tail, 1, sizeof tail - 1, f) == sizeof tail - 1;
    return fclose(f) == 0 && ok ? 0 : -1;
}

int main(int argc, char **argv)
{
    size_t n = 0, good = 0, events = 0;
    char *text, key[32];
    const char *path, *close_to = NULL;
    js j;
    tr_stats api, kern;
    tr_stat_row *rows;
    uint32_t nr;
    int found = 0, closed = 0, cut = 0, early;
    if (argc == 4 && !strcmp(argv[1], "--close")) {
        path = argv[2];
        close_to = argv[3];
    } else if (argc == 2 && argv[1][0] != '-') {
        path = argv[1];
    } else {
        fprintf(stderr, "usage: cushim stats FILE             (a trace written by cushim run --trace; .json or .json.gz)\n"
                        "       cushim stats --close FILE OUT (a copy of a trace that ends early, ending properly)\n");
        return argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) ? 0 : 2;
    }
    if ((text = slurp(path, &n, &cut)) == NULL) {
        perror(path);
        return 1;
    }
    tr_stats_init(&api);
    tr_stats_init(&kern);
    {   /* the plugin's budget for exact medians (otherData, at the end): the same table as at exit */
        static const char key_[] = "\"summary_exact_values\":";
        const char *from = n > 65536 ? text + n - 65536 : text, *hit = NULL;
        for (const char *q = from; q + sizeof key_ - 1 <= text + n; q++)
            if (*q == '"' && memcmp(q, key_, sizeof key_ - 1) == 0)
                hit = q + sizeof key_ - 1;
        if (hit != NULL) {
            unsigned long long v = strtoull(hit, NULL, 10);
            if (v > 0) {
                tr_stats_set_exact(&api, v);
                tr_stats_set_exact(&kern, v);
            }
        }
    }
    j.p = text;
    j.end = text + n;
    j.err = 0;
    ws(&j);
    if (j.p < j.end && *j.p == '{') {
        j.p++;
        for (;;) {
            ws(&j);
            if (j.p < j.end && *j.p == '}')
                break;
            if (str(&j, key, sizeof key) != 0)
                break;
            ws(&j);
            if (j.p >= j.end || *j.p++ != ':')
                break;
            ws(&j);
            if (!strcmp(key, "traceEvents") && j.p < j.end && *j.p == '[') {
                found = 1;
                j.p++;
                good = (size_t)(j.p - text);
                ws(&j);
                while (j.p < j.end && *j.p != ']' && !j.err) {
                    event(&j, &api, &kern);
                    if (!j.err) {
                        good = (size_t)(j.p - text);
                        events++;
                    }
                    ws(&j);
                    if (j.p < j.end && *j.p == ',')
                        j.p++;
                    ws(&j);
                }
                if (j.p < j.end) {
                    j.p++;
                    closed = 1;
                }
            } else if (skip(&j, 1) != 0) {
                break;
            }
            ws(&j);
            if (j.p < j.end && *j.p == ',')
                j.p++;
        }
    }
    /* ended early: the events array never closed, the text ran out inside it (or the gzip stream did) */
    early = found && !closed && (j.p >= j.end || cut);
    if (!found || (j.err && !early)) {
        fprintf(stderr, "cushim stats: %s: %s\n", path,
                !found ? "no \"traceEvents\" array: not a trace-event JSON file" : "malformed JSON");
        free(text);
        tr_stats_free(&api);
        tr_stats_free(&kern);
        return 1;
    }
    if (close_to != NULL) {
        int rc = 0;
        if (!early && !cut) {
            fprintf(stderr, "cushim stats: %s ends properly: nothing to close\n", path);
            rc = 1;
        } else if (write_closed(close_to, text, good) != 0) {
            perror(close_to);
            rc = 1;
        } else {
            fprintf(stderr, "cushim stats: %s: the %zu complete events of %s, closed\n", close_to, events, path);
        }
        free(text);
        tr_stats_free(&api);
        tr_stats_free(&kern);
        return rc;
    }
    if (early)
        fprintf(stderr, "cushim stats: %s ends early (its process was killed, or is still writing it): the tables "
                "below are of its %zu complete events; 'cushim stats --close %s OUT' writes a copy that ends "
                "properly\n", path, events, path);
    nr = tr_stats_rows(&api, &rows);
    printf("\nCUDA API Summary (cuda_api_sum):\n\n");
    tr_stats_print(stdout, rows, nr, "Num Calls");
    free(rows);
    nr = tr_stats_rows(&kern, &rows);
    if (nr > 0) {
        printf("\nCUDA GPU Kernel Summary (cuda_gpu_kern_sum):\n\n");
        tr_stats_print(stdout, rows, nr, "Instances");
    }
    free(rows);
    free(text);
    tr_stats_free(&api);
    tr_stats_free(&kern);
    return 0;
}
