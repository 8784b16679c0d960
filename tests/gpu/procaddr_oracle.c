/*
 * procaddr_oracle.c - record what the real driver's cuGetProcAddress_v2 answers.
 *
 * For every symbol name read from a file (one per line), every cudaVersion
 * from 1000 to 13010 in steps of 10 and each flag (0 default, 1 legacy
 * stream, 2 per-thread default stream), it calls the real driver and writes
 * run-length rows to stdout:
 *
 *   base  flags  vfrom  vto  result  status  symbol
 *
 * 'symbol' is the exported name whose address equals the returned pointer
 * (dladdr with an exact match), '-' for NULL, '?' for a pointer that is no
 * export. The output is committed as tests/gpu/fixtures/procaddr-oracle.tsv
 * and checked against the generated variant table by a CPU unit test.
 *
 * Build: cc -O2 -o procaddr_oracle procaddr_oracle.c -ldl   (no CUDA headers
 * needed; it loads libcuda.so.1 itself). Run without the shim.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*get_proc_v2_fn)(const char *, void **, int, uint64_t, int *);
typedef int (*init_fn)(unsigned);
typedef int (*version_fn)(int *);

#define V_FIRST 1000
#define V_LAST 13010
#define V_STEP 10

struct answer {
    int result;
    int status;
    char symbol[256];
};

static void answer_of(get_proc_v2_fn gpa, const char *name, int version, int flags,
                      struct answer *a)
{
    void *p = NULL;
    int status = -1;
    Dl_info info;

    a->result = gpa(name, &p, version, (uint64_t)flags, &status);
    a->status = status;
    if (p == NULL)
        snprintf(a->symbol, sizeof a->symbol, "-");
    else if (dladdr(p, &info) && info.dli_sname && info.dli_saddr == p)
        snprintf(a->symbol, sizeof a->symbol, "%s", info.dli_sname);
    else
        snprintf(a->symbol, sizeof a->symbol, "?");
}

static int same(const struct answer *x, const struct answer *y)
{
    return x->result == y->result && x->status == y->status && strcmp(x->symbol, y->symbol) == 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s NAMES_FILE > oracle.tsv\n", argv[0]);
        return 2;
    }
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "procaddr_oracle: cannot load libcuda.so.1: %s\n", dlerror());
        return 1;
    }
    get_proc_v2_fn gpa = (get_proc_v2_fn)dlsym(h, "cuGetProcAddress_v2");
    init_fn cu_init = (init_fn)dlsym(h, "cuInit");
    version_fn drv_version = (version_fn)dlsym(h, "cuDriverGetVersion");
    if (!gpa || !cu_init || !drv_version) {
        fprintf(stderr, "procaddr_oracle: libcuda.so.1 lacks cuGetProcAddress_v2/cuInit\n");
        return 1;
    }
    int rc = cu_init(0);
    int dv = 0;
    drv_version(&dv);
    FILE *names = fopen(argv[1], "r");
    if (!names) {
        perror(argv[1]);
        return 1;
    }
    printf("# driver %d cuInit %d\n", dv, rc);
    printf("base\tflags\tvfrom\tvto\tresult\tstatus\tsymbol\n");
    char line[512];
    while (fgets(line, sizeof line, names)) {
        line[strcspn(line, "\r\n")] = 0;
        if (!line[0] || line[0] == '#')
            continue;
        for (int flags = 0; flags <= 2; flags++) {
            struct answer run, cur;
            int vfrom = V_FIRST;
            answer_of(gpa, line, V_FIRST, flags, &run);
            for (int v = V_FIRST + V_STEP; v <= V_LAST + V_STEP; v += V_STEP) {
                int end = v > V_LAST;
                if (!end)
                    answer_of(gpa, line, v, flags, &cur);
                if (end || !same(&run, &cur)) {
                    printf("%s\t%d\t%d\t%d\t%d\t%d\t%s\n", line, flags, vfrom, v - V_STEP,
                           run.result, run.status, run.symbol);
                    run = cur;
                    vfrom = v;
                }
            }
        }
    }
    fclose(names);
    return 0;
}
