/*
 * ml_table.c - memlimit's table of charged pointers and handles (ml_table.h).
 */
#include "ml_table.h"

#include <stdlib.h>
#include <string.h>

static size_t ml_hash(uint8_t ns, uint64_t key)
{
    uint64_t x = key ^ ((uint64_t)ns << 63);
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return (size_t)x;
}

void ml_table_init(ml_table *t)
{
    memset(t, 0, sizeof *t);
    pthread_mutex_init(&t->mu, NULL);
}

void ml_table_free(ml_table *t)
{
    free(t->cells);
    t->cells = NULL;
    t->cap = t->n = 0;
}

static size_t ml_find(const ml_table *t, uint8_t ns, uint64_t key, int *found)
{
    size_t mask = t->cap - 1, i = ml_hash(ns, key) & mask;
    while (t->cells[i].key != 0) {
        if (t->cells[i].key == key && t->cells[i].ns == ns) {
            *found = 1;
            return i;
        }
        i = (i + 1) & mask;
    }
    *found = 0;
    return i;
}

static int ml_grow(ml_table *t)
{
    size_t cap = t->cap ? t->cap * 2 : 1024;
    ml_rec *cells = calloc(cap, sizeof *cells), *old = t->cells;
    size_t oldcap = t->cap;
    if (cells == NULL)
        return -1;
    t->cells = cells;
    t->cap = cap;
    for (size_t i = 0; i < oldcap; i++)
        if (old[i].key != 0) {
            int f;
            t->cells[ml_find(t, old[i].ns, old[i].key, &f)] = old[i];
        }
    free(old);
    return 0;
}

/* Backward-shift deletion of cell i. */
static void ml_remove_at(ml_table *t, size_t i)
{
    size_t mask = t->cap - 1, j = i;
    for (;;) {
        size_t home;
        j = (j + 1) & mask;
        if (t->cells[j].key == 0)
            break;
        home = ml_hash(t->cells[j].ns, t->cells[j].key) & mask;
        /* move j back to i when its home is not in (i, j] cyclically */
        if ((j > i && (home <= i || home > j)) || (j < i && (home <= i && home > j))) {
            t->cells[i] = t->cells[j];
            i = j;
        }
    }
    memset(&t->cells[i], 0, sizeof t->cells[i]);
    t->n--;
}

int ml_table_put(ml_table *t, const ml_rec *r, ml_rec *old)
{
    int found, rc = 0;
    size_t i;
    if (old)
        memset(old, 0, sizeof *old);
    if (r->key == 0)
        return 0;
    pthread_mutex_lock(&t->mu);
    if ((t->n + 1) * 2 > t->cap && ml_grow(t) != 0) {
        rc = -1;
        goto out;
    }
    i = ml_find(t, r->ns, r->key, &found);
    if (found && old)
        *old = t->cells[i];
    if (!found)
        t->n++;
    t->cells[i] = *r;
out:
    pthread_mutex_unlock(&t->mu);
    return rc;
}

int ml_table_get(ml_table *t, uint8_t ns, uint64_t key, ml_rec *out)
{
    int found = 0;
    size_t i;
    if (key == 0)
        return 0;
    pthread_mutex_lock(&t->mu);
    if (t->cap) {
        i = ml_find(t, ns, key, &found);
        if (found)
            *out = t->cells[i];
    }
    pthread_mutex_unlock(&t->mu);
    return found;
}

int ml_table_take(ml_table *t, uint8_t ns, uint64_t key, ml_rec *out)
{
    int found = 0;
    size_t i;
    if (key == 0)
        return 0;
    pthread_mutex_lock(&t->mu);
    if (t->cap) {
        i = ml_find(t, ns, key, &found);
        if (found) {
            *out = t->cells[i];
            ml_remove_at(t, i);
        }
    }
    pthread_mutex_unlock(&t->mu);
    return found;
}

int ml_table_release(ml_table *t, uint8_t ns, uint64_t key, ml_rec *out)
{
    int found = 0, rc = 0;
    size_t i;
    if (key == 0)
        return 0;
    pthread_mutex_lock(&t->mu);
    if (t->cap) {
        i = ml_find(t, ns, key, &found);
        if (found && t->cells[i].refs > 1) {
            t->cells[i].refs--;
            rc = 1;
        } else if (found) {
            *out = t->cells[i];
            ml_remove_at(t, i);
            rc = 2;
        }
    }
    pthread_mutex_unlock(&t->mu);
    return rc;
}

int ml_table_retain(ml_table *t, uint8_t ns, uint64_t key, int delta)
{
    int found = 0;
    size_t i;
    if (key == 0)
        return 0;
    pthread_mutex_lock(&t->mu);
    if (t->cap) {
        i = ml_find(t, ns, key, &found);
        if (found)
            t->cells[i].refs = (uint32_t)((int64_t)t->cells[i].refs + delta);
    }
    pthread_mutex_unlock(&t->mu);
    return found;
}

size_t ml_table_count(ml_table *t)
{
    size_t n;
    pthread_mutex_lock(&t->mu);
    n = t->n;
    pthread_mutex_unlock(&t->mu);
    return n;
}

void ml_table_each(ml_table *t, void (*fn)(const ml_rec *r, void *ctx), void *ctx)
{
    pthread_mutex_lock(&t->mu);
    for (size_t i = 0; i < t->cap; i++)
        if (t->cells[i].key != 0)
            fn(&t->cells[i], ctx);
    pthread_mutex_unlock(&t->mu);
}
