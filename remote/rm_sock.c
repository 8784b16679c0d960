/*
 * rm_sock.c - stream sockets carrying rm_wire.h messages (rm_sock.h): unix sockets and TCP.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
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
    const char *path = address + 5;
    memset(sa, 0, sizeof *sa);
    sa->sun_family = AF_UNIX;
    if (path[0] == '\0') {
        snprintf(err, errlen, "'%s' names no socket file: unix:/path", address);
        return -1;
    }
    if (strlen(path) >= sizeof sa->sun_path) {
        snprintf(err, errlen, "socket path '%s' is longer than %zu bytes", path, sizeof sa->sun_path - 1);
        return -1;
    }
    strcpy(sa->sun_path, path);
    return 0;
}

int rm_addr_parse(const char *address, rm_addr *a, char *err, size_t errlen)
{
    memset(a, 0, sizeof *a);
    if (strncmp(address, "unix:", 5) == 0) {
        a->tcp = 0;
        struct sockaddr_un sa;
        if (rm_unix_addr(address, &sa, err, errlen) != 0)
            return -1;
        snprintf(a->host, sizeof a->host, "%s", sa.sun_path);
        return 0;
    }
    if (strncmp(address, "tcp://", 6) != 0) {
        snprintf(err, errlen, "'%s' is not an address: unix:/path, tcp://HOST:PORT or tcp://[IPv6]:PORT", address);
        return -1;
    }
    a->tcp = 1;
    const char *h = address + 6, *end, *port;
    if (h[0] == '[') {   /* [IPv6]:PORT */
        end = strchr(h, ']');
        if (end == NULL || (end[1] != '\0' && end[1] != ':')) {
            snprintf(err, errlen, "'%s': an IPv6 address is written in brackets: tcp://[::1]:%u", address,
                     RM_TCP_PORT);
            return -1;
        }
        h++;
        port = end[1] == ':' ? end + 2 : NULL;
    } else {
        end = strchr(h, ':');
        if (end != NULL && strchr(end + 1, ':') != NULL) {
            snprintf(err, errlen, "'%s': an IPv6 address is written in brackets: tcp://[::1]:%u", address,
                     RM_TCP_PORT);
            return -1;
        }
        if (end == NULL)
            end = h + strlen(h);
        port = *end == ':' ? end + 1 : NULL;
    }
    size_t hn = (size_t)(end - h);
    if (hn >= sizeof a->host || memchr(h, '/', hn) != NULL) {
        snprintf(err, errlen, "'%s': the host is not a name or an address", address);
        return -1;
    }
    memcpy(a->host, h, hn);
    a->host[hn] = '\0';
    if (a->host[0] == '\0')
        strcpy(a->host, "127.0.0.1");   /* loopback unless asked */
    a->port = RM_TCP_PORT;
    if (port != NULL) {
        char *e;
        errno = 0;
        long p = strtol(port, &e, 10);
        if (port[0] < '0' || port[0] > '9' || *e != '\0' || errno != 0 || p < 1 || p > 65535) {
            snprintf(err, errlen, "'%s': the port '%s' is not a number from 1 to 65535", address, port);
            return -1;
        }
        a->port = (uint16_t)p;
    }
    return 0;
}

/* An IPv6 host is written in brackets: "%s%s%s" */
#define RM_BRACKETS(a) strchr((a)->host, ':') ? "[" : "", (a)->host, strchr((a)->host, ':') ? "]" : ""

/* The addresses of a TCP host (a literal or a name), for binding (passive) or connecting. */
static struct addrinfo *rm_resolve(const rm_addr *a, int passive, char *err, size_t errlen)
{
    struct addrinfo hints, *res = NULL;
    char port[8];
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0);
    snprintf(port, sizeof port, "%u", a->port);
    int rc = getaddrinfo(a->host, port, &hints, &res);
    if (rc != 0) {
        snprintf(err, errlen, "cannot resolve '%s': %s", a->host, gai_strerror(rc));
        return NULL;
    }
    return res;
}

/* A TCP connection's option, on both ends: no Nagle (a call is one small message). The socket buffers are left to
   the kernel's autotuning (fixed ones measured no better for bulk copies: docs/remote.md, "TCP: where a round
   trip and a copy go"). */
static void rm_tcp_opts(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static int rm_listen_tcp(const rm_addr *a, char *err, size_t errlen)
{
    struct addrinfo *res = rm_resolve(a, 1, err, errlen);
    int fd = -1, e = 0;
    for (struct addrinfo *ai = res; ai != NULL && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) {
            e = errno;
            continue;
        }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 64) != 0) {
            e = errno;
            close(fd);
            fd = -1;
        }
    }
    if (res != NULL)
        freeaddrinfo(res);
    else
        return -1;
    if (fd < 0)
        snprintf(err, errlen, "cannot listen on tcp://%s%s%s:%u: %s", RM_BRACKETS(a), a->port, strerror(e));
    return fd;
}

