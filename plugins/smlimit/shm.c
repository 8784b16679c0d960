/*
 * shm.c - the smlimit shared region (shm.h): mapping, slot claims, liveness.
 */
#define _GNU_SOURCE
#include "shm.h"

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cushim/cushim_io.h"

static int sml_shm_lost_flag;   /* set by the SIGBUS guard (cushim_map_guard) */

int sml_shm_lost(void)
{
    return __atomic_exchange_n(&sml_shm_lost_flag, 0, __ATOMIC_ACQ_REL);
}

sml_region *sml_shm_open(const char *name, char *err, size_t errlen)
{
    struct stat st;
    sml_region *r;
    char path[128], why[400];
    /* /dev/shm/<name>, as shm_open(3) would make it; this user's alone to write (cushim_open_shared): whoever
       can write the region can take the GPU's turns from its users, or truncate it under them */
    snprintf(path, sizeof path, "/dev/shm%s", name);
    int fd = cushim_open_shared(path, 1, -1, why, sizeof why);
    if (fd < 0) {
        snprintf(err, errlen, "%s", why);
        return NULL;
    }
    if (fstat(fd, &st) != 0 || (st.st_size != 0 && st.st_size != (off_t)sizeof(sml_region))) {
        snprintf(err, errlen, "%s has %lld bytes, not the %zu of this layout (another version?)", name,
                 (long long)st.st_size, sizeof(sml_region));
        close(fd);
        return NULL;
    }
    /* two processes may both extend it: the size is the same, the contents zero */
    if (st.st_size == 0 && cushim_ftruncate(fd, (off_t)sizeof(sml_region)) != 0) {   /* EFBIG, not SIGXFSZ */
        snprintf(err, errlen, "ftruncate(%s): %s", name, strerror(errno));
        close(fd);
        return NULL;
    }
    r = mmap(NULL, sizeof(sml_region), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (r == MAP_FAILED) {
        snprintf(err, errlen, "mmap(%s): %s", name, strerror(errno));
        return NULL;
    }
    /* shrunk under us, it reads zeros instead of ending the process with SIGBUS: no sharing from then on */
    if (cushim_map_guard(r, sizeof(sml_region), &sml_shm_lost_flag) != 0) {
        snprintf(err, errlen, "%s: cannot guard the mapping against SIGBUS", name);
        munmap(r, sizeof(sml_region));
        return NULL;
    }
    uint32_t zero = 0;
    if (!atomic_compare_exchange_strong(&r->magic, &zero, SML_SHM_MAGIC) && zero != SML_SHM_MAGIC) {
        snprintf(err, errlen, "%s has magic %#x, not %#x", name, zero, SML_SHM_MAGIC);
        cushim_map_unguard(r);
        munmap(r, sizeof(sml_region));
        return NULL;
    }
    return r;
}

uint64_t sml_proc_start(int32_t pid)
{
    char path[64], buf[1024];
    unsigned long long ticks = 0;
    ssize_t n;
    const char *p;
    int fd;
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return 0;
    n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    if ((p = strrchr(buf, ')')) == NULL)   /* the command name may hold blanks and ')' */
        return 0;
    for (int field = 2; field < 22; p++) {
        if (*p == '\0')
            return 0;
        if (*p == ' ')
            field++;
    }
    while (*p >= '0' && *p <= '9')
        ticks = ticks * 10 + (unsigned long long)(*p++ - '0');
    return ticks;
}

static int sml_dead(const sml_slot *s, int32_t pid)
{
    uint64_t start;
    if (pid <= 0)
        return 1;
    if (kill(pid, 0) != 0 && errno == ESRCH)
        return 1;
    start = atomic_load(&s->start);
    return start != 0 && sml_proc_start(pid) != start;   /* the pid was reused */
}

int sml_shm_live(const sml_slot *s, uint64_t now)
{
    int32_t pid = atomic_load(&s->pid);
    uint64_t hb = atomic_load(&s->heartbeat);
    return pid > 0 && hb + SML_STALE_NS > now && !sml_dead(s, pid);
}

sml_slot *sml_shm_claim(sml_region *r, int dev, int32_t pid, uint64_t start, uint64_t now)
{
    if (dev < 0 || dev >= SML_SHM_DEVICES)
        return NULL;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < SML_SHM_SLOTS; i++) {
            sml_slot *s = &r->slot[dev][i];
            int32_t old = atomic_load(&s->pid);
            if (old == pid && atomic_load(&s->start) == start)
                return s;   /* ours already (a re-claim) */
            /* first pass: free slots; second: those of dead or silent processes */
            if (pass == 0 ? old != 0 : (old == 0 || sml_shm_live(s, now)))
                continue;
            if (!atomic_compare_exchange_strong(&s->pid, &old, pid))
                continue;
            atomic_store(&s->start, start);
            atomic_store(&s->usage, 0);
            atomic_store(&s->last_end, 0);
            atomic_store(&s->heartbeat, now);
            return s;
        }
    return NULL;
}

