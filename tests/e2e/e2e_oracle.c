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
 *
 * A tree of an earlier release than the recorded driver (12.9's: tools/test-release.sh) makes the fake a
 * driver of that release: a version above it is CUDA_ERROR_INVALID_VALUE (status untouched), and a function
 * newer than its headers (not in its apis.tsv, the second argument) is not found.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "e2e_classify.h"
#include "e2e_common.h"

typedef CUresult (*gpa2_fn)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);

/* The base names of the tree's APIs (apis.tsv's third column), one string with each name between tabs. */
static char *tree_bases(const char *path)
{
    FILE *f = path ? fopen(path, "r") : NULL;
    if (f == NULL)
        return NULL;
    size_t cap = 1 << 16, len = 1;
    char *all = malloc(cap), line[1024];
    if (all == NULL) {
        fclose(f);
        return NULL;
    }
    all[0] = '\t';
    while (fgets(line, sizeof line, f)) {
        char id[32], exported[256], base[256];
        if (line[0] == '#' || sscanf(line, "%31s %255s %255s", id, exported, base) != 3)
            continue;
        size_t n = strlen(base);
        if (len + n + 2 > cap) {
            char *bigger = realloc(all, cap *= 2);
            if (bigger == NULL)
                break;
            all = bigger;
        }
        memcpy(all + len, base, n);
        len += n;
        all[len++] = '\t';
    }
    all[len] = '\0';
    fclose(f);
    return all;
}

static int tree_has_base(const char *bases, const char *name)
{
    char key[260];
    snprintf(key, sizeof key, "\t%s\t", name);
    return bases == NULL || strstr(bases, key) != NULL;
}

int main(int argc, char **argv)
{
    e2e_init("e2e_oracle");
    FILE *f = argc >= 2 ? fopen(argv[1], "r") : NULL;
    if (f == NULL) {
        fprintf(stderr, "usage: e2e_oracle <procaddr-oracle.tsv> [apis.tsv]\n");
        return 2;
    }
    char *bases = argc >= 3 ? tree_bases(argv[2]) : NULL;
    E2E_CHECK(argc < 3 || bases != NULL, "cannot read %s", argv[2]);
    int driver = 0;   /* the recorded driver's version ('# driver N ...') */
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
        if (strncmp(line, "# driver ", 9) == 0)
            driver = atoi(line + 9);
        if (line[0] == '#' ||
            sscanf(line, "%199s %d %d %d %d %d %199s", name, &flags, &vfrom, &vto, &result, &status, sym) != 7)
            continue;   /* comment, header row */
        int older = driver > 0 && FAKE_CUDA_VERSION < driver;   /* the fake is a driver of an earlier release */
        if (older && !tree_has_base(bases, name)) {
            result = CUDA_SUCCESS;
            status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
            strcpy(sym, "-");
        }
        for (int v = vfrom; v <= vto; v += 10) {
            if (older && v > FAKE_CUDA_VERSION) {
                result = CUDA_ERROR_INVALID_VALUE;
                status = -1;
                strcpy(sym, "-");
            }
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
    free(bases);
    printf("e2e_oracle: %lu look-ups, %lu differ from the real driver\n", asked, wrong);
    return e2e_finish();
}
