/*
 * e2e_procaddr.c - cuGetProcAddress and cuGetProcAddress_v2 for every base name of procaddr.tsv,
 * over a grid of cudaVersions and the flags 0, 1 and 2.
 *
 * Usage: e2e_procaddr <generated>/procaddr.tsv
 * Prints the answers in the oracle's shape (tests/gpu/fixtures/procaddr-oracle.tsv), runs of equal answers
 * over consecutive grid versions merged:  api base flags vfrom vto result status -> where
 * run_compare.sh runs it without the shim (the fake driver's own answers, from the variant table in
 * runtime/procaddr.c) and with it: the shim must give the same result and status, and in place of the
 * fake's function its own wrapper of exactly that exported name. With the shim the program also asks
 * the fake directly (fake_cuda_proc) and checks each answer in-process, for a precise message.
 * Every base gets a coarse grid (each version in the table, 10 below it, and the releases from 1.0 to
 * 13.1); a subset with many variants gets every version from 1000 to 13010 in steps of 10.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "e2e_classify.h"
#include "e2e_common.h"

typedef CUresult (*gpa1_fn)(const char *, void **, int, cuuint64_t);
typedef CUresult (*gpa2_fn)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);

#define MAX_BASES 4096
#define MAX_VERS 2048

struct base {
    char name[128];
    int vers[64];
    int nvers;
};
static struct base bases[MAX_BASES];
static int nbases;

static const char *const fine[] = {
    "cuMemAlloc", "cuGetProcAddress", "cuCtxCreate", "cuStreamGetCaptureInfo", "cuMemcpyHtoD", "cuMemsetD8",
    "cuLaunchKernel", "cuStreamBeginCapture", "cuGraphInstantiate", "cuMemPrefetchAsync", "cuEventRecord",
    "cuStreamWaitValue32", "cuInit", "cuDevicePrimaryCtxRelease", "cuMemcpyBatchAsync", "cuStreamGetCtx",
    "cuTexRefSetAddress2D", "cuModuleGetGlobal", "cuMemAllocAsync", "cuGraphExecUpdate", "cuMemcpy",
    "cuEventElapsedTime", "cuCtxGetDevice",
};
static const int releases[] = {1000, 1010, 2000, 2010, 2020, 2030, 3000, 3010, 3020, 3050, 4000, 4010, 4020,
                               5000, 5050, 5500, 6000, 6050, 6500, 7000, 7050, 7500, 8000, 9000, 9010, 9020,
                               9100, 9200, 10000, 10010, 10020, 10100, 10200, 11000, 11010, 11020, 11030,
                               11040, 11050, 11060, 11070, 11080, 12000, 12010, 12020, 12030, 12040, 12050,
                               12060, 12080, 12090, 13000, 13010, 20000};

static struct base *base_get(const char *name)
{
    for (int i = 0; i < nbases; i++)
        if (strcmp(bases[i].name, name) == 0)
            return &bases[i];
    if (nbases == MAX_BASES)
        return NULL;
    struct base *b = &bases[nbases++];
    snprintf(b->name, sizeof b->name, "%s", name);
    return b;
}

static int read_tsv(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        char name[128], flag[32];
        int ver;
        if (line[0] == '#' || sscanf(line, "%127s %31s %d", name, flag, &ver) != 3)
            continue;   /* banner, header row */
        struct base *b = base_get(name);
        if (b != NULL && b->nvers < 64)
            b->vers[b->nvers++] = ver;
    }
    fclose(f);
    /* Names the table lacks: the driver must say so, and the shim likewise. */
    base_get("cuNoSuchFunction");
    base_get("cudaMalloc");
    base_get("cuMemAlloc_v2");
    base_get("");
    return 0;
}

