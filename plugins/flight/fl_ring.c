/*
 * fl_ring.c - the flight recorder's file (fl_ring.h): made safely, its space reserved before it is written (a
 * full /dev/shm refuses here, with one line, instead of killing the program with SIGBUS at a later store),
 * slices claimed by threads, copied whole into a dump file, marked with a fatal signal's event. The copy and the
 * mark run in signal handlers: system calls only, no allocation, no stdio. Host-free.
 */
#define _GNU_SOURCE
#include "fl_ring.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cushim/cushim_io.h>

#include "fl_clock.h"
#include "region.h"   /* rg_proc_start, rg_proc_comm */

/* ---- async-signal-safe text ---- */

void fl_put(char *out, size_t cap, size_t *len, const char *s)
{
    while (s != NULL && *s != '\0' && *len + 1 < cap)
        out[(*len)++] = *s++;
    if (cap > 0)
        out[*len < cap ? *len : cap - 1] = '\0';
}

void fl_put_u64(char *out, size_t cap, size_t *len, uint64_t v)
{
    char b[24];
    int i = (int)sizeof b - 1;
    b[i] = '\0';
    do
        b[--i] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    fl_put(out, cap, len, b + i);
}

void fl_put_hex(char *out, size_t cap, size_t *len, uint64_t v)
{
    static const char digits[] = "0123456789abcdef";
    char b[24];
    int i = (int)sizeof b - 1;
    b[i] = '\0';
    do
        b[--i] = digits[v & 15];
    while ((v >>= 4) != 0);
    b[--i] = 'x';
    b[--i] = '0';
    fl_put(out, cap, len, b + i);
}

/* ---- space ---- */

/* Reserve [off, off+len) of the file: fallocate, or (a file system without it) posix_fallocate's writes. The
   program's file size limit fails with EFBIG instead of SIGXFSZ. 0, or an errno. */
static int fl_reserve(int fd, uint64_t off, uint64_t len)
{
    cushim_io_guard g;
    int e = 0;
    cushim_io_guard_begin(&g);
    if (fallocate(fd, 0, (off_t)off, (off_t)len) != 0) {
        e = errno;
        if (e == EOPNOTSUPP || e == ENOSYS)
            e = posix_fallocate(fd, (off_t)off, (off_t)len);
    }
    cushim_io_guard_end(&g, e);
    return e;
}

/* Is 'fd' still the file we opened (the program may have closed it and opened another with the number)? */
static int fl_fd_ours(const fl_ring *r)
{
    struct stat st;
    return r->fd >= 0 && fstat(r->fd, &st) == 0 && (uint64_t)st.st_dev == r->dev && (uint64_t)st.st_ino == r->ino;
}

/* ---- making the file ---- */

static uint32_t fl_pow2(uint32_t n)
{
    uint32_t p = 16;
    while (p < n && p < FL_N_MAX)
        p <<= 1;
    return p;
}

static void fl_name(char *out, size_t cap, const char *dir, int64_t pid, uint64_t start, int k)
{
    size_t len = 0;
    out[0] = '\0';
    fl_put(out, cap, &len, dir);
    fl_put(out, cap, &len, "/cushim-flight-");
    fl_put_u64(out, cap, &len, (uint64_t)pid);
    fl_put(out, cap, &len, "-");
    fl_put_u64(out, cap, &len, start);
    if (k > 0) {
        fl_put(out, cap, &len, "-");
        fl_put_u64(out, cap, &len, (uint64_t)k);
    }
    fl_put(out, cap, &len, ".ring");
}

/* The file at 'path' holds this process's ring from before it executed its present program (same pid, same
   start time, our magic): 1. */
static int fl_ours_preexec(const char *path, int64_t pid, uint64_t start)
{
    fl_head h;
    ssize_t n;
    int fd = cushim_open_regular(path, O_RDONLY | O_NOFOLLOW, 0, NULL, 0);
    struct stat st;
    if (fd < 0)
        return 0;
    n = fstat(fd, &st) == 0 && st.st_uid == geteuid() ? pread(fd, &h, sizeof h, 0) : -1;
    close(fd);
    return n == (ssize_t)sizeof h && h.magic == FL_MAGIC && h.pid == pid && h.start == start;
}

