/*
 * procaddr_check.c - records what cuGetProcAddress_v2 answers, for comparing
 * the real driver with the shim.
 *
 * USAGE: procaddr_check NAMES OUT [VMIN VMAX]
 *
 * For every base name in NAMES (one a line), every cudaVersion VMIN..VMAX
 * (default 1000..13010) in steps of 10 and flags 0, 1, 2, calls
 * cuGetProcAddress_v2 (linked with -lcuda: the real driver natively, the
 * shim's export under LD_PRELOAD) and describes the returned pointer with
 * dladdr: 'OBJ:SYMBOL' when it is exactly an exported symbol of OBJ (the
 * file's base name), 'OBJ:?+0xOFF' when it is not an export (the offset in
 * OBJ is stable across runs), '-' for NULL. Runs of versions with the same
 * answer are merged, like the oracle fixture:
 *   name  flags  vfrom  vto  result  status  pointer
 * tests/gpu/compare_procaddr.py compares a native and a shim recording.
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PC_SLOTS 16384

static struct { const void *ptr; char *desc; } pc_memo[PC_SLOTS];

static const char *pc_describe(const void *p)
{
    if (!p)
        return "-";
    size_t h = ((uintptr_t)p >> 4) * 0x9E3779B97F4A7C15ull >> 50;  /* 14 bits */
    for (size_t i = 0; i < PC_SLOTS; i++) {
        size_t k = (h + i) & (PC_SLOTS - 1);
        if (pc_memo[k].ptr == p)
            return pc_memo[k].desc;
        if (!pc_memo[k].ptr) {
            Dl_info info;
            char buf[512];
            memset(&info, 0, sizeof info);
            if (!dladdr(p, &info) || !info.dli_fname) {
                snprintf(buf, sizeof buf, "?:?+%p", p);
            } else {
                const char *obj = strrchr(info.dli_fname, '/');
                obj = obj ? obj + 1 : info.dli_fname;
                if (!*obj)
                    obj = "main";
                if (info.dli_sname && info.dli_saddr == p)
                    snprintf(buf, sizeof buf, "%s:%s", obj, info.dli_sname);
                else
                    snprintf(buf, sizeof buf, "%s:?+0x%lx", obj,
                             (unsigned long)((uintptr_t)p - (uintptr_t)info.dli_fbase));
            }
            pc_memo[k].ptr = p;
            pc_memo[k].desc = strdup(buf);
            return pc_memo[k].desc;
        }
    }
    return "?:memo-full";
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s NAMES OUT [VMIN VMAX]\n", argv[0]);
        return 2;
    }
    int vmin = argc > 3 ? atoi(argv[3]) : 1000;
    int vmax = argc > 4 ? atoi(argv[4]) : 13010;
    FILE *in = fopen(argv[1], "r");
    FILE *out = fopen(argv[2], "w");
    if (!in || !out) {
        fprintf(stderr, "procaddr_check: cannot open '%s' or '%s'\n", argv[1], argv[2]);
        return 2;
    }
    CUresult ir = cuInit(0);
    if (ir != CUDA_SUCCESS) {
        fprintf(stderr, "procaddr_check: cuInit failed: %d\n", (int)ir);
        return 1;
    }
    int drv = 0;
    cuDriverGetVersion(&drv);
    fprintf(out, "# procaddr_check driver %d versions %d..%d\n", drv, vmin, vmax);
    fprintf(out, "name\tflags\tvfrom\tvto\tresult\tstatus\tpointer\n");

    char line[512];
    long calls = 0, names = 0;
    while (fgets(line, sizeof line, in)) {
        line[strcspn(line, "\r\n\t ")] = 0;
        if (!line[0] || line[0] == '#')
            continue;
        names++;
        for (int flags = 0; flags <= 2; flags++) {
            int from = vmin, prev_r = -1000, prev_s = -1000;
            const char *prev_d = NULL;
            for (int v = vmin; v <= vmax + 10; v += 10) {
                int r = -2000, s = -2000;
                const char *d = NULL;
                if (v <= vmax) {
                    void *p = NULL;
                    CUdriverProcAddressQueryResult st = (CUdriverProcAddressQueryResult)99;
                    r = (int)cuGetProcAddress_v2(line, &p, v, (cuuint64_t)flags, &st);
                    s = (int)st;
                    d = pc_describe(p);
                    calls++;
                }
                if (prev_d && (v > vmax || r != prev_r || s != prev_s || strcmp(d, prev_d) != 0)) {
                    fprintf(out, "%s\t%d\t%d\t%d\t%d\t%d\t%s\n", line, flags, from, v - 10, prev_r, prev_s,
                            prev_d);
                    from = v;
                }
                prev_r = r;
                prev_s = s;
                prev_d = d;
            }
        }
    }
    fclose(in);
    if (fclose(out) != 0) {
        fprintf(stderr, "procaddr_check: write error on '%s'\n", argv[2]);
        return 1;
    }
    printf("procaddr_check: %ld names, %ld calls, driver %d\n", names, calls, drv);
    return 0;
}
