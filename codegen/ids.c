/*
 * ids.c - the stable API id registry, codegen/api_ids.tsv.
 *
 * 'id<TAB>exported_name' rows, append-only: a name keeps its id forever,
 * also after it disappears from the headers; new names get the next free
 * ids in header order. The file is rewritten only when it grew.
 */
#include "cg.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct id_row {
    unsigned id;
    char *name;
} id_row;

/* The grown registry, written by id_commit once the output is in place. */
static char *id_pending, *id_pending_path;
static size_t id_pending_len;
static int id_pending_added;

int id_commit(void)
{
    int rc = CG_OK;
    char *tmp;
    if (!id_pending)
        return CG_OK;
    tmp = ut_printf("%s.tmp", id_pending_path);
    rc = ut_write_file(tmp, id_pending, id_pending_len);
    if (!rc && rename(tmp, id_pending_path) != 0) {
        ut_error("cannot rename '%s' to '%s': %s", tmp, id_pending_path, strerror(errno));
        rc = CG_EIO;
    }
    if (!rc)
        ut_note("added %d id(s) to %s", id_pending_added, id_pending_path);
    free(tmp);
    free(id_pending);
    free(id_pending_path);
    id_pending = id_pending_path = NULL;
    return rc;
}

static int id_order_cmp(const void *a, const void *b)
{
    const cg_api *const *x = a, *const *y = b;
    return (*x)->order < (*y)->order ? -1 : (*x)->order > (*y)->order;
}

int id_assign(cg_model *m, const char *path, int may_write)
{
    char *text = NULL, *s;
    id_row *rows = NULL;
    int nrows = 0, cap = 0, added = 0, rc = CG_OK;
    unsigned next = 1, line = 0;
    cg_api **order;

    if (ut_is_file(path)) {
        rc = ut_read_file(path, &text, NULL);
        if (rc)
            return rc;
        for (s = text; s && *s;) {
            char *nl = strchr(s, '\n'), *tab, *end;
            unsigned long id;
            line++;
            if (nl)
                *nl = 0;
            if (*s && *s != '#') {
                tab = strchr(s, '\t');
                id = strtoul(s, &end, 10);
                if (!tab || end != tab || id == 0 || id > 65535 || !tab[1]) {
                    ut_error("%s:%u: expected 'id<TAB>name'", path, line);
                    rc = CG_EINPUT;
                    break;
                }
                if (nrows == cap) {
                    cap = cap ? 2 * cap : 1024;
                    rows = ut_realloc(rows, (size_t)cap * sizeof *rows);
                }
                rows[nrows].id = (unsigned)id;
                rows[nrows].name = tab + 1;
                for (int i = 0; i < nrows; i++)
                    if (rows[i].id == id || !strcmp(rows[i].name, tab + 1)) {
                        ut_error("%s:%u: duplicate id or name '%s'", path, line, tab + 1);
                        rc = CG_EINPUT;
                    }
                nrows++;
                if (id >= next)
                    next = (unsigned)id + 1;
            }
            s = nl ? nl + 1 : NULL;
        }
    }
    if (rc) {
        free(rows);
        free(text);
        return rc;
    }
    order = ut_alloc((size_t)m->napis * sizeof *order);
    for (int i = 0; i < m->napis; i++)
        order[i] = &m->apis[i];
    qsort(order, (size_t)m->napis, sizeof *order, id_order_cmp);
    /* names to ids: a small hash over the rows */
    for (int i = 0; i < m->napis; i++) {
        cg_api *a = order[i];
        a->id = 0;
        for (int r = 0; r < nrows; r++)
            if (!strcmp(rows[r].name, a->name)) {
                a->id = rows[r].id;
                break;
            }
        if (!a->id) {
            a->id = next++;
            added++;
        }
    }
    if (added && !may_write) {
        ut_error("the id registry '%s' lacks %d name(s) of these headers; generate without --verify first",
                 path, added);
        rc = CG_EDIFF;
    } else if (added) {
        ut_buf b = {0};
        char *tmp = ut_printf("%s.tmp", path);
        if (text == NULL)
            ut_puts(&b, "# cushim stable API ids: id<TAB>exported_name. Append-only; never edit or reuse an id.\n");
        else {
            /* keep the file as it was, then append */
            char *orig = NULL;
            size_t len = 0;
            rc = ut_read_file(path, &orig, &len);
            if (rc)
                goto out;
            ut_putn(&b, orig, len);
            if (len && orig[len - 1] != '\n')
                ut_puts(&b, "\n");
            free(orig);
        }
        for (int i = 0; i < m->napis; i++) {
            cg_api *a = order[i];
            int old = 0;
            for (int r = 0; r < nrows && !old; r++)
                old = rows[r].id == a->id;
            if (!old)
                ut_bprintf(&b, "%u\t%s\n", a->id, a->name);
        }
        free(id_pending);
        free(id_pending_path);
        id_pending = b.s;
        id_pending_len = b.len;
        id_pending_added = added;
        id_pending_path = ut_strdup(path);
        free(tmp);
    }
out:
    free(order);
    free(rows);
    free(text);
    return rc;
}
