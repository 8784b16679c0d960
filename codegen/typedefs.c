/*
 * typedefs.c - collect the PFN_<base>_v<N>[_ptds|_ptsz] typedefs of
 * cudaTypedefs.h and its siblings.
 *
 * The files are scanned as text, not through libclang, on purpose: some
 * PFN typedefs sit in preprocessor branches that are inactive in any one
 * configuration (e.g. the old cuGraphInstantiate variants under
 * __CUDA_API_VERSION_INTERNAL, the _ptds/_ptsz ones under
 * CUDA_API_PER_THREAD_DEFAULT_STREAM), and every one of them names an ABI
 * variant that the driver exports. Only 'typedef' statements count; the
 * '#define PFN_x PFN_x_vN' aliases of older headers are ignored.
 */
#include "cg.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static int pfn_ident(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

/* Splits 'PFN_<base>_v<N>[_ptds|_ptsz]'; 0 on success. */
static int pfn_split(const char *name, char **base, unsigned *ver, int *pt)
{
    size_t n = strlen(name), i, end;
    *pt = PT_NONE;
    if (!ut_starts(name, "PFN_"))
        return -1;
    end = n;
    if (ut_ends(name, "_ptds")) {
        *pt = PT_PTDS;
        end -= 5;
    } else if (ut_ends(name, "_ptsz")) {
        *pt = PT_PTSZ;
        end -= 5;
    }
    i = end;
    while (i > 0 && isdigit((unsigned char)name[i - 1]))
        i--;
    if (i == end || end - i > 9 || i < 6 || name[i - 1] != 'v' || name[i - 2] != '_')
        return -1;
    if (i - 2 <= 4)
        return -1;
    *base = ut_strndup(name + 4, i - 2 - 4);
    *ver = (unsigned)strtoul(name + i, NULL, 10);
    return 0;
}

/* CUDA 12.4 to 12.9 shipped four PFN typedefs without their version;
 * CUDA 13.0 names them PFN_<base>_v12040. Only these are accepted. */
static const struct {
    const char *name;
    unsigned version;
} pfn_unversioned[] = {
    {"PFN_cuModuleGetFunctionCount", 12040},
    {"PFN_cuModuleEnumerateFunctions", 12040},
    {"PFN_cuLibraryGetKernelCount", 12040},
    {"PFN_cuLibraryEnumerateKernels", 12040},
};

static int pfn_add(cg_model *m, const char *name, const char *file, unsigned line)
{
    char *base = NULL;
    unsigned ver = 0;
    int pt = 0, i;
    for (i = 0; i < (int)(sizeof pfn_unversioned / sizeof pfn_unversioned[0]); i++)
        if (!strcmp(name, pfn_unversioned[i].name)) {
            base = ut_strdup(name + 4);
            ver = pfn_unversioned[i].version;
        }
    if (!base && pfn_split(name, &base, &ver, &pt) != 0) {
        ut_error("%s:%u: PFN typedef '%s' does not follow the scheme PFN_<base>_v<N>[_ptds|_ptsz]",
                 file, line, name);
        return CG_EINPUT;
    }
    for (i = 0; i < m->npfns; i++) {
        cg_pfn *p = &m->pfns[i];
        if (p->version == ver && p->per_thread == pt && !strcmp(p->base, base)) {
            free(base);
            return CG_OK; /* the same typedef in two preprocessor branches */
        }
    }
    if (m->npfns == m->cpfns) {
        m->cpfns = m->cpfns ? 2 * m->cpfns : 256;
        m->pfns = ut_realloc(m->pfns, (size_t)m->cpfns * sizeof *m->pfns);
    }
    memset(&m->pfns[m->npfns], 0, sizeof m->pfns[0]);
    m->pfns[m->npfns].base = base;
    m->pfns[m->npfns].version = ver;
    m->pfns[m->npfns].per_thread = pt;
    m->pfns[m->npfns].file = ut_strdup(ut_basename(file));
    m->pfns[m->npfns].line = line;
    m->npfns++;
    return CG_OK;
}

int pfn_scan_file(cg_model *m, const char *path)
{
    char *text = NULL;
    size_t len = 0, i = 0;
    unsigned line = 1;
    int rc = ut_read_file(path, &text, &len);
    if (rc)
        return rc;
    while (i < len) {
        char c = text[i];
        if (c == '\n') {
            line++;
            i++;
        } else if (c == '/' && i + 1 < len && text[i + 1] == '/') {
            while (i < len && text[i] != '\n')
                i++;
        } else if (c == '/' && i + 1 < len && text[i + 1] == '*') {
            i += 2;
            while (i + 1 < len && !(text[i] == '*' && text[i + 1] == '/')) {
                if (text[i] == '\n')
                    line++;
                i++;
            }
            i += 2;
        } else if (c == '#') {
            /* preprocessor line (with continuations): never a typedef */
            while (i < len && text[i] != '\n') {
                if (text[i] == '\\' && i + 1 < len && text[i + 1] == '\n') {
                    line++;
                    i++;
                }
                i++;
            }
        } else if (pfn_ident(c)) {
            size_t s = i;
            while (i < len && pfn_ident(text[i]))
                i++;
            if (i - s == 7 && !strncmp(text + s, "typedef", 7) && (s == 0 || !pfn_ident(text[s - 1]))) {
                /* the statement up to ';': look for '* PFN_name' */
                size_t j = i;
                unsigned l = line;
                while (j < len && text[j] != ';') {
                    if (text[j] == '\n')
                        l++;
                    if (text[j] == '*') {
                        size_t k = j + 1, e;
                        while (k < len && (text[k] == ' ' || text[k] == '\t'))
                            k++;
                        e = k;
                        while (e < len && pfn_ident(text[e]))
                            e++;
                        if (e - k > 4 && !strncmp(text + k, "PFN_", 4)) {
                            char *name = ut_strndup(text + k, e - k);
                            rc = pfn_add(m, name, path, l);
                            free(name);
                            if (rc) {
                                free(text);
                                return rc;
                            }
                            break;
                        }
                    }
                    j++;
                }
            }
        } else {
            i++;
        }
    }
    free(text);
    return CG_OK;
}