/* Our slot's number on device 'dev' (index + 1), 0 when 'dev' is out of range or 'mine' is not one of its slots. */
static uint32_t sml_slot_id(sml_region *r, int dev, const sml_slot *mine)
{
    if (dev < 0 || dev >= SML_SHM_DEVICES)
        return 0;
    ptrdiff_t k = mine - &r->slot[dev][0];
    return k >= 0 && k < SML_SHM_SLOTS ? (uint32_t)k + 1 : 0;
}

uint32_t sml_shm_turn_holder(sml_region *r, int dev)
{
    if (dev < 0 || dev >= SML_SHM_DEVICES)
        return 0;
    uint32_t h = atomic_load(&r->turn[dev]);
    return h <= SML_SHM_SLOTS ? h : 0;   /* nonsense written by someone: nobody's */
}

int sml_shm_turn_take(sml_region *r, int dev, const sml_slot *mine, uint32_t dead)
{
    uint32_t me, cur;
    if ((me = sml_slot_id(r, dev, mine)) == 0)
        return 0;
    cur = atomic_load(&r->turn[dev]);
    if (cur != me && ((cur != 0 && cur <= SML_SHM_SLOTS && cur != dead) ||
                      !atomic_compare_exchange_strong(&r->turn[dev], &cur, me)))
        return 0;
    sml_shm_turn_wait_clear(r, dev, mine);
    if (dead != 0) {   /* a gone process is nobody's next either */
        uint32_t d = dead;
        atomic_compare_exchange_strong(&r->turn_next[dev], &d, 0);
    }
    return 1;
}

void sml_shm_turn_wait_mark(sml_region *r, int dev, const sml_slot *mine)
{
    uint32_t me, none = 0;
    if ((me = sml_slot_id(r, dev, mine)) == 0)
        return;
    atomic_compare_exchange_strong(&r->turn_next[dev], &none, me);
}

void sml_shm_turn_wait_clear(sml_region *r, int dev, const sml_slot *mine)
{
    uint32_t me;
    if ((me = sml_slot_id(r, dev, mine)) == 0)
        return;
    atomic_compare_exchange_strong(&r->turn_next[dev], &me, 0);
}

void sml_shm_turn_give(sml_region *r, int dev, const sml_slot *mine)
{
    uint32_t me, next;
    if ((me = sml_slot_id(r, dev, mine)) == 0)
        return;
    next = atomic_load(&r->turn_next[dev]);
    if (next == me || next > SML_SHM_SLOTS)
        next = 0;
    /* to the waiting process (it clears turn_next when it sees the turn is its own;
       one that is gone by then is passed over by the next process that waits) */
    atomic_compare_exchange_strong(&r->turn[dev], &me, next);
}

int sml_shm_turn_waited_for(sml_region *r, int dev, const sml_slot *mine)
{
    uint32_t me, next;
    if ((me = sml_slot_id(r, dev, mine)) == 0)
        return 0;
    next = atomic_load(&r->turn_next[dev]);
    return next != 0 && next != me && next <= SML_SHM_SLOTS;
}