static int cmp_int(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

static int grid_for(const struct base *b, int *out)
{
    int n = 0;
    for (size_t i = 0; i < sizeof releases / sizeof releases[0]; i++)
        out[n++] = releases[i];
    for (int i = 0; i < b->nvers; i++) {
        out[n++] = b->vers[i];
        out[n++] = b->vers[i] - 10;
        out[n++] = b->vers[i] + 10;
    }
    for (size_t i = 0; i < sizeof fine / sizeof fine[0]; i++)
        if (strcmp(fine[i], b->name) == 0)
            for (int v = 1000; v <= 13010 && n < MAX_VERS; v += 10)
                out[n++] = v;
    qsort(out, (size_t)n, sizeof *out, cmp_int);
    int m = 0;
    for (int i = 0; i < n; i++)
        if (m == 0 || out[m - 1] != out[i])
            out[m++] = out[i];
    return m;
}

static gpa1_fn fake_v1;   /* the fake's own functions (with the shim: to check in-process) */
static gpa2_fn fake_v2;

static const char *sym_name(const void *p)
{
    Dl_info di;
    return p != NULL && dladdr(p, &di) && di.dli_sname && di.dli_saddr == p ? di.dli_sname : "-";
}

static void check_against_fake(int api, const char *base, int ver, int flags, CUresult r, int st, void *p)
{
    void *fp = NULL;
    CUdriverProcAddressQueryResult fst = (CUdriverProcAddressQueryResult)99;   /* as the caller's */
    CUresult fr = api == 2 ? fake_v2(base, &fp, ver, (cuuint64_t)flags, &fst)
                           : fake_v1(base, &fp, ver, (cuuint64_t)flags);
    char want[160], got[160];
    snprintf(want, sizeof want, "%d %d %s", (int)fr, api == 2 ? (int)fst : -1, sym_name(fp));
    snprintf(got, sizeof got, "%d %d %s", (int)r, api == 2 ? st : -1, sym_name(p));
    if (strcmp(want, got) != 0)
        e2e_fail(__FILE__, __LINE__, "cuGetProcAddress%s(\"%s\", %d, flags %d): shim '%s', driver '%s'",
                 api == 2 ? "_v2" : "", base, ver, flags, got, want);
    else if (p != NULL && e2e_shim()) {
        char buf[256];
        const char *where = e2e_classify(p, buf, sizeof buf);
        if (strncmp(where, "shim:", 5) != 0)
            e2e_fail(__FILE__, __LINE__, "cuGetProcAddress%s(\"%s\", %d, %d) handed out %s, not a shim wrapper",
                     api == 2 ? "_v2" : "", base, ver, flags, where);
    }
}

int main(int argc, char **argv)
{
    e2e_init("e2e_procaddr");
    if (argc != 2 || read_tsv(argv[1]) != 0) {
        fprintf(stderr, "usage: e2e_procaddr <procaddr.tsv>\n");
        return 2;
    }
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    E2E_CHECK(h != NULL, "dlopen: %s", dlerror());
    if (h == NULL)
        return e2e_finish();
    gpa1_fn v1 = (gpa1_fn)dlsym(h, "cuGetProcAddress");
    gpa2_fn v2 = (gpa2_fn)dlsym(h, "cuGetProcAddress_v2");
    E2E_CHECK(v1 && v2, "dlsym(cuGetProcAddress[_v2]) failed");
    if (!v1 || !v2)
        return e2e_finish();
    if (e2e_shim()) {
        void *(*proc)(const char *) = (void *(*)(const char *))e2e_fake_sym("fake_cuda_proc");
        E2E_CHECK(proc != NULL, "fake_cuda_proc not found");
        if (proc == NULL)
            return e2e_finish();
        fake_v1 = (gpa1_fn)proc("cuGetProcAddress");
        fake_v2 = (gpa2_fn)proc("cuGetProcAddress_v2");
    }

    static int grid[MAX_VERS * 2];
    unsigned long calls = 0;
    for (int bi = 0; bi < nbases; bi++) {
        const char *base = bases[bi].name;
        int n = grid_for(&bases[bi], grid);
        for (int api = 1; api <= 2; api++) {
            for (int flags = 0; flags <= 2; flags++) {
                char prev[320] = "", cur[320];
                int from = 0, to = 0;
                for (int i = 0; i <= n; i++) {
                    if (i < n) {
                        void *p = (void *)1;
                        CUdriverProcAddressQueryResult st = (CUdriverProcAddressQueryResult)99;
                        CUresult r = api == 2 ? v2(base, &p, grid[i], (cuuint64_t)flags, &st)
                                              : v1(base, &p, grid[i], (cuuint64_t)flags);
                        calls++;
                        if (fake_v2 != NULL)
                            check_against_fake(api, base, grid[i], flags, r, (int)st, p);
                        char buf[200], stb[16];
                        snprintf(stb, sizeof stb, "%d", (int)st);
                        snprintf(cur, sizeof cur, "%d\t%s\t-> %s", (int)r, api == 2 ? stb : "-",
                                 e2e_classify(p, buf, sizeof buf));
                    }
                    if (i == n || strcmp(cur, prev) != 0) {
                        if (i > 0)
                            printf("v%d\t%s\t%d\t%d\t%d\t%s\n", api, base[0] ? base : "(empty)", flags, from, to,
                                   prev);
                        if (i < n) {
                            snprintf(prev, sizeof prev, "%s", cur);
                            from = grid[i];
                        }
                    }
                    if (i < n)
                        to = grid[i];
                }
            }
        }
    }
    fprintf(stderr, "e2e_procaddr: %lu look-ups over %d names\n", calls, nbases);
    fflush(stdout);
    return e2e_finish();
}
