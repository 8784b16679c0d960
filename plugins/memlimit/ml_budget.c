/*
 * ml_budget.c - the budget region (ml_budget.h says how it stays consistent
 * with no lock waited for and any process killed at any instant).
 */
#define _GNU_SOURCE
#include "ml_budget.h"

#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cushim/cushim_io.h"

static int ml_lock_op(int fd, int cmd, short type, int slot)
{
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = type;
    fl.l_whence = SEEK_SET;
    fl.l_start = ML_LOCK_BASE + slot;
    fl.l_len = 1;
    fl.l_pid = 0;   /* required for OFD locks */
    return fcntl(fd, cmd, &fl);
}

/* Our start time (field 22 of /proc/self/stat), 0 if unreadable. */
static uint64_t ml_start_time(void)
{
    char buf[1024];
    ssize_t n;
    const char *p;
    unsigned long long t = 0;
    int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    p = strrchr(buf, ')');
    if (p == NULL)
        return 0;
    for (int field = 2; field < 22; p++) {
        if (*p == '\0')
            return 0;
        if (*p == ' ')
            field++;
    }
    while (*p >= '0' && *p <= '9')
        t = t * 10 + (unsigned long long)(*p++ - '0');
    return t;
}

static void ml_zero_slot(ml_slot *s)
{
    for (int d = 0; d < ML_MAX_DEVICES; d++) {
        atomic_store_explicit(&s->used[d], 0, memory_order_relaxed);
        atomic_store_explicit(&s->managed[d], 0, memory_order_relaxed);
        atomic_store_explicit(&s->peak[d], 0, memory_order_relaxed);
    }
    atomic_store_explicit(&s->host, 0, memory_order_relaxed);
    atomic_store_explicit(&s->denied, 0, memory_order_relaxed);
    atomic_store_explicit(&s->start, 0, memory_order_relaxed);
    atomic_store_explicit(&s->pid, 0, memory_order_release);
}

static void ml_own_slot(ml_budget *b, int i)
{
    ml_slot *s = &b->r->slots[i];
    uint32_t hw;
    char comm[16] = {0};
    FILE *f;
    ml_zero_slot(s);   /* a dead owner's figures go */
    f = fopen("/proc/self/comm", "re");
    if (f) {
        if (fgets(comm, sizeof comm, f))
            comm[strcspn(comm, "\n")] = '\0';
        fclose(f);
    }
    memcpy(s->comm, comm, sizeof s->comm);
    atomic_store_explicit(&s->start, ml_start_time(), memory_order_relaxed);
    atomic_store_explicit(&s->pid, (uint64_t)getpid(), memory_order_release);
    hw = atomic_load(&b->r->hiwater);
    while (hw < (uint32_t)i + 1 && !atomic_compare_exchange_weak(&b->r->hiwater, &hw, (uint32_t)i + 1))
        ;
    b->slot = i;
}

/* The descriptor for lock operations on the region's file, or -1. The program may close every descriptor
   (a daemon's start-up) and open files of its own on the same numbers: our slot stays locked (the mapping
   holds the open file description, which holds the lock), but no lock operation and no close may go to a
   number that is now the program's. So b->fd is checked (device, inode) before each use, and when it is not
   the region's file any more the file is opened again by path for the operations on other slots' locks (a
   second description: it sees our own slot's lock as another's, which is what liveness needs); -1 when it
   cannot be (the caller then treats other slots as alive). 'reopen' 0: check only. */
static int ml_fd(ml_budget *b, int reopen)
{
    struct stat st;
    int fd = atomic_load(&b->fd), nfd, none = -1;
    if (!b->shared)
        return -1;
    if (fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == b->dev && st.st_ino == b->ino)
        return fd;
    if (fd >= 0)   /* the number is the program's now (unless another thread replaced it meanwhile) */
        atomic_compare_exchange_strong(&b->fd, &fd, -1);
    if (!reopen)
        return -1;
    nfd = cushim_open_regular(b->path, (b->readonly ? O_RDONLY : O_RDWR) | O_NOFOLLOW, 0, NULL, 0);
    if (nfd < 0)
        return -1;
    if (fstat(nfd, &st) != 0 || st.st_dev != b->dev || st.st_ino != b->ino) {
        close(nfd);
        return -1;
    }
    if (!atomic_compare_exchange_strong(&b->fd, &none, nfd)) {   /* another thread reopened it first */
        close(nfd);
        return none;
    }
    return nfd;
}

static int ml_claim(ml_budget *b)
{
    if (!b->shared) {
        ml_own_slot(b, 0);
        return 0;
    }
    for (int i = 0; i < ML_BUDGET_SLOTS; i++) {
        /* a free slot, or one whose owner died: its lock byte is free */
        if (ml_lock_op(b->fd, F_OFD_SETLK, F_WRLCK, i) == 0) {
            ml_own_slot(b, i);
            return 0;
        }
    }
    return -1;
}