int fl_ring_create(fl_ring *r, const fl_ring_config *c, char *why, size_t whylen)
{
    int64_t pid = (int64_t)getpid();
    uint64_t start = rg_proc_start(0), n = fl_pow2(c->n), slice_size, off, file_size;
    uint32_t nslices = c->nslices < 1 ? 1 : c->nslices > FL_SLICES_MAX ? FL_SLICES_MAX : c->nslices;
    struct stat st;
    struct timespec ts;
    fl_head *h;
    void *base;
    int fd = -1, e = 0;
    char sub[160];
    memset(r, 0, sizeof *r);
    r->fd = -1;
    snprintf(r->dir, sizeof r->dir, "%s", c->dir);
    slice_size = sizeof(fl_slice) + n * FL_REC_SIZE;
    off = FL_HEAD_SIZE;
    uint64_t off_funcs = off;
    off += (uint64_t)c->nfuncs * sizeof(fl_func);
    off = (off + 63) & ~(uint64_t)63;
    uint64_t off_allocs = off;
    off += (uint64_t)c->nallocs * sizeof(fl_alloc);
    uint64_t off_freed = off;
    off += (uint64_t)c->nfreed * sizeof(fl_alloc);
    off = (off + 4095) & ~(uint64_t)4095;
    uint64_t off_slices = off;
    file_size = off_slices + nslices * slice_size;
    for (int k = 0; k < 8 && fd < 0; k++) {
        fl_name(r->path, sizeof r->path, c->dir, pid, start, k);
        fd = cushim_open_regular(r->path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, 0600, sub, sizeof sub);
        if (fd < 0 && errno == EEXIST && fl_ours_preexec(r->path, pid, start) && unlink(r->path) == 0)
            fd = cushim_open_regular(r->path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, 0600, sub, sizeof sub);
        if (fd < 0 && errno != EEXIST) {   /* a read-only or missing directory: no other name helps */
            cushim_why(why, whylen, "cannot create the ring in '%.300s': %s", c->dir, strerror(errno));
            return -1;
        }
    }
    if (fd < 0) {
        cushim_why(why, whylen, "cannot create the ring in '%.300s': 8 files of this pid exist", c->dir);
        return -1;
    }
    (void)fchmod(fd, 0600);   /* whatever the umask left: this user's alone */
    if (fstat(fd, &st) != 0 || st.st_uid != geteuid()) {
        e = errno;
        cushim_why(why, whylen, "'%.300s': not this user's file", r->path);
        goto fail;
    }
    if (cushim_ftruncate(fd, (off_t)file_size) != 0 || (e = fl_reserve(fd, 0, off_slices)) != 0) {
        e = e != 0 ? e : errno;
        cushim_why(why, whylen, "cannot reserve %llu bytes for the ring in '%.300s': %s",
                   (unsigned long long)off_slices, c->dir, strerror(e));
        goto fail;
    }
    base = mmap(NULL, (size_t)file_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
        e = errno;
        cushim_why(why, whylen, "cannot map the ring '%.300s': %s", r->path, strerror(e));
        goto fail;
    }
    h = base;
    h->version = FL_VERSION;
    h->head_size = FL_HEAD_SIZE;
    h->rec_size = FL_REC_SIZE;
    h->n = (uint32_t)n;
    h->nslices = nslices;
    h->nfuncs = c->nfuncs;
    h->nallocs = c->nallocs;
    h->nfreed = c->nfreed;
    h->slice_size = slice_size;
    h->off_funcs = off_funcs;
    h->off_allocs = off_allocs;
    h->off_freed = off_freed;
    h->off_slices = off_slices;
    h->file_size = file_size;
    h->pid = pid;
    h->start = start;
    h->t0 = c->t0;
    h->clock = c->clock;
    h->cal0 = c->cal0;
    h->cal1 = c->cal1;
    clock_gettime(CLOCK_REALTIME, &ts);
    h->wall0_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    h->cuda_version = c->cuda_version;
    h->api_id_limit = c->api_id_limit;
    rg_proc_comm(h->comm);
    snprintf(h->host_version, sizeof h->host_version, "%s", c->host_version ? c->host_version : "");
    __atomic_store_n(&h->magic, FL_MAGIC, __ATOMIC_RELEASE);
    r->base = base;
    r->size = (size_t)file_size;
    r->fd = fd;
    r->dev = (uint64_t)st.st_dev;
    r->ino = (uint64_t)st.st_ino;
    r->head = h;
    r->mask = (uint32_t)n - 1;
    return 0;
fail:
    close(fd);
    unlink(r->path);
    errno = e;
    return -1;
}

