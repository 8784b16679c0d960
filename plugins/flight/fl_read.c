/*
 * fl_read.c - a flight recorder file read and checked (fl_read.h). The file is mapped read-only and shared, so
 * a live process's ring is seen as it goes on; nothing is trusted before the header's layout adds up to the
 * file's size, and each record is copied and checked before it is used.
 */
#define _GNU_SOURCE
#include "fl_read.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cushim/cushim_io.h>

#include "fl_clock.h"

static int fl_bad(char *why, size_t whylen, const char *path, const char *what)
{
    cushim_why(why, whylen, "'%.400s' is not a flight recorder file this tool reads: %s", path, what);
    return -1;
}

int fl_file_open(fl_file *f, const char *path, char *why, size_t whylen)
{
    struct stat st;
    fl_head h;
    void *base;
    int fd;
    uint64_t n, end;
    memset(f, 0, sizeof *f);
    fd = cushim_open_regular(path, O_RDONLY, 0, why, whylen);
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) != 0 || (uint64_t)st.st_size < FL_HEAD_SIZE || pread(fd, &h, sizeof h, 0) != (ssize_t)sizeof h) {
        close(fd);
        return fl_bad(why, whylen, path, "shorter than its header");
    }
    if (h.magic != FL_MAGIC) {
        close(fd);
        return fl_bad(why, whylen, path, "no CFLIGHT1 magic");
    }
    n = h.n;
    end = h.off_slices + (uint64_t)h.nslices * h.slice_size;
    if (h.version < 1 || h.version > FL_VERSION || h.head_size != FL_HEAD_SIZE || h.rec_size != FL_REC_SIZE) {
        close(fd);
        return fl_bad(why, whylen, path, "another version's layout");
    }
    if (n < 16 || n > FL_N_MAX || (n & (n - 1)) != 0 || h.nslices < 1 || h.nslices > FL_SLICES_MAX ||
        h.nfuncs > (1u << 20) || h.nallocs < 1 || h.nallocs > (1u << 22) || h.nfreed < 1 || h.nfreed > (1u << 20) ||
        h.slice_size != sizeof(fl_slice) + n * FL_REC_SIZE || h.off_funcs != FL_HEAD_SIZE ||
        h.off_allocs < h.off_funcs + (uint64_t)h.nfuncs * sizeof(fl_func) ||
        h.off_freed != h.off_allocs + (uint64_t)h.nallocs * sizeof(fl_alloc) ||
        h.off_slices < h.off_freed + (uint64_t)h.nfreed * sizeof(fl_alloc) || h.off_slices % 8 != 0 ||
        h.file_size != end) {
        close(fd);
        return fl_bad(why, whylen, path, "its layout does not add up");
    }
    if ((uint64_t)st.st_size < end) {
        close(fd);
        return fl_bad(why, whylen, path, "shorter than its layout (cut)");
    }
    base = mmap(NULL, (size_t)end, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (base == MAP_FAILED) {
        cushim_why(why, whylen, "cannot map '%.400s': %s", path, strerror(errno));
        return -1;
    }
    f->base = base;
    f->size = (size_t)end;
    f->h = base;
    f->head = h;
    f->head.comm[sizeof f->head.comm - 1] = '\0';
    f->head.host_version[sizeof f->head.host_version - 1] = '\0';
    snprintf(f->path, sizeof f->path, "%s", path);
    if (h.version < 2)
        f->head.clock = FL_CLOCK_HOST;   /* version 1 kept ns, and nothing after 'last_ok_sync_seq' */
    if (f->head.clock == FL_CLOCK_TSC) {
        /* the rate over the longest stretch the file tells: the pair made 1 ms after the first, or a later one
           (the watchdog's, a dump's, a fatal signal's, each thread's latest) */
        uint32_t used = fl_file_nslices(f);
        fl_cal best = f->head.cal1;
        f->ns_per_tick = fl_cal_rate(&f->head.cal0, &best);
        for (uint32_t i = 0; i < used; i++) {
            fl_cal c;
            double r;
            memcpy(&c, &fl_file_slice(f, i)->cal, sizeof c);
            if ((r = fl_cal_rate(&f->head.cal0, &c)) > 0 && (f->ns_per_tick == 0 || c.ns > best.ns)) {
                best = c;
                f->ns_per_tick = r;
            }
        }
        if (f->ns_per_tick == 0) {
            fl_file_close(f);
            return fl_bad(why, whylen, path, "its TSC times have no calibration to convert them with");
        }
    } else if (f->head.clock != FL_CLOCK_HOST) {
        fl_file_close(f);
        return fl_bad(why, whylen, path, "an unknown clock");
    }
    return 0;
}

uint64_t fl_file_ns(const fl_file *f, uint64_t t)
{
    return f->head.clock == FL_CLOCK_TSC ? fl_tsc_ns(&f->head.cal0, f->ns_per_tick, t) : t;
}

void fl_file_close(fl_file *f)
{
    if (f->base != NULL)
        munmap((void *)f->base, f->size);
    f->base = NULL;
}

uint32_t fl_file_nslices(const fl_file *f)
{
    uint32_t used = atomic_load(&f->h->slices_used);
    return used < f->head.nslices ? used : f->head.nslices;
}

const fl_slice *fl_file_slice(const fl_file *f, uint32_t i)
{
    return (const fl_slice *)(f->base + f->head.off_slices + (uint64_t)i * f->head.slice_size);
}

