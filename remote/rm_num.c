/*
 * rm_num.c - objects by number (rm_num.h): the table of one back end's live numbers and the rewriting of a
 * decoded call's parameters. Lookups are a linear scan: a program keeps few alive at once (PyTorch: a handle per
 * thread and device, a descriptor and its layouts per matmul, destroyed after it). A kind whose row (rm_numbered)
 * names another type 'also' takes that type's live numbers too, but not in its Destroy.
 */
#include <stdlib.h>
#include <string.h>

#include "rm_ltid.h"
#include "rm_num.h"
#include "rm_wire.h"

static rm_num_entry *rm_num_find(const rm_numtab *t, uint64_t id)
{
    for (uint32_t i = 0; i < t->n; i++)
        if (t->e[i].id == id)
            return &t->e[i];
    return NULL;
}

uint64_t rm_num_real(const rm_numtab *t, uint64_t v, int kind)
{
    const rm_num_entry *e = rm_ltid_is(v) ? rm_num_find(t, v) : NULL;
    return e != NULL && e->kind == kind ? e->real : 0;
}

/* A parameter of 'kind' given 'v': the object of that kind, or of the kind its row accepts too ('also': a cuBLAS
   handle as a cuBLASLt handle, the library's own cast) unless the call ends one of 'kind' (a Destroy of the other
   kind's object would end an object its own Destroy still owns). */
static uint64_t rm_num_param_real(const rm_numtab *t, const rm_plan *pl, uint64_t v, int kind)
{
    uint64_t real = rm_num_real(t, v, kind);
    const rm_numbered *nb = rm_numbered_at(kind);
    if (real == 0 && nb->also != NULL && pl->num_destroy != kind)
        real = rm_num_real(t, v, rm_numbered_type(nb->also));
    return real;
}

void rm_num_message(rm_numtab *t, const rm_plan *pl)
{
    t->pending = pl != NULL && pl->num_create != 0 ? rm_ltid(t->creates++) : 0;
}

static void *rm_num_ptr(const rm_plan *pl, const void *params, int i)
{
    void *v;
    memcpy(&v, (const uint8_t *)params + pl->p[i].offset, sizeof v);
    return v;
}

int rm_num_pre(rm_numtab *t, const rm_plan *pl, void *params)
{
    int bad_handle = 0;
    t->destroyed = 0;
    t->attr_out = NULL;
    for (uint32_t i = 0; i < pl->nparams; i++) {
        const rm_pplan *pp = &pl->p[i];
        uint64_t v, real;
        if (pp->num == 0)
            continue;
        memcpy(&v, (uint8_t *)params + pp->offset, sizeof v);
        if (v == 0)
            continue;   /* NULL: the library's own answer */
        real = rm_num_param_real(t, pl, v, pp->num);
        if (real == 0 && pl->ret_string) {   /* a text getter that does not use it (ncclGetLastError): NULL */
            memcpy((uint8_t *)params + pp->offset, &real, sizeof real);
            continue;
        }
        if (real == 0 && rm_numbered_at(pp->num)->handle) {
            bad_handle = 1;   /* answered as the library answers a bad handle, once every parameter is checked */
            continue;
        }
        if (real == 0)
            return RM_EMALFORMED;   /* not a number this back end gave, of another kind, or its Create failed */
        if (pl->num_destroy == pp->num && t->destroyed == 0) {
            t->destroyed = v;
            t->destroyed_kind = pp->num;
        }
        memcpy((uint8_t *)params + pp->offset, &real, sizeof real);
    }
    if (pl->num_attr_kind != 0) {   /* an attribute whose value is such an object */
        int64_t attr = 0;
        uint64_t size, v;
        const rm_pplan *ap = &pl->p[pl->num_attr_param];
        if (ap->size == 4) {
            int32_t a32;
            memcpy(&a32, (uint8_t *)params + ap->offset, 4);
            attr = a32;
        } else if (ap->size == 8) {
            memcpy(&attr, (uint8_t *)params + ap->offset, 8);
        }
        memcpy(&size, (uint8_t *)params + pl->p[pl->num_size_param].offset, sizeof size);
        void *buf = rm_num_ptr(pl, params, pl->num_buf_param);
        if (attr == pl->num_attr_value && buf != NULL) {
            if (size != sizeof v)
                return RM_EMALFORMED;   /* its value is a handle: 8 bytes, nothing else passes */
            if (pl->num_attr_out) {
                t->attr_out = buf;
            } else {
                memcpy(&v, buf, sizeof v);
                uint64_t real = v != 0 ? rm_num_real(t, v, pl->num_attr_kind) : 0;
                if (v != 0 && real == 0)
                    return RM_EMALFORMED;
                memcpy(buf, &real, sizeof real);   /* the staged copy: the client's bytes are not touched */
            }
        }
    }
    return bad_handle ? RM_NUM_BAD_HANDLE : RM_OK;
}

void rm_num_post(rm_numtab *t, const rm_plan *pl, void *params, int ok)
{
    if (t->destroyed != 0) {   /* dropped whatever the library said: the number names nothing any more */
        rm_num_entry *e = rm_num_find(t, t->destroyed);
        if (e != NULL && e->kind == t->destroyed_kind)
            *e = t->e[--t->n];
        t->destroyed = 0;
    }
    if (t->attr_out != NULL) {   /* the library's object back as its number (0: none, or not one of ours) */
        uint64_t real, id = 0;
        memcpy(&real, t->attr_out, sizeof real);
        for (uint32_t i = 0; ok && real != 0 && i < t->n; i++)
            if (t->e[i].real == real && t->e[i].kind == pl->num_attr_kind)
                id = t->e[i].id;
        memcpy(t->attr_out, &id, sizeof id);
        t->attr_out = NULL;
    }
    uint64_t id = t->pending, real = 0;
    t->pending = 0;
    if (id == 0 || pl->num_create == 0)
        return;
    void *out = pl->num_out_param >= 0 ? rm_num_ptr(pl, params, pl->num_out_param) : NULL;   /* rm_plan_numbers */
    if (ok && out != NULL)
        memcpy(&real, out, sizeof real);
    if (real == 0)
        return;   /* failed: the number stays unknown, so every later use of it is refused */
    if (t->n == t->cap) {
        uint32_t cap = t->cap ? t->cap * 2 : 64;
        rm_num_entry *n = cap <= RM_NUM_MAX ? realloc(t->e, cap * sizeof *n) : NULL;
        if (n == NULL) {
            t->full++;
            memset(out, 0, sizeof real);   /* no number: the client sees no object (its uses are refused) */
            return;
        }
        t->e = n;
        t->cap = cap;
    }
    t->e[t->n++] = (rm_num_entry){ .id = id, .real = real, .kind = pl->num_create };
    memcpy(out, &id, sizeof id);   /* the client gets the number */
}

void rm_num_free(rm_numtab *t)
{
    free(t->e);
    t->e = NULL;
    t->n = t->cap = 0;
}
