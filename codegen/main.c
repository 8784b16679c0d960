/*
 * main.c - cushim-gen: generate the CUDA API tables of cushim from the CUDA
 * headers.
 *
 * USAGE
 *   cushim-gen --cuda-include DIR --out DIR        generate (atomically)
 *   cushim-gen --cuda-include DIR --verify DIR     compare, exit 1 on any difference
 *   cushim-gen --cuda-include DIR --report [--cuda-root DIR]
 * Options: --overlay FILE (default codegen/overlay.txt), --ids FILE (default
 * codegen/api_ids.tsv), --libs NAME,NAME... (the library descriptors, in
 * include and id order; default driver,runtime), --libs-dir DIR (default
 * codegen/libs), --cuda-root DIR (for --report), --list-unclassified,
 * --list-params (every parameter, its direction and where it came from), --quiet.
 */
#include "cg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef CUSHIM_GEN_DIR
#define CUSHIM_GEN_DIR "codegen"
#endif

static void usage(FILE *f)
{
    fputs("usage: cushim-gen --cuda-include DIR (--out DIR | --verify DIR | --report)\n"
          "                  [--overlay FILE] [--ids FILE] [--libs NAME,...] [--libs-dir DIR] [--cuda-root DIR]\n"
          "                  [--list-unclassified] [--list-params] [--quiet]\n"
          "  --out DIR      write the generated tree into DIR (replaced atomically)\n"
          "  --verify DIR   regenerate in memory and compare with DIR; exit 1 on any difference\n"
          "  --report       coverage against each library's shipped .so (descriptor 'report' lines)\n"
          "  --libs         library descriptors <libs-dir>/<NAME>.lib, in order (default driver,runtime)\n"
          "  --include DIR  another header folder (a library outside the toolkit: nvml.h)\n"
          "  --cuda-root    CUDA root for --report (default: the parent of --cuda-include)\n",
          f);
}

int main(int argc, char **argv)
{
    const char *inc = NULL, *out = NULL, *verify = NULL, *root = NULL;
    const char *overlay = CUSHIM_GEN_DIR "/overlay.txt", *ids = CUSHIM_GEN_DIR "/api_ids.tsv";
    const char *libs = "driver,runtime", *libs_dir = CUSHIM_GEN_DIR "/libs";
    int report = 0, list = 0, quiet = 0, rc;
    cg_model m;
    ov_overlay ov;
    ps_options po;
    double t0 = ut_now();
    char *rootbuf = NULL;

    memset(&po, 0, sizeof po);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char **dst = NULL;
        if (!strcmp(a, "--cuda-include"))
            dst = &inc;
        else if (!strcmp(a, "--out"))
            dst = &out;
        else if (!strcmp(a, "--verify"))
            dst = &verify;
        else if (!strcmp(a, "--overlay"))
            dst = &overlay;
        else if (!strcmp(a, "--ids"))
            dst = &ids;
        else if (!strcmp(a, "--cuda-root"))
            dst = &root;
        else if (!strcmp(a, "--libs"))
            dst = &libs;
        else if (!strcmp(a, "--libs-dir"))
            dst = &libs_dir;
        else if (!strcmp(a, "--include")) {
            if (po.nextra >= 4 || i + 1 >= argc) {
                ut_error("--include needs a folder (at most 4)");
                return 2;
            }
            po.extra_include[po.nextra++] = argv[++i];
        }
        else if (!strcmp(a, "--report"))
            report = 1;
        else if (!strcmp(a, "--list-unclassified"))
            list = 1;
        else if (!strcmp(a, "--list-params"))
            list = 2;
        else if (!strcmp(a, "--quiet") || !strcmp(a, "-q"))
            quiet = 1;
        else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else {
            ut_error("unknown argument '%s'", a);
            usage(stderr);
            return 2;
        }
        if (dst) {
            if (i + 1 >= argc) {
                ut_error("%s needs a value", a);
                return 2;
            }
            *dst = argv[++i];
        }
    }
    if (!inc || (!out && !verify && !report && !list) || (out && verify)) {
        usage(stderr);
        return 2;
    }

    memset(&m, 0, sizeof m);
    rc = ov_load(&ov, overlay);
    {
        char *list = ut_strdup(libs), *save = NULL;
        for (char *t = strtok_r(list, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save))
            rc = ld_load(&m, libs_dir, t);
        if (!rc && m.nlibs == 0) {
            ut_error("--libs names no library");
            rc = CG_EINPUT;
        }
        free(list);
    }
    if (!rc) {
        po.include_dir = inc;
        po.verbose = !quiet;
        po.overlay = &ov;
        rc = ps_parse(&m, &po);
    }
    if (!rc)
        rc = ld_check_results(&m);
    if (!rc)
        rc = md_variants(&m);
    if (!rc) {
        md_classify(&m);
        te_indirect_counts(&m);
        md_categories(&m);
        rc = ov_apply(&ov, &m);
        /* then each library's own overlay (descriptor 'overlay') */
        for (int l = 0; !rc && l < m.nlibs; l++)
            if (m.libs[l].overlay) {
                ov_overlay lov;
                char *p = ut_printf("%s/%s", libs_dir, m.libs[l].overlay);
                rc = ov_load(&lov, p);
                if (!rc)
                    rc = ov_apply(&lov, &m);
                ov_free(&lov);
                free(p);
            }
        if (!rc)
            rc = rl_apply(&m);
    }
    if (!rc) {
        md_count_unclassified(&m, list);
        rc = id_assign(&m, ids, verify == NULL);
    }
    if (!rc) {
        md_sort_by_id(&m);
        if (out) {
            rc = em_generate(&m, out);
            if (!rc)
                rc = id_commit();
        }
        else if (verify)
            rc = em_verify(&m, verify);
    }
    if (!rc && report) {
        if (!root) {
            size_t n;
            rootbuf = ut_strdup(inc);
            n = strlen(rootbuf);
            while (n > 1 && rootbuf[n - 1] == '/')
                rootbuf[--n] = 0;
            if (strrchr(rootbuf, '/'))
                *strrchr(rootbuf, '/') = 0;
            root = rootbuf;
        }
        rc = rp_report(&m, root);
        if (!rc)
            te_report(&m);
    }
    if (!rc && !quiet) {
        ut_buf per = {0};
        for (int l = 0; l < m.nlibs; l++) {
            int n = 0;
            for (int i = 0; i < m.napis; i++)
                n += m.apis[i].library == m.libs[l].value;
            ut_bprintf(&per, "%s%d %s", l ? ", " : "", n, m.libs[l].name);
        }
        for (int i = 0; i < m.npfns; i++)
            if (!m.pfns[i].present)
                ut_note("variant typedef PFN_%s_v%u%s (%s:%u) names '%s', which the headers do not declare; "
                        "left out of the variant table",
                        m.pfns[i].base, m.pfns[i].version,
                        m.pfns[i].per_thread == PT_PTDS ? "_ptds" : m.pfns[i].per_thread == PT_PTSZ ? "_ptsz" : "",
                        m.pfns[i].file, m.pfns[i].line, m.pfns[i].exported);
        ut_note("CUDA %u: %d APIs (%s), %d variant typedefs, %d parameters unclassified; %s in %.2f s",
                m.cuda_version, m.napis, per.s, m.npfns, m.unclassified,
                out ? "generated" : verify ? "verified" : "parsed", ut_now() - t0);
        ut_buf_free(&per);
    }
    ov_free(&ov);
    rl_free();
    te_free(&m);
    rl_free_roles(&m);
    md_free(&m);
    free(rootbuf);
    return rc == CG_OK ? 0 : 1;
}