/* connect() that gives up after 'seconds' (ETIMEDOUT): a host that drops packets would hold the program's first
   CUDA call for the kernel's SYN retries (two minutes). The socket is blocking again on return. */
static int rm_connect_within(int fd, const struct sockaddr *sa, socklen_t len, int seconds)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0)
        return -1;
    int rc = connect(fd, sa, len);
    if (rc != 0 && (errno == EINPROGRESS || errno == EINTR)) {
        struct pollfd p = { .fd = fd, .events = POLLOUT };
        int n, err = 0;
        socklen_t el = sizeof err;
        while ((n = poll(&p, 1, seconds * 1000)) < 0 && errno == EINTR)
            ;
        if (n == 0)
            errno = ETIMEDOUT;
        else if (n > 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) == 0)
            errno = err;
        rc = n > 0 && err == 0 ? 0 : -1;
    }
    int e = errno;
    if (fcntl(fd, F_SETFL, fl) != 0 && rc == 0)
        return -1;
    errno = e;
    return rc;
}

static int rm_connect_tcp(const rm_addr *a, char *err, size_t errlen)
{
    struct addrinfo *res = rm_resolve(a, 0, err, errlen);
    int fd = -1, e = 0;
    for (struct addrinfo *ai = res; ai != NULL && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) {
            e = errno;
            continue;
        }
        if (rm_connect_within(fd, ai->ai_addr, ai->ai_addrlen, RM_CONNECT_SECONDS) != 0) {
            e = errno;
            close(fd);
            fd = -1;
        }
    }
    if (res != NULL)
        freeaddrinfo(res);
    else
        return -1;
    if (fd < 0) {
        snprintf(err, errlen, "cannot connect to tcp://%s%s%s:%u: %s", RM_BRACKETS(a), a->port, strerror(e));
        return -1;
    }
    rm_tcp_opts(fd);
    return fd;
}

int rm_listen(const char *address, char *err, size_t errlen)
{
    rm_addr a;
    if (rm_addr_parse(address, &a, err, errlen) != 0)
        return -1;
    if (a.tcp)
        return rm_listen_tcp(&a, err, errlen);
    struct sockaddr_un sa;
    rm_unix_addr(address, &sa, err, errlen);
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
    rm_addr a;
    if (rm_addr_parse(address, &a, err, errlen) != 0)
        return -1;
    if (a.tcp)
        return rm_connect_tcp(&a, err, errlen);
    struct sockaddr_un sa;
    rm_unix_addr(address, &sa, err, errlen);
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

int rm_accepted(int fd, char *peer, size_t peerlen)
{
    struct sockaddr_storage ss;
    socklen_t n = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &n) != 0 || ss.ss_family == AF_UNIX) {
        snprintf(peer, peerlen, "a local client");
        return 0;
    }
    rm_tcp_opts(fd);
    n = sizeof ss;
    char host[INET6_ADDRSTRLEN + 2] = "?", port[8] = "?";
    if (getpeername(fd, (struct sockaddr *)&ss, &n) == 0)
        getnameinfo((struct sockaddr *)&ss, n, host, sizeof host, port, sizeof port, NI_NUMERICHOST | NI_NUMERICSERV);
    snprintf(peer, peerlen, ss.ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s", host, port);
    return 1;
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

/* Reads n bytes as rm_read_all does, keeping a descriptor passed with them (SCM_RIGHTS) in *passed (-1: none;
   a second one is closed at once). */
static int rm_read_all_fd(int fd, void *p, size_t n, int *passed)
{
    uint8_t *b = p;
    while (n > 0) {
        union {
            struct cmsghdr h;
            char b[CMSG_SPACE(4 * sizeof(int))];
        } ctl;
        struct iovec v = { b, n };
        struct msghdr m = { .msg_iov = &v, .msg_iovlen = 1, .msg_control = ctl.b, .msg_controllen = sizeof ctl.b };
        ssize_t r = recvmsg(fd, &m, MSG_CMSG_CLOEXEC);
        if (r < 0 && errno == EINTR)
            continue;
        for (struct cmsghdr *c = r > 0 ? CMSG_FIRSTHDR(&m) : NULL; c != NULL; c = CMSG_NXTHDR(&m, c)) {
            if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
                continue;
            size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            for (size_t i = 0; i < k; i++) {
                int got;
                memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof got);
                if (*passed < 0)
                    *passed = got;
                else
                    close(got);
            }
        }
        if (r == 0)
            return RM_ECLOSED;
        if (r < 0)
            return errno == ECONNRESET ? RM_ECLOSED : RM_EIO;
        b += r;
        n -= (size_t)r;
    }
    return RM_OK;
}

