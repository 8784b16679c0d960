/*
 * rm_sock.c - unix stream sockets carrying rm_wire.h messages (rm_sock.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "rm_sock.h"

static int rm_unix_addr(const char *address, struct sockaddr_un *sa, char *err, size_t errlen)
{
    const char *path = strncmp(address, "unix:", 5) == 0 ? address + 5 : NULL;
    memset(sa, 0, sizeof *sa);
    sa->sun_family = AF_UNIX;
    if (path == NULL || path[0] == '\0') {
        snprintf(err, errlen, "'%s' is not an address this build serves (unix:/path; tcp:// is not yet)", address);
        return -1;
    }
    if (strlen(path) >= sizeof sa->sun_path) {
        snprintf(err, errlen, "socket path '%s' is longer than %zu bytes", path, sizeof sa->sun_path - 1);
        return -1;
    }
    strcpy(sa->sun_path, path);
    return 0;
}

int rm_listen(const char *address, char *err, size_t errlen)
{
    struct sockaddr_un sa;
    if (rm_unix_addr(address, &sa, err, errlen) != 0)
        return -1;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errlen, "socket: %s", strerror(errno));
        return -1;
    }
    struct stat st;
    if (lstat(sa.sun_path, &st) == 0 && S_ISSOCK(st.st_mode))
        unlink(sa.sun_path);   /* a socket left by a server that is gone; any other file is kept (bind fails) */
    mode_t old = umask(0177);
    int rc = bind(fd, (struct sockaddr *)&sa, sizeof sa);
    umask(old);
    if (rc != 0 || listen(fd, 64) != 0) {
        snprintf(err, errlen, "cannot listen on %s: %s", sa.sun_path, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

int rm_connect(const char *address, char *err, size_t errlen)
{
    struct sockaddr_un sa;
    if (rm_unix_addr(address, &sa, err, errlen) != 0)
        return -1;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errlen, "socket: %s", strerror(errno));
        return -1;
    }
    while (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        if (errno == EINTR)
            continue;
        snprintf(err, errlen, "cannot connect to %s: %s", sa.sun_path, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

long rm_peer_uid(int fd)
{
    struct ucred cr;
    socklen_t n = sizeof cr;
    return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &n) == 0 ? (long)cr.uid : -1;
}

int rm_send(int fd, uint16_t kind, uint32_t seq, const void *payload, size_t len)
{
    struct iovec part = { (void *)payload, len };
    return rm_sendv(fd, kind, seq, &part, 1);
}

int rm_sendv(int fd, uint16_t kind, uint32_t seq, const struct iovec *parts, int n)
{
    uint8_t hdr[16];
    struct iovec iov[9] = { { hdr, sizeof hdr } };
    size_t len = 0;
    int niov = 1;
    if (n < 0 || n > 8)
        return RM_EBOUNDS;
    for (int i = 0; i < n; i++) {
        if (parts[i].iov_len > RM_MAX_PAYLOAD - len)
            return RM_EBOUNDS;
        len += parts[i].iov_len;
        if (parts[i].iov_len != 0)
            iov[niov++] = parts[i];
    }
    rm_hdr_put(hdr, kind, (uint32_t)len, seq);
    struct iovec *v = iov;
    while (niov > 0) {
        struct msghdr m = { .msg_iov = v, .msg_iovlen = (size_t)niov };
        ssize_t n = sendmsg(fd, &m, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return errno == EPIPE || errno == ECONNRESET ? RM_ECLOSED : RM_EIO;
        }
        while (niov > 0 && (size_t)n >= v->iov_len) {
            n -= (ssize_t)v->iov_len;
            v++;
            niov--;
        }
        if (niov > 0) {
            v->iov_base = (uint8_t *)v->iov_base + n;
            v->iov_len -= (size_t)n;
        }
    }
    return RM_OK;
}

static int rm_read_all(int fd, void *p, size_t n)
{
    uint8_t *b = p;
    while (n > 0) {
        ssize_t r = read(fd, b, n);
        if (r == 0)
            return RM_ECLOSED;
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return errno == ECONNRESET ? RM_ECLOSED : RM_EIO;
        }
        b += r;
        n -= (size_t)r;
    }
    return RM_OK;
}

int rm_recv(int fd, rm_hdr *h, uint8_t **buf, size_t *cap)
{
    uint8_t raw[16];
    int rc = rm_read_all(fd, raw, sizeof raw);
    if (rc != RM_OK)
        return rc;
    if ((rc = rm_hdr_get(raw, h)) != RM_OK)
        return rc;
    if (h->length > *cap) {
        uint8_t *p = realloc(*buf, h->length);
        if (p == NULL)
            return RM_ENOMEM;
        *buf = p;
        *cap = h->length;
    }
    return h->length ? rm_read_all(fd, *buf, h->length) : RM_OK;
}

/* ---- the fast paths' pieces (docs/remote.md, "Bulk copies") ---- */
int rm_send_wr(int fd, uint16_t kind, uint32_t seq, const rm_wr *w)
{
    if (w->ref == NULL)
        return rm_send(fd, kind, seq, w->p, w->len);
    struct iovec parts[3] = { { w->p, w->ref_at }, { (void *)w->ref, w->ref_len },
                              { w->p + w->ref_at, w->len - w->ref_at } };
    return rm_sendv(fd, kind, seq, parts, 3);
}

int rm_read_exact(int fd, void *p, size_t n)
{
    return rm_read_all(fd, p, n);
}

int rm_recv_hdr(int fd, rm_hdr *h)
{
    uint8_t raw[16];
    int rc = rm_read_all(fd, raw, sizeof raw);
    return rc != RM_OK ? rc : rm_hdr_get(raw, h);
}
