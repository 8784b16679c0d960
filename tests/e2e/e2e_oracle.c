/*
 * e2e_oracle.c - cuGetProcAddress_v2 answers against the real driver's, recorded on a GPU machine.
 *
 * Usage: e2e_oracle tests/gpu/fixtures/procaddr-oracle.tsv
 * The fixture (tests/gpu/procaddr_oracle.c) has, per name and flag, runs of
 * cudaVersions (step 10) with the driver's result, status and the exported
 * name of the pointer. Every version of every run is asked again here: without
 * the shim the fake driver must answer exactly like the real one; with the
 * shim, the answer must be the same result and status, and the shim's wrapper
 * of the same exported name in place of the driver's function.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "e2e_classify.h"
#include "e2e_common.h"

typedef CUresult (*gpa2_fn)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);

int main(int argc, char **argv)
{
    e2e_init("e2e_oracle");
    FILE *f = argc == 2 ? fopen(argv[1], "r") : NULL;
    if (f == NULL) {
        fprintf(stderr, "usage: e2e_oracle <procaddr-oracle.tsv>\n");
        return 2;
    }
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    gpa2_fn gpa = h ? (gpa2_fn)dlsym(h, "cuGetProcAddress_v2") : NULL;
    E2E_CHECK(gpa != NULL, "no cuGetProcAddress_v2: %s", dlerror());
    if (gpa == NULL)
        return e2e_finish();
    const char *want_where = e2e_shim() ? "shim:" : "fake:";

    char line[512];
    unsigned long asked = 0, wrong = 0;
    while (fgets(line, sizeof line, f)) {
        char name[200], sym[200];
        int flags, vfrom, vto, result, status;
        if (line[0] == '#' ||
            sscanf(line, "%199s %d %d %d %d %d %199s", name, &flags, &vfrom, &vto, &result, &status, sym) != 7)
            continue;   /* comment, header row */
        for (int v = vfrom; v <= vto; v += 10) {
            void *p = NULL;
            CUdriverProcAddressQueryResult st = (CUdriverProcAddressQueryResult)-1;
            CUresult r = gpa(name, &p, v, (cuuint64_t)flags, &st);
            char buf[256], want[256];
            const char *where = e2e_classify(p, buf, sizeof buf);
            if (strcmp(sym, "-") == 0)
                snprintf(want, sizeof want, "NULL");
            else
                snprintf(want, sizeof want, "%s%s", want_where, sym);
            asked++;
            if ((int)r != result || (int)st != status || strcmp(where, want) != 0) {
                if (wrong++ < (getenv("E2E_ORACLE_ALL") ? 1000000000ul : 25ul))
                    e2e_fail(__FILE__, __LINE__, "%s flags %d version %d: got %d %d %s, the real driver %d %d %s",
                             name, flags, v, (int)r, (int)st, where, result, status, want);
            }
        }
    }
    fclose(f);
    printf("e2e_oracle: %lu look-ups, %lu differ from the real driver\n", asked, wrong);
    return e2e_finish();
}