int fl_file_calls(const fl_file *f, uint32_t i, fl_call **out, size_t *n, size_t *bad)
{
    const fl_slice *s = fl_file_slice(f, i);
    uint64_t head = atomic_load(&s->head), mask = f->head.n - 1, from;
    fl_call *v;
    size_t k = 0;
    *out = NULL;
    *n = 0;
    if (bad != NULL)
        *bad = 0;
    from = head > f->head.n ? head - f->head.n : 0;
    v = calloc(head - from + 1, sizeof *v);
    if (v == NULL)
        return -1;
    for (uint64_t j = from; j < head; j++) {
        const unsigned char *src = (const unsigned char *)(s + 1) + (size_t)(j & mask) * FL_REC_SIZE;
        const fl_rec *live = (const fl_rec *)src;
        fl_call *c = &v[k];
        uint64_t s1 = atomic_load_explicit(&live->seq, memory_order_acquire), s2;
        c->flags = atomic_load_explicit(&live->flags, memory_order_acquire);
        memcpy(&c->rec, src, sizeof c->rec);
        memcpy(c->data, src + sizeof(fl_rec), FL_REC_DATA);
        FL_FENCE_ACQUIRE();
        s2 = atomic_load_explicit(&live->seq, memory_order_relaxed);
        if (s1 == 0 || s1 != s2)
            continue;   /* being written, or never written */
        c->seq = s1;
        c->slice = i;
        if (c->rec.params_len > FL_REC_DATA || fl_pad8(c->rec.params_len) + c->rec.args_len > FL_REC_DATA ||
            c->rec.api_id >= f->head.api_id_limit) {
            if (bad != NULL)
                (*bad)++;
            continue;
        }
        if (!(c->flags & FL_R_ARGS))
            c->rec.args_len = 0;
        c->rec.t_enter = fl_file_ns(f, c->rec.t_enter);
        c->rec.t_exit = fl_file_ns(f, c->rec.t_exit);
        k++;
    }
    *out = v;
    *n = k;
    return 0;
}

const fl_func *fl_file_func(const fl_file *f, uint64_t handle, uint64_t seq)
{
    const fl_func *tab = (const fl_func *)(f->base + f->head.off_funcs), *best = NULL, *any = NULL;
    uint32_t used = atomic_load(&f->h->funcs_used);
    if (used > f->head.nfuncs)
        used = f->head.nfuncs;
    for (uint32_t i = 0; i < used; i++) {
        const fl_func *fn = &tab[i];
        if (atomic_load(&fn->handle) != handle || handle == 0)
            continue;
        any = fn;
        if (fn->first_seq <= seq && (best == NULL || fn->first_seq > best->first_seq))
            best = fn;
    }
    return best != NULL ? best : any;
}

static int fl_copy_alloc(const fl_file *f, const fl_alloc *src, fl_alloc *dst, uint32_t want)
{
    uint32_t st = atomic_load_explicit(&src->state, memory_order_acquire);
    if (st != want)
        return 0;
    memcpy(dst, src, sizeof *dst);
    FL_FENCE_ACQUIRE();
    if (atomic_load_explicit(&src->state, memory_order_relaxed) != want || dst->size >= (1ull << 56))
        return 0;
    dst->t = fl_file_ns(f, dst->t);
    dst->free_t = fl_file_ns(f, dst->free_t);
    return 1;
}

void fl_file_where(const fl_file *f, uint64_t addr, uint64_t near, fl_where *w)
{
    const fl_alloc *tab = (const fl_alloc *)(f->base + f->head.off_allocs);
    const fl_alloc *freed = (const fl_alloc *)(f->base + f->head.off_freed);
    uint64_t nf = atomic_load(&f->h->freed_head);
    fl_where past;
    fl_alloc a;
    memset(w, 0, sizeof *w);
    memset(&past, 0, sizeof past);
    w->kind = past.kind = FL_AT_NONE;
    for (uint32_t i = 0; i < f->head.nallocs; i++) {
        if (!fl_copy_alloc(f, &tab[i], &a, FL_A_LIVE) || addr < a.base)
            continue;
        if (addr - a.base < a.size || (a.size == 0 && addr == a.base)) {
            w->kind = FL_AT_INSIDE;
            w->a = a;
            w->off = addr - a.base;
            return;
        }
        /* the nearest end below the address, within 'near' */
        if (addr - a.base - a.size <= near &&
            (past.kind != FL_AT_PAST || addr - a.base - a.size < past.off - past.a.size)) {
            past.kind = FL_AT_PAST;
            past.a = a;
            past.off = addr - a.base;
        }
    }
    /* released memory, the latest release first */
    for (uint64_t k = 0; k < nf && k < f->head.nfreed; k++) {
        const fl_alloc *e = &freed[(nf - 1 - k) % f->head.nfreed];
        if (!fl_copy_alloc(f, e, &a, FL_A_GONE) || addr < a.base || addr - a.base >= a.size)
            continue;
        w->kind = FL_AT_FREED;
        w->a = a;
        w->off = addr - a.base;
        return;
    }
    *w = past;
}

static int fl_by_base(const void *x, const void *y)
{
    const fl_alloc *a = x, *b = y;
    return a->base < b->base ? -1 : a->base > b->base;
}

int fl_file_allocs(const fl_file *f, fl_alloc **out, size_t *n)
{
    const fl_alloc *tab = (const fl_alloc *)(f->base + f->head.off_allocs);
    size_t k = 0, cap = 64;
    fl_alloc *v = malloc(cap * sizeof *v);
    *out = NULL;
    *n = 0;
    if (v == NULL)
        return -1;
    for (uint32_t i = 0; i < f->head.nallocs; i++) {
        if (k == cap) {
            fl_alloc *v2 = realloc(v, (cap *= 2) * sizeof *v);
            if (v2 == NULL) {
                free(v);
                return -1;
            }
            v = v2;
        }
        if (fl_copy_alloc(f, &tab[i], &v[k], FL_A_LIVE))
            k++;
    }
    qsort(v, k, sizeof *v, fl_by_base);
    *out = v;
    *n = k;
    return 0;
}