static int ml_private(ml_budget *b)
{
    void *p = mmap(NULL, sizeof(ml_region), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return -1;
    b->r = p;
    b->shared = 0;
    b->fd = -1;
    b->path[0] = '\0';
    b->r->magic = ML_BUDGET_MAGIC;
    b->r->version = 1;
    b->r->nslots = 1;
    b->r->ndev = ML_MAX_DEVICES;
    return ml_claim(b);
}

/* Is the file exactly a region's size and all zeros - or has another process written our magic meanwhile?
   (A file with a few zero bytes and then other data is another program's, and is never written.) */
static int ml_all_zero(int fd, off_t size)
{
    static const char zero[4096];
    char buf[4096];
    uint64_t head = 0;
    if (size != (off_t)sizeof(ml_region))
        return 0;
    for (off_t off = 0; off < size; off += (off_t)sizeof buf) {
        size_t want = size - off < (off_t)sizeof buf ? (size_t)(size - off) : sizeof buf;
        if (pread(fd, buf, want, off) != (ssize_t)want)
            return 0;
        if (memcmp(buf, zero, want) != 0)
            return pread(fd, &head, sizeof head, 0) == (ssize_t)sizeof head && head == ML_BUDGET_MAGIC;
    }
    return 1;
}

static int ml_map(ml_budget *b, const char *path, int create, long gid, char *err, size_t errlen)
{
    struct stat st;
    uint64_t head = 0;
    uint64_t expect = 0;
    void *p;
    char why[400];
    /* Joining: the file must be this user's (or the named group's) alone to write (cushim_open_shared): whoever
       can write the region can deny its users memory, or truncate it under them. Reading (the usage tool): any
       file we may read, never written, never blocking. */
    int fd = create ? cushim_open_shared(path, 1, gid, why, sizeof why)
                    : cushim_open_regular(path, O_RDONLY | O_NOFOLLOW, 0, why, sizeof why);
    if (fd < 0) {
        snprintf(err, errlen, "budget region: %s", why);
        return -1;
    }
    if (fstat(fd, &st) != 0) {
        snprintf(err, errlen, "budget region '%s': %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    /* Never grow or touch a file that is not ours (e.g. HAMi-core's own cache): empty, or our magic, or all
       zeros of exactly our size (another process sized it and is about to write the magic). */
    if (st.st_size > 0 && (pread(fd, &head, sizeof head, 0) != (ssize_t)sizeof head ||
                           (head != ML_BUDGET_MAGIC && !ml_all_zero(fd, st.st_size)))) {
        snprintf(err, errlen, "'%s' is not a cushim budget region (another program's file?)", path);
        close(fd);
        return -1;
    }
    if (st.st_size < (off_t)sizeof(ml_region) && (!create || cushim_ftruncate(fd, sizeof(ml_region)) != 0)) {
        snprintf(err, errlen, "cannot size budget region '%s': %s", path, create ? strerror(errno) : "too small");
        close(fd);
        return -1;
    }
    p = mmap(NULL, sizeof(ml_region), create ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        snprintf(err, errlen, "cannot map budget region '%s': %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    b->r = p;
    /* a file shrunk under us reads zeros instead of ending the process with SIGBUS (b->lost says so) */
    if (cushim_map_guard(p, sizeof(ml_region), &b->lost) != 0) {
        snprintf(err, errlen, "budget region '%s': cannot guard the mapping against SIGBUS (more than 8 regions?)",
                 path);
        munmap(p, sizeof(ml_region));
        close(fd);
        b->r = NULL;
        return -1;
    }
    /* Whoever comes first writes the magic and the header's constants (read by the usage tool only). */
    if (!create) {
        expect = atomic_load(&b->r->magic);
        if (expect != ML_BUDGET_MAGIC && expect != 0)
            expect = 1;
    } else if (atomic_compare_exchange_strong(&b->r->magic, &expect, ML_BUDGET_MAGIC)) {
        b->r->version = 1;
        b->r->nslots = ML_BUDGET_SLOTS;
        b->r->ndev = ML_MAX_DEVICES;
        expect = ML_BUDGET_MAGIC;
    }
    if (expect != ML_BUDGET_MAGIC && expect != 0) {
        snprintf(err, errlen, "'%s' is not a cushim budget region", path);
        cushim_map_unguard(p);
        munmap(p, sizeof(ml_region));
        close(fd);
        b->r = NULL;
        return -1;
    }
    b->shared = 1;
    b->readonly = !create;
    b->fd = fd;
    b->dev = st.st_dev;
    b->ino = st.st_ino;
    snprintf(b->path, sizeof b->path, "%s", path);
    return 0;
}

int ml_budget_lost(ml_budget *b)
{
    if (b->r == NULL || !b->shared || !__atomic_load_n(&b->lost, __ATOMIC_ACQUIRE))
        return 0;
    /* the mapping is private zeros now: make it a region of this process alone, our slot where it was */
    int fd = ml_fd(b, 0);
    cushim_map_unguard(b->r);
    if (fd >= 0)
        close(fd);
    b->fd = -1;
    b->shared = 0;
    b->r->version = 1;
    b->r->nslots = ML_BUDGET_SLOTS;
    b->r->ndev = ML_MAX_DEVICES;
    atomic_store(&b->r->magic, ML_BUDGET_MAGIC);
    if (b->slot >= 0) {   /* what was charged is in private zeros now: the caller charges its allocations again */
        ml_zero_slot(&b->r->slots[b->slot]);
        atomic_store(&b->r->slots[b->slot].start, ml_start_time());
        atomic_store(&b->r->slots[b->slot].pid, (uint64_t)getpid());
        atomic_store(&b->r->hiwater, (uint32_t)b->slot + 1);
    }
    return 1;
}

int ml_budget_open(ml_budget *b, const char *path, char *err, size_t errlen)
{
    return ml_budget_open_group(b, path, -1, err, errlen);
}

int ml_budget_open_group(ml_budget *b, const char *path, long gid, char *err, size_t errlen)
{
    memset(b, 0, sizeof *b);
    b->fd = -1;
    b->slot = -1;
    b->gid = gid;
    if (path == NULL || *path == '\0')
        return ml_private(b);
    if (ml_map(b, path, 1, gid, err, errlen) != 0)
        return ml_private(b) == 0 ? -1 : -2;
    if (ml_claim(b) != 0) {
        snprintf(err, errlen, "budget region '%s' has no free slot (%d processes)", path, ML_BUDGET_SLOTS);
        ml_budget_close(b);
        return ml_private(b) == 0 ? -1 : -2;
    }
    return 0;
}

int ml_budget_attach(ml_budget *b, const char *path, char *err, size_t errlen)
{
    memset(b, 0, sizeof *b);
    b->fd = -1;
    b->slot = -1;
    b->gid = -1;
    return ml_map(b, path, 0, -1, err, errlen);
}

void ml_budget_close(ml_budget *b)
{
    int fd = ml_fd(b, 0);
    if (b->r && b->slot >= 0 && b->shared && !b->readonly) {
        ml_zero_slot(&b->r->slots[b->slot]);
        if (fd >= 0)
            ml_lock_op(fd, F_OFD_SETLK, F_UNLCK, b->slot);   /* else the unmapping below drops it */
    }
    if (b->r) {
        cushim_map_unguard(b->r);
        munmap(b->r, sizeof(ml_region));
    }
    if (fd >= 0)
        close(fd);
    b->r = NULL;
    b->shared = 0;
    b->fd = -1;
    b->slot = -1;
}

int ml_budget_reopen_child(ml_budget *b)
{
    char err[256];
    char path[256];
    long gid = b->gid;
    if (!b->shared) {
        /* a private mapping is copied with the process: start from zero? No: the
           child inherits the parent's allocations' bookkeeping only in name (CUDA
           is not usable across fork), so it starts clean. */
        ml_zero_slot(&b->r->slots[0]);
        atomic_store(&b->r->slots[0].pid, (uint64_t)getpid());
        return 0;
    }
    snprintf(path, sizeof path, "%s", b->path);
    /* our copy of the parent's descriptor shares its lock: drop our reference only (and only if the number
       is still the region's) */
    cushim_map_unguard(b->r);
    munmap(b->r, sizeof(ml_region));
    if (ml_fd(b, 0) >= 0)
        close(b->fd);
    b->r = NULL;
    b->fd = -1;
    b->slot = -1;
    return ml_budget_open_group(b, path, gid, err, sizeof err);
}

int ml_budget_slot_alive(ml_budget *b, int i)
{
    struct flock fl;
    int fd;
    if (!b->shared)
        return i == b->slot;
    if (i == b->slot)
        return 1;
    if ((fd = ml_fd(b, 1)) < 0)
        return 1;   /* unknown: count it */
    memset(&fl, 0, sizeof fl);
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    fl.l_start = ML_LOCK_BASE + i;
    fl.l_len = 1;
    if (fcntl(fd, F_OFD_GETLK, &fl) != 0)
        return 1;   /* unknown: count it */
    return fl.l_type != F_UNLCK;
}

int ml_budget_reclaim(ml_budget *b)
{
    int n = 0, fd;
    uint32_t hw;
    if (b->readonly || (fd = ml_fd(b, 1)) < 0)
        return 0;
    hw = atomic_load(&b->r->hiwater);
    for (uint32_t i = 0; i < hw && i < ML_BUDGET_SLOTS; i++) {
        ml_slot *s = &b->r->slots[i];
        int busy = atomic_load_explicit(&s->pid, memory_order_acquire) != 0;
        for (int d = 0; !busy && d < ML_MAX_DEVICES; d++)
            busy = atomic_load_explicit(&s->used[d], memory_order_relaxed) != 0;
        if (!busy || (int)i == b->slot)
            continue;
        /* holding the dead owner's lock byte makes us its only writer for a moment */
        if (ml_lock_op(fd, F_OFD_SETLK, F_WRLCK, (int)i) == 0) {
            ml_zero_slot(s);
            ml_lock_op(fd, F_OFD_SETLK, F_UNLCK, (int)i);
            n++;
        }
    }
    return n;
}

uint64_t ml_budget_used(const ml_budget *b, int dev)
{
    uint64_t sum = 0;
    uint32_t hw = atomic_load_explicit(&b->r->hiwater, memory_order_acquire);
    if (dev < 0 || dev >= ML_MAX_DEVICES)
        return 0;
    for (uint32_t i = 0; i < hw && i < ML_BUDGET_SLOTS; i++)
        sum += atomic_load_explicit(&b->r->slots[i].used[dev], memory_order_acquire);
    return sum;
}

int ml_budget_charge(ml_budget *b, int dev, uint64_t n, uint64_t limit)
{
    ml_slot *s;
    uint64_t mine, pk;
    if (dev < 0 || dev >= ML_MAX_DEVICES || b->slot < 0)
        return 0;   /* outside what we track: not limited */
    s = &b->r->slots[b->slot];
    {
        uint32_t dm = atomic_load_explicit(&b->r->devmax, memory_order_relaxed);
        while (dm < (uint32_t)dev + 1 &&
               !atomic_compare_exchange_weak_explicit(&b->r->devmax, &dm, (uint32_t)dev + 1, memory_order_relaxed,
                                                      memory_order_relaxed))
            ;
    }
    if (limit) {
        uint64_t u = ml_budget_used(b, dev);
        if (u > limit || n > limit - u) {
            if (ml_budget_reclaim(b) == 0 || (u = ml_budget_used(b, dev)) > limit || n > limit - u) {
                atomic_fetch_add_explicit(&s->denied, 1, memory_order_relaxed);
                return -1;
            }
        }
    }
#ifdef ML_BUDGET_RACE_WINDOW
    sched_yield();   /* the unit test widens the window between the check and the add */
#endif
    mine = atomic_fetch_add_explicit(&s->used[dev], n, memory_order_acq_rel) + n;
    if (limit && b->shared) {
        /* another process may have charged meanwhile: the sum decides, never both */
        uint64_t u = ml_budget_used(b, dev);
        if (u > limit) {
            ml_budget_credit(b, dev, n);
            atomic_fetch_add_explicit(&s->denied, 1, memory_order_relaxed);
            return -1;
        }
    }
    pk = atomic_load_explicit(&s->peak[dev], memory_order_relaxed);
    while (mine > pk && !atomic_compare_exchange_weak_explicit(&s->peak[dev], &pk, mine, memory_order_relaxed,
                                                               memory_order_relaxed))
        ;
    return 0;
}

void ml_budget_credit(ml_budget *b, int dev, uint64_t n)
{
    ml_slot *s;
    uint64_t cur;
    if (dev < 0 || dev >= ML_MAX_DEVICES || b->slot < 0)
        return;
    s = &b->r->slots[b->slot];
    cur = atomic_load_explicit(&s->used[dev], memory_order_relaxed);
    /* our slot has one writer per field at a time only via atomics: CAS so a
       credit never takes it below zero */
    while (!atomic_compare_exchange_weak_explicit(&s->used[dev], &cur, cur > n ? cur - n : 0, memory_order_acq_rel,
                                                  memory_order_relaxed))
        ;
}

int ml_budget_path(const char *name, char *out, size_t outlen)
{
    if (name == NULL || *name == '\0')
        return -1;
    if (name[0] == '/') {
        if (strlen(name) >= outlen)
            return -1;
        snprintf(out, outlen, "%s", name);
        return 0;
    }
    for (const char *p = name; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_' ||
              *p == '-' || *p == '.'))
            return -1;
    if (name[0] == '.' || (size_t)snprintf(out, outlen, "/dev/shm/cushim-budget-%s", name) >= outlen)
        return -1;
    return 0;
}
