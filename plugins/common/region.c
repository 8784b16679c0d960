/*
 * region.c - file-backed regions shared between processes (region.h says what
 * this module owns and why liveness is a lock, not a pid).
 */
#define _GNU_SOURCE
#include "region.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cushim/cushim_io.h"

static int rg_lock_op(int fd, int cmd, short type, uint32_t i)
{
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = type;
    fl.l_whence = SEEK_SET;
    fl.l_start = (off_t)RG_LOCK_BASE + i;
    fl.l_len = 1;
    fl.l_pid = 0;   /* required for OFD locks */
    return fcntl(fd, cmd, &fl);
}

/* The descriptor for lock operations on the region's file, or -1. The program may close every descriptor
   (a daemon's start-up) and open files of its own on the same numbers: our slot stays locked (the mapping
   holds the open file description, which holds the lock), but no lock operation and no close may go to a
   number that is now the program's. So r->fd is checked (device, inode) before each use, and when it is not
   the region's file any more the file is opened again by path for the operations on other slots' locks (a
   second description: it sees our own slots' locks as another's); -1 when it cannot be. 'reopen' 0: check
   only. */
static int rg_fd(rg_region *r, int reopen)
{
    struct stat st;
    int fd = atomic_load(&r->fd), nfd, none = -1;
    if (r->base == NULL || r->detached)
        return -1;
    if (fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == r->dev && st.st_ino == r->ino)
        return fd;
    if (fd >= 0)   /* the number is the program's now (unless another thread replaced it meanwhile) */
        atomic_compare_exchange_strong(&r->fd, &fd, -1);
    if (!reopen)
        return -1;
    nfd = cushim_open_regular(r->path, (r->readonly ? O_RDONLY : O_RDWR) | O_NOFOLLOW, 0, NULL, 0);
    if (nfd < 0)
        return -1;
    if (fstat(nfd, &st) != 0 || st.st_dev != r->dev || st.st_ino != r->ino) {
        close(nfd);
        return -1;
    }
    if (!atomic_compare_exchange_strong(&r->fd, &none, nfd)) {   /* another thread reopened it first */
        close(nfd);
        return none;
    }
    return nfd;
}

/* Is the file all zeros - or has another process written the magic meanwhile? (A file with a few zero bytes
   and then other data is another program's, and is never written.) */
static int rg_all_zero(int fd, off_t size, uint64_t magic, unsigned magic_size)
{
    static const char zero[4096];
    char buf[4096];
    for (off_t off = 0; off < size; off += (off_t)sizeof buf) {
        size_t want = size - off < (off_t)sizeof buf ? (size_t)(size - off) : sizeof buf;
        if (pread(fd, buf, want, off) != (ssize_t)want)
            return 0;
        if (memcmp(buf, zero, want) != 0) {
            uint64_t head = 0;
            return pread(fd, &head, magic_size, 0) == (ssize_t)magic_size && head == magic;
        }
    }
    return 1;
}

int rg_open(rg_region *r, const char *path, size_t size, uint64_t magic, unsigned magic_size, long gid,
            int readonly, char *err, size_t errlen)
{
    struct stat st;
    uint64_t head = 0;
    char why[400];
    void *p;
    int fd;
    memset(r, 0, sizeof *r);
    r->fd = -1;
    r->gid = gid;
    r->readonly = readonly;
    r->size = size;
    r->magic = magic;
    r->magic_size = magic_size == 4 ? 4 : 8;
    if (strlen(path) >= sizeof r->path) {
        snprintf(err, errlen, "region path longer than %zu bytes", sizeof r->path - 1);
        return -1;
    }
    /* Joining: the file must be this user's (or the named group's) alone to write: whoever can write the
       region can deny its users what it holds, or truncate it under them. Reading: any file we may read. */
    fd = readonly ? cushim_open_regular(path, O_RDONLY | O_NOFOLLOW, 0, why, sizeof why)
                  : cushim_open_shared(path, 1, gid, why, sizeof why);
    if (fd < 0) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    if (fstat(fd, &st) != 0) {
        snprintf(err, errlen, "'%s': %s", path, strerror(errno));
        goto fail;
    }
    if (st.st_size != 0 && st.st_size != (off_t)size) {
        snprintf(err, errlen, "'%s' has %lld bytes, not the %zu of this layout (another version's region, or "
                 "another program's file?): not used", path, (long long)st.st_size, size);
        goto fail;
    }
    if (st.st_size != 0 && (pread(fd, &head, r->magic_size, 0) != (ssize_t)r->magic_size ||
                            (head != magic && !rg_all_zero(fd, st.st_size, magic, r->magic_size)))) {
        snprintf(err, errlen, "'%s' is not a region of this layout (it starts with %#llx, not %#llx: another "
                 "version's, or another program's file?): not used", path, (unsigned long long)head,
                 (unsigned long long)magic);
        goto fail;
    }
    if (st.st_size == 0 && (readonly || cushim_ftruncate(fd, (off_t)size) != 0)) {
        snprintf(err, errlen, "cannot size '%s': %s", path, readonly ? "it is empty" : strerror(errno));
        goto fail;
    }
    p = mmap(NULL, size, readonly ? PROT_READ : PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        snprintf(err, errlen, "cannot map '%s': %s", path, strerror(errno));
        goto fail;
    }
    /* a file shrunk under us reads zeros instead of ending the process with SIGBUS (r->lost says so) */
    if (cushim_map_guard(p, size, &r->lost) != 0) {
        snprintf(err, errlen, "'%s': cannot guard the mapping against SIGBUS (more than 8 regions?)", path);
        munmap(p, size);
        goto fail;
    }
    /* whoever comes first writes the magic */
    if (!readonly) {
        int won;
        if (r->magic_size == 4) {
            uint32_t zero = 0;
            won = __atomic_compare_exchange_n((uint32_t *)p, &zero, (uint32_t)magic, 0, __ATOMIC_ACQ_REL,
                                              __ATOMIC_ACQUIRE) || zero == (uint32_t)magic;
        } else {
            uint64_t zero = 0;
            won = __atomic_compare_exchange_n((uint64_t *)p, &zero, magic, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) ||
                  zero == magic;
        }
        if (!won) {
            snprintf(err, errlen, "'%s' was written by another program meanwhile: not used", path);
            cushim_map_unguard(p);
            munmap(p, size);
            goto fail;
        }
    }
    r->base = p;
    r->fd = fd;
    r->dev = st.st_dev;
    r->ino = st.st_ino;
    snprintf(r->path, sizeof r->path, "%s", path);
    return 0;
fail:
    close(fd);
    return -1;
}

