/*
 * rp_blasobj.c - the table of the cuBLAS handles and cuBLASLt objects the client saw created, with the values
 * the library accepted on them (rp_blasobj.h): its one owner, with its lock. A linear scan: a program keeps few
 * alive at once (PyTorch: a handle per thread and device, a descriptor and three layouts per matmul call,
 * destroyed after it).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "rp_blasobj.h"

static struct {
    pthread_mutex_t lock;
    rpb_entry *e;
    uint32_t n, cap;
} rbo = { .lock = PTHREAD_MUTEX_INITIALIZER };

void rbo_lock(void)
{
    pthread_mutex_lock(&rbo.lock);
}

void rbo_unlock(void)
{
    pthread_mutex_unlock(&rbo.lock);
}

rpb_entry *rbo_find_locked(uint64_t key, int kind)
{
    for (uint32_t i = 0; key != 0 && i < rbo.n; i++)
        if (rbo.e[i].key == key && rbo.e[i].kind == kind)
            return &rbo.e[i];
    return NULL;
}

rpb_entry *rbo_add_locked(uint64_t key, int kind, int fresh)
{
    rpb_entry *e = rbo_find_locked(key, kind);
    if (key == 0 || (e != NULL && !fresh))
        return e;
    for (uint32_t i = 0; e == NULL && i < rbo.n; i++)
        if (rbo.e[i].key == 0)
            e = &rbo.e[i];
    if (e == NULL) {
        if (rbo.n == rbo.cap) {
            uint32_t cap = rbo.cap ? rbo.cap * 2 : 64;
            rpb_entry *t = realloc(rbo.e, cap * sizeof *t);
            if (t == NULL)
                return NULL;
            rbo.e = t;
            rbo.cap = cap;
        }
        e = &rbo.e[rbo.n++];
    }
    memset(e, 0, sizeof *e);
    e->key = key;
    e->kind = (uint8_t)kind;
    return e;
}

void rbo_keep_attr_locked(rpb_entry *e, int64_t attr, const void *buf, int64_t size)
{
    rpb_kattr k;
    uint32_t i = 0;
    if (buf == NULL || size <= 0 || size > RPB_KEY_BYTES) {
        e->exact = 0;
        return;
    }
    memset(&k, 0, sizeof k);
    k.attr = (int32_t)attr;
    k.size = (uint8_t)size;
    memcpy(k.v, buf, (size_t)size);
    while (i < e->nkattr && e->kattr[i].attr < k.attr)
        i++;
    if (i < e->nkattr && e->kattr[i].attr == k.attr) {
        memcpy(&e->kattr[i], &k, sizeof k);   /* set again: the last value holds (bytes: the padding too) */
        return;
    }
    if (e->nkattr == RPB_KEY_ATTRS) {
        e->exact = 0;
        return;
    }
    memmove(&e->kattr[i + 1], &e->kattr[i], (e->nkattr - i) * sizeof e->kattr[0]);
    memcpy(&e->kattr[i], &k, sizeof k);
    e->nkattr++;
}

size_t rbo_content_locked(const rpb_entry *e, uint8_t *out, size_t cap)
{
    size_t n = 0, len = 1 + sizeof e->cargs + 1 + e->nkattr * sizeof e->kattr[0];
    if (!e->created || !e->exact || len > cap)
        return 0;
    out[n++] = e->kind;
    memcpy(out + n, e->cargs, sizeof e->cargs);
    n += sizeof e->cargs;
    out[n++] = e->nkattr;
    memcpy(out + n, e->kattr, e->nkattr * sizeof e->kattr[0]);
    return n + e->nkattr * sizeof e->kattr[0];
}

void rbo_fork_child(void)
{
    pthread_mutex_init(&rbo.lock, NULL);
    rbo.n = 0;
}
