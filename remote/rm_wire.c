/*
 * rm_wire.c - the bounded reader and writer of rm_wire.h and the message header.
 */
#include <stdlib.h>
#include <string.h>

#include "rm_wire.h"

int rm_rd_u8(rm_rd *r, uint8_t *v)
{
    return rm_rd_bytes(r, v, 1);
}

int rm_rd_u32(rm_rd *r, uint32_t *v)
{
    return rm_rd_bytes(r, v, 4);
}

int rm_rd_u64(rm_rd *r, uint64_t *v)
{
    return rm_rd_bytes(r, v, 8);
}

void rm_wr_init(rm_wr *w, size_t max)
{
    memset(w, 0, sizeof *w);
    w->max = max ? max : RM_MAX_PAYLOAD;
}

void rm_wr_free(rm_wr *w)
{
    free(w->p);
    memset(w, 0, sizeof *w);
}

void rm_wr_reset(rm_wr *w)
{
    w->len = 0;
    w->err = 0;
    w->ref = NULL;
    w->ref_at = w->ref_len = 0;
}

void rm_wr_ref(rm_wr *w, const void *src, size_t n)
{
    if (!w->allow_ref || w->ref != NULL || n < RM_REF_MIN || w->err) {
        rm_wr_bytes(w, src, n);
        return;
    }
    if (n > w->max || w->len > w->max - n) {
        w->err = RM_EBOUNDS;
        return;
    }
    w->ref = src;
    w->ref_at = w->len;
    w->ref_len = n;
}

uint8_t *rm_wr_room(rm_wr *w, size_t n)
{
    if (w->err)
        return NULL;
    if (n > w->max || w->len + w->ref_len > w->max - n) {
        w->err = RM_EBOUNDS;
        return NULL;
    }
    if (w->len + n > w->cap) {
        size_t cap = w->cap ? w->cap : 256;
        while (cap < w->len + n)
            cap = cap > w->max / 2 ? w->max : cap * 2;
        uint8_t *p = realloc(w->p, cap);
        if (p == NULL) {
            w->err = RM_ENOMEM;
            return NULL;
        }
        w->p = p;
        w->cap = cap;
    }
    uint8_t *at = w->p + w->len;
    w->len += n;
    return at;
}

void rm_wr_bytes(rm_wr *w, const void *src, size_t n)
{
    uint8_t *d = rm_wr_room(w, n);
    if (d != NULL && n != 0)
        memcpy(d, src, n);
}

void rm_wr_u8(rm_wr *w, uint8_t v)
{
    rm_wr_bytes(w, &v, 1);
}

void rm_wr_u32(rm_wr *w, uint32_t v)
{
    rm_wr_bytes(w, &v, 4);
}

void rm_wr_u64(rm_wr *w, uint64_t v)
{
    rm_wr_bytes(w, &v, 8);
}

void rm_hdr_put(uint8_t out[16], uint16_t kind, uint32_t length, uint32_t seq)
{
    rm_hdr h = { .magic = RM_MAGIC, .version = RM_WIRE_VERSION, .kind = kind, .length = length, .seq = seq };
    memcpy(out, &h, sizeof h);
}

int rm_hdr_get(const uint8_t in[16], rm_hdr *h)
{
    memcpy(h, in, sizeof *h);
    if (h->magic != RM_MAGIC)
        return RM_EMALFORMED;
    if (h->length > RM_MAX_PAYLOAD)
        return RM_EBOUNDS;
    return RM_OK;   /* the version is the caller's to judge: a hello of another version gets an answer */
}