void rg_close(rg_region *r)
{
    int fd = rg_fd(r, 0);
    if (r->base != NULL) {
        cushim_map_unguard(r->base);
        munmap(r->base, r->size);
    }
    if (fd >= 0)
        close(fd);
    r->base = NULL;
    r->fd = -1;
}

int rg_reopen_child(rg_region *r, char *err, size_t errlen)
{
    rg_region old = *r;
    if (r->base == NULL)
        return 0;
    /* our copy of the parent's description and mapping share its locks and would keep them alive after the
       parent dies: drop both (the descriptor only if the number is still the region's) */
    rg_close(r);
    if (old.detached) {
        snprintf(err, errlen, "'%s' was truncated in the parent", old.path);
        return -1;
    }
    return rg_open(r, old.path, old.size, old.magic, old.magic_size, old.gid, old.readonly, err, errlen);
}

int rg_lost(rg_region *r)
{
    if (r->base == NULL || r->detached || !__atomic_load_n(&r->lost, __ATOMIC_ACQUIRE))
        return 0;
    int fd = rg_fd(r, 0);
    cushim_map_unguard(r->base);
    if (fd >= 0)
        close(fd);
    r->fd = -1;
    r->detached = 1;
    return 1;
}

int rg_lock_slot(rg_region *r, uint32_t i)
{
    int fd;
    if (r->readonly || (fd = rg_fd(r, 1)) < 0)
        return r->detached ? 0 : -1;   /* detached: the region is ours alone */
    return rg_lock_op(fd, F_OFD_SETLK, F_WRLCK, i) == 0 ? 0 : -1;
}

void rg_unlock_slot(rg_region *r, uint32_t i)
{
    int fd = rg_fd(r, 0);
    if (fd >= 0)
        rg_lock_op(fd, F_OFD_SETLK, F_UNLCK, i);   /* else the unmapping drops it */
}

int rg_slot_held(rg_region *r, uint32_t i)
{
    struct flock fl;
    int fd;
    if (r->detached)
        return 0;
    if ((fd = rg_fd(r, 1)) < 0)
        return 1;   /* unknown: count it */
    memset(&fl, 0, sizeof fl);
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    fl.l_start = (off_t)RG_LOCK_BASE + i;
    fl.l_len = 1;
    if (fcntl(fd, F_OFD_GETLK, &fl) != 0)
        return 1;   /* unknown: count it */
    return fl.l_type != F_UNLCK;
}

uint64_t rg_proc_start(pid_t pid)
{
    char path[64], buf[1024];
    unsigned long long t = 0;
    ssize_t n;
    const char *p;
    int fd;
    if (pid == 0)
        snprintf(path, sizeof path, "/proc/self/stat");
    else
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
        t = t * 10 + (unsigned long long)(*p++ - '0');
    return t;
}

void rg_proc_comm(char out[16])
{
    ssize_t n;
    int fd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
    memset(out, 0, 16);
    if (fd < 0)
        return;
    n = read(fd, out, 15);
    close(fd);
    if (n <= 0) {
        out[0] = '\0';
        return;
    }
    out[n] = '\0';
    out[strcspn(out, "\n")] = '\0';
}