void fl_ring_finish(fl_ring *r, int unlink_it)
{
    if (r->base == NULL)
        return;
    if (unlink_it)
        unlink(r->path);
    if (fl_fd_ours(r))
        close(r->fd);
    r->fd = -1;
}

void fl_ring_forget(fl_ring *r)
{
    if (r->base != NULL)
        (void)mmap(r->base, r->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (fl_fd_ours(r))
        close(r->fd);
    r->base = NULL;
    r->head = NULL;
    r->fd = -1;
}

/* ---- slices ---- */

fl_slice *fl_ring_claim(fl_ring *r, uint64_t tid, uint64_t now, int *nospace)
{
    fl_head *h = r->head;
    fl_slice *s, *oldest = NULL;
    *nospace = 0;
    if (h == NULL)
        return NULL;
    for (uint32_t i = 0; i < h->nslices; i++) {
        uint32_t want = FL_S_FREE;
        s = fl_slice_at(h, r->base, i);
        if (!atomic_compare_exchange_strong(&s->state, &want, FL_S_CLAIMING))
            continue;
        /* a slice never used: its records are reserved now, through a descriptor that is still ours */
        int e = EBADF;
        uint64_t at = h->off_slices + (uint64_t)i * h->slice_size;
        if (!fl_fd_ours(r) || (e = fl_reserve(r->fd, at, h->slice_size)) != 0) {
            atomic_store(&s->state, FL_S_FREE);
            *nospace = e != EBADF;
            return NULL;
        }
        s->index = i;
        goto take;
    }
    /* none free: the slice of the thread that ended longest ago */
    for (uint32_t i = 0; i < h->nslices; i++) {
        s = fl_slice_at(h, r->base, i);
        if (atomic_load(&s->state) == FL_S_EXITED && (oldest == NULL || s->t_claim < oldest->t_claim))
            oldest = s;
    }
    if (oldest == NULL)
        return NULL;
    {
        uint32_t want = FL_S_EXITED;
        if (!atomic_compare_exchange_strong(&oldest->state, &want, FL_S_CLAIMING))
            return NULL;
    }
    s = oldest;
take:
    atomic_store_explicit(&s->head, 0, memory_order_relaxed);
    s->tid = tid;
    s->t_claim = now;
    memset(s->name, 0, sizeof s->name);
    {
        char p[64];
        size_t len = 0;
        int fd;
        p[0] = '\0';
        fl_put(p, sizeof p, &len, "/proc/thread-self/comm");
        if ((fd = open(p, O_RDONLY | O_CLOEXEC)) >= 0) {
            ssize_t k = read(fd, s->name, sizeof s->name - 1);
            close(fd);
            if (k > 0 && s->name[k - 1] == '\n')
                s->name[k - 1] = '\0';
        }
    }
    uint32_t used = atomic_load(&h->slices_used);
    while (s->index + 1 > used && !atomic_compare_exchange_weak(&h->slices_used, &used, s->index + 1)) {
    }
    atomic_store_explicit(&s->state, FL_S_ACTIVE, memory_order_release);
    return s;
}

void fl_ring_release(fl_ring *r, fl_slice *s)
{
    if (r->head != NULL && s != NULL)
        atomic_store_explicit(&s->state, FL_S_EXITED, memory_order_release);
}

/* ---- dumps ---- */

static int fl_pwrite_all(int fd, const void *buf, size_t n, uint64_t off)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t k = pwrite(fd, p, n, (off_t)off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
        off += (uint64_t)k;
    }
    return 0;
}

