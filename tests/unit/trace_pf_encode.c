/*
 * trace_pf_encode.c - the Perfetto encoder (plugins/trace/tr_pf.c) alone, for the tests: reads the writer's JSON
 * events, one a line, from stdin and writes the packets to stdout (trace_pf_reset: more interned names than
 * TR_PF_INTERN_MAX, so the interning is cleared and starts again; tests/e2e/pftrace.py checks the file).
 *   trace_pf_encode PID < events > file.perfetto-trace
 * Exit status 1 when an event is refused or memory runs out.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tr_pf.h"

int main(int argc, char **argv)
{
    tr_pf pf;
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int rc = 0;
    memset(&pf, 0, sizeof pf);
    if (argc != 2 || tr_pf_start(&pf, atoi(argv[1]), 1000, 2000) != 0)
        return 2;
    while ((n = getline(&line, &cap, stdin)) > 0) {
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == ','))
            n--;
        if (tr_pf_event(&pf, line, (size_t)n) != 0)
            rc = 1;
        fwrite(pf.out.p, 1, pf.out.len, stdout);
        pf.out.len = 0;
    }
    tr_pf_end(&pf);
    fwrite(pf.out.p, 1, pf.out.len, stdout);
    fprintf(stderr, "interning cleared %llu times\n", (unsigned long long)pf.resets);
    free(line);
    tr_pf_free(&pf);
    return rc;
}