int rm_recv_fd(int fd, rm_hdr *h, uint8_t **buf, size_t *cap, int *passed)
{
    uint8_t raw[16];
    *passed = -1;
    int rc = rm_read_all_fd(fd, raw, sizeof raw, passed);
    if (rc == RM_OK)
        rc = rm_hdr_get(raw, h);
    if (rc == RM_OK && h->length > *cap) {
        uint8_t *p = realloc(*buf, h->length);
        if (p == NULL)
            rc = RM_ENOMEM;
        else
            *buf = p, *cap = h->length;
    }
    if (rc == RM_OK && h->length)
        rc = rm_read_all_fd(fd, *buf, h->length, passed);
    if (rc != RM_OK && *passed >= 0) {
        close(*passed);
        *passed = -1;
    }
    return rc;
}

/* Room for a header's payload in *buf (grown to it): RM_EBOUNDS past 'max', checked before anything is allocated
   or read; rm_recv_max and rm_in_recv. */
static int rm_payload_room(const rm_hdr *h, uint8_t **buf, size_t *cap, uint32_t max)
{
    if (h->length > max)
        return RM_EBOUNDS;
    if (h->length > *cap) {
        uint8_t *p = realloc(*buf, h->length);
        if (p == NULL)
            return RM_ENOMEM;
        *buf = p;
        *cap = h->length;
    }
    return RM_OK;
}

int rm_recv(int fd, rm_hdr *h, uint8_t **buf, size_t *cap)
{
    return rm_recv_max(fd, h, buf, cap, RM_MAX_PAYLOAD);
}

int rm_recv_max(int fd, rm_hdr *h, uint8_t **buf, size_t *cap, uint32_t max)
{
    uint8_t raw[16];
    int rc = rm_read_all(fd, raw, sizeof raw);
    if (rc != RM_OK)
        return rc;
    if ((rc = rm_hdr_get(raw, h)) != RM_OK || (rc = rm_payload_room(h, buf, cap, max)) != RM_OK)
        return rc;
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

/* ---- the receive buffer (rm_inbuf): one read() per small message ---- */
int rm_in_read(int fd, rm_inbuf *in, void *p, size_t n)
{
    uint8_t *b = p;
    while (n > 0) {
        if (in->pos < in->end) {   /* read ahead before */
            size_t k = in->end - in->pos < n ? in->end - in->pos : n;
            memcpy(b, in->p + in->pos, k);
            in->pos += k;
            b += k;
            n -= k;
            continue;
        }
        in->pos = in->end = 0;
        if (n >= RM_INBUF_BYTES)   /* a bulk payload: into its destination, nothing read past it */
            return rm_read_all(fd, b, n);
        if (in->p == NULL && (in->p = malloc(RM_INBUF_BYTES)) == NULL)
            return rm_read_all(fd, b, n);   /* no memory for the buffer: unbuffered, still correct */
        ssize_t r = read(fd, in->p, RM_INBUF_BYTES);   /* what the socket holds: this message and what follows */
        if (r == 0)
            return RM_ECLOSED;
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return errno == ECONNRESET ? RM_ECLOSED : RM_EIO;
        }
        in->end = (size_t)r;
    }
    return RM_OK;
}

int rm_in_recv_hdr(int fd, rm_inbuf *in, rm_hdr *h)
{
    uint8_t raw[16];
    int rc = rm_in_read(fd, in, raw, sizeof raw);
    return rc != RM_OK ? rc : rm_hdr_get(raw, h);
}

int rm_in_recv(int fd, rm_inbuf *in, rm_hdr *h, uint8_t **buf, size_t *cap, uint32_t max)
{
    int rc = rm_in_recv_hdr(fd, in, h);
    if (rc != RM_OK || (rc = rm_payload_room(h, buf, cap, max)) != RM_OK)
        return rc;
    return h->length ? rm_in_read(fd, in, *buf, h->length) : RM_OK;
}

void rm_inbuf_reset(rm_inbuf *in)
{
    in->pos = in->end = 0;
}

void rm_inbuf_free(rm_inbuf *in)
{
    free(in->p);
    *in = (rm_inbuf){0};
}

int rm_sock_is_tcp(int fd)
{
    struct sockaddr_storage ss;
    socklen_t n = sizeof ss;
    return getsockname(fd, (struct sockaddr *)&ss, &n) == 0 && (ss.ss_family == AF_INET || ss.ss_family == AF_INET6);
}