/* A slice's header and records, 16 at a time through a stack buffer: a record whose seq changed while it was
   copied (its thread was writing it) goes out with seq 0, which readers skip. */
static int fl_copy_slice(int fd, const fl_ring *r, const fl_slice *s, uint64_t off)
{
    enum { K = 16 };
    unsigned char buf[K * FL_REC_SIZE];
    const fl_head *h = r->head;
    if (fl_pwrite_all(fd, s, sizeof *s, off) != 0)
        return -1;
    off += sizeof *s;
    for (uint32_t i = 0; i < h->n; i += K) {
        uint32_t m = h->n - i < K ? h->n - i : K;
        const unsigned char *src = (const unsigned char *)(s + 1) + (size_t)i * FL_REC_SIZE;
        memcpy(buf, src, (size_t)m * FL_REC_SIZE);
        FL_FENCE_ACQUIRE();
        for (uint32_t j = 0; j < m; j++) {
            const fl_rec *live = (const fl_rec *)(src + (size_t)j * FL_REC_SIZE);
            fl_rec *copy = (fl_rec *)(buf + (size_t)j * FL_REC_SIZE);
            uint64_t was;
            memcpy(&was, (const void *)&copy->seq, sizeof was);
            if (atomic_load_explicit(&live->seq, memory_order_relaxed) != was) {
                uint64_t zero = 0;
                memcpy((void *)&copy->seq, &zero, sizeof zero);
            }
        }
        if (fl_pwrite_all(fd, buf, (size_t)m * FL_REC_SIZE, off + (uint64_t)i * FL_REC_SIZE) != 0)
            return -1;
    }
    return 0;
}

int fl_ring_snapshot(const fl_ring *r, const char *path, const fl_event *ev)
{
    const fl_head *h = r->head;
    fl_cal now;
    cushim_io_guard g;
    int fd, rc = -1, e = 0;
    if (h == NULL) {
        errno = EINVAL;
        return -1;
    }
    do
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
    while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return -1;
    cushim_io_guard_begin(&g);
    if (h->clock == FL_CLOCK_TSC)
        fl_cal_take(&now);   /* the copy's latest pair: its reader's rate */
    if (fl_pwrite_all(fd, h, FL_HEAD_SIZE, 0) != 0 ||
        fl_pwrite_all(fd, ev, sizeof *ev, offsetof(fl_head, event)) != 0 ||
        (h->clock == FL_CLOCK_TSC && fl_pwrite_all(fd, &now, sizeof now, offsetof(fl_head, cal1)) != 0) ||
        fl_pwrite_all(fd, (const char *)r->base + h->off_funcs, (size_t)(h->off_slices - h->off_funcs),
                      h->off_funcs) != 0)
        goto out;
    uint32_t used = atomic_load(&h->slices_used);
    for (uint32_t i = 0; i < used && i < h->nslices; i++) {
        const fl_slice *s = fl_slice_at(h, r->base, i);
        if (atomic_load(&s->state) != FL_S_FREE &&
            fl_copy_slice(fd, r, s, h->off_slices + (uint64_t)i * h->slice_size) != 0)
            goto out;
    }
    if (ftruncate(fd, (off_t)h->file_size) != 0)
        goto out;
    rc = 0;
out:
    e = rc != 0 ? errno : 0;
    cushim_io_guard_end(&g, e);
    close(fd);
    if (rc != 0) {
        unlink(path);
        errno = e;
    }
    return rc;
}

void fl_ring_mark(fl_ring *r, const fl_event *ev)
{
    if (r->head == NULL)
        return;
    memcpy(&r->head->event, ev, sizeof *ev);
    if (r->head->clock == FL_CLOCK_TSC) {
        fl_cal now;
        fl_cal_take(&now);
        fl_cal_store(&r->head->cal1, &now);
    }
    msync(r->base, r->size, MS_SYNC);
}
