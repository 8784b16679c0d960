/*
 * rm_shm.c - the shared-memory area of a client and its back end (rm_shm.h): the memfd, passing it, mapping it
 * with its checks, and placing a copy's host buffer in it with bounds checked against the mapped size.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "rm_shm.h"
#include "rm_sock.h"

int rm_shm_create(size_t size, void **map)
{
    int fd = memfd_create("cushim-remote", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0)
        return -1;
    if (ftruncate(fd, (off_t)size) != 0 ||
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0 ||
        (*map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

int rm_shm_send(int sock, uint32_t seq, int memfd, uint64_t size, uint32_t region)
{
    uint8_t msg[16 + 12];
    union {
        struct cmsghdr h;
        char b[CMSG_SPACE(sizeof(int))];
    } ctl;
    memset(&ctl, 0, sizeof ctl);
    rm_hdr_put(msg, RM_MSG_SHM, 12, seq);
    memcpy(msg + 16, &size, 8);
    memcpy(msg + 24, &region, 4);
    struct iovec v = { msg, sizeof msg };
    struct msghdr m = { .msg_iov = &v, .msg_iovlen = 1 };
    if (memfd >= 0) {
        m.msg_control = ctl.b;
        m.msg_controllen = sizeof ctl.b;
        struct cmsghdr *c = CMSG_FIRSTHDR(&m);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &memfd, sizeof(int));
    }
    ssize_t n;
    while ((n = sendmsg(sock, &m, MSG_NOSIGNAL)) < 0 && errno == EINTR)
        ;
    if (n < 0)
        return errno == EPIPE || errno == ECONNRESET ? RM_ECLOSED : RM_EIO;
    /* the descriptor went with the first byte; the rest of a short send is plain bytes */
    for (size_t done = (size_t)n; done < sizeof msg; done += (size_t)n)
        while ((n = send(sock, msg + done, sizeof msg - done, MSG_NOSIGNAL)) < 0)
            if (errno != EINTR)
                return errno == EPIPE || errno == ECONNRESET ? RM_ECLOSED : RM_EIO;
    return RM_OK;
}

int rm_shm_msg(const uint8_t *msg, size_t len, uint64_t *size, uint32_t *region)
{
    if (len != 12)
        return RM_EMALFORMED;
    memcpy(size, msg, 8);
    memcpy(region, msg + 8, 4);
    return *region >= RM_SHM_REGIONS || *size > RM_SHM_MAX ? RM_EBOUNDS : RM_OK;
}

int rm_shm_map(int memfd, uint64_t want, void **map)
{
    struct stat st;
    if (want == 0 || want > RM_SHM_MAX)
        return RM_EBOUNDS;
    /* a regular file (a memfd) that can neither shrink nor grow: the mapping stays backed (no SIGBUS) */
    int seals = fcntl(memfd, F_GET_SEALS);
    if (memfd < 0 || fstat(memfd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size < want || seals < 0 ||
        (seals & F_SEAL_SHRINK) == 0)
        return RM_EUNSUPPORTED;
    void *p = mmap(NULL, (size_t)want, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
    if (p == MAP_FAILED)
        return RM_ENOMEM;
    *map = p;
    return RM_OK;
}

void rm_shm_call_head(rm_wr *w, uint32_t region, uint64_t offset)
{
    rm_wr_u32(w, region);
    rm_wr_u32(w, 0);
    rm_wr_u64(w, offset);
}

int rm_shm_call_split(const uint8_t *msg, size_t len, uint32_t *region, uint64_t *offset, const uint8_t **call,
                      size_t *call_len)
{
    uint32_t reserved;
    if (len < 16)
        return RM_EMALFORMED;
    memcpy(region, msg, 4);
    memcpy(&reserved, msg + 4, 4);
    memcpy(offset, msg + 8, 8);
    *call = msg + 16;
    *call_len = len - 16;
    return reserved != 0 ? RM_EMALFORMED : *region >= RM_SHM_REGIONS ? RM_EBOUNDS : RM_OK;
}

/* A byte copy of three parameters (device address, host buffer, count), or four with its stream when 'stream'. */
static int rm_shm_plan_ok(const rm_plan *pl, int stream)
{
    return pl != NULL && pl->chunk_host >= 0 && pl->chunk_dev >= 0 && pl->chunk_count >= 0 &&
           (pl->nparams == 3 || (stream && pl->nparams == 4));
}

int rm_shm_place(rm_call *c, uint64_t offset, void *map, size_t size, int stream)
{
    const rm_plan *pl = c->plan;
    if (!rm_shm_plan_ok(pl, stream))
        return RM_EMALFORMED;
    const rm_pplan *ph = &pl->p[pl->chunk_host], *pc = &pl->p[pl->chunk_count];
    void *host;
    uint64_t count = 0;
    memcpy(&host, (uint8_t *)c->params + ph->offset, sizeof host);
    memcpy(&count, (uint8_t *)c->params + pc->offset, pc->size < 8 ? pc->size : 8);
    if (host != NULL || ph->size != sizeof host)
        return RM_EMALFORMED;   /* the bytes came in the message too: not a shared-memory call */
    if (offset > size || count > size - offset)
        return RM_EBOUNDS;
    host = (uint8_t *)map + offset;
    memcpy((uint8_t *)c->params + ph->offset, &host, sizeof host);
    return RM_OK;
}

void rm_shm_unplace(rm_call *c)
{
    void *none = NULL;
    memcpy((uint8_t *)c->params + c->plan->p[c->plan->chunk_host].offset, &none, sizeof none);
}

/* ---- the doorbell ---- */
rm_bell *rm_bell_of(void *map, size_t size)
{
    return map != NULL && size >= RM_BELL_SPAN ? (rm_bell *)((uint8_t *)map + size - RM_BELL_SPAN) : NULL;
}

int rm_bell_take(rm_bell *b, uint8_t *dst, size_t *len, uint64_t *tid)
{
    volatile uint32_t *pl = &b->req_len;
    uint32_t n = *pl;   /* read once: the client may change it meanwhile */
    if (n > RM_BELL_BYTES)
        return RM_EBOUNDS;
    memcpy(dst, b->req, n);
    memcpy(tid, &b->req_tid, sizeof *tid);
    *len = n;
    return RM_OK;
}

void rm_bell_wake(_Atomic uint32_t *w)
{
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE, 1, NULL, NULL, 0);
}

void rm_bell_wait(_Atomic uint32_t *w, uint32_t old, int timeout_ms)
{
    struct timespec t = { .tv_sec = timeout_ms / 1000, .tv_nsec = (long)(timeout_ms % 1000) * 1000000L };
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT, old, &t, NULL, 0);
}

void rm_bell_relax(unsigned i)
{
    if (i >= 16) {   /* past the first microseconds: let another thread on this CPU run (the peer, on a busy host) */
        sched_yield();
        return;
    }
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}
