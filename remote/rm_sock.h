/*
 * rm_sock.h - the remoting's transport: one stream socket per client, messages framed by rm_wire.h's header
 * (docs/remote.md, "Transport": why plain sockets, and what UCX would change).
 *
 * Addresses: "unix:/path", "tcp://HOST:PORT", "tcp://[IPv6]:PORT" (HOST a literal or a name; an empty HOST is
 * 127.0.0.1, a missing PORT RM_TCP_PORT). TCP sockets have TCP_NODELAY. Sends never raise SIGPIPE
 * (MSG_NOSIGNAL) and retry EINTR and short writes; receives check the header (magic, payload bound) before
 * reading the payload into a growable buffer.
 */
#ifndef RM_SOCK_H
#define RM_SOCK_H

#include <stddef.h>
#include <stdint.h>

#include "rm_wire.h"

#define RM_ECLOSED (-10)      /* the peer closed the connection (a crashed server or client) */
#define RM_EIO (-11)          /* a system call failed: errno says why                       */

#define RM_TCP_PORT 7480u      /* the default port of tcp:// addresses */
#define RM_CONNECT_SECONDS 10  /* a TCP connection not made by then fails (ETIMEDOUT) */

/* An address taken apart: a unix socket's path, or a TCP host and port. */
typedef struct rm_addr {
    int tcp;
    char host[256];           /* the unix socket's path, or the TCP host as written (no brackets) */
    uint16_t port;
} rm_addr;

/* 0, or -1 and a reason in 'err' ("'x' is not an address: ..."). */
int rm_addr_parse(const char *address, rm_addr *a, char *err, size_t errlen);

/* A listening socket for 'address': a unix socket is created with mode 0600 (the owner only); TCP binds the
   host given (127.0.0.1 when none). -1 and a reason in 'err'. */
int rm_listen(const char *address, char *err, size_t errlen);
/* A connected socket (TCP: within RM_CONNECT_SECONDS, to the first of the host's addresses that answers), or
   -1 and a reason. */
int rm_connect(const char *address, char *err, size_t errlen);
/* An accepted connection: 1 for TCP (TCP_NODELAY set, its peer "host:port" in 'peer'), 0 for a unix socket. */
int rm_accepted(int fd, char *peer, size_t peerlen);
/* The uid of a unix socket's peer (SO_PEERCRED), -1 if unknown. */
long rm_peer_uid(int fd);

/* One message: the header and 'len' payload bytes. RM_OK, RM_ECLOSED, RM_EIO. */
int rm_send(int fd, uint16_t kind, uint32_t seq, const void *payload, size_t len);
/* The same, the payload gathered from n (at most 8) pieces: sent without copying them (zero copy). */
struct iovec;
int rm_sendv(int fd, uint16_t kind, uint32_t seq, const struct iovec *parts, int n);
/* A writer's payload, with the bytes it references (rm_wr_ref) sent from where they lie. */
int rm_send_wr(int fd, uint16_t kind, uint32_t seq, const rm_wr *w);
/* A message in two steps: its header (checked as rm_recv does), then its payload in pieces of the caller's
   choosing (rm_read_exact), e.g. a reply's bulk bytes straight into the program's buffer. */
int rm_recv_hdr(int fd, rm_hdr *h);
int rm_read_exact(int fd, void *p, size_t n);
/* The next message: *h, and its payload in *buf (grown as needed, up to RM_MAX_PAYLOAD).
   RM_OK, RM_ECLOSED, RM_EIO, RM_EMALFORMED (bad magic), RM_EBOUNDS (payload over the bound). */
int rm_recv(int fd, rm_hdr *h, uint8_t **buf, size_t *cap);
/* The same, and a descriptor the peer passed with it (SCM_RIGHTS, close-on-exec) in *passed, -1 when none:
   the back end's loop (RM_MSG_SHM, rm_shm.h), which closes one that came with any other message. */
int rm_recv_fd(int fd, rm_hdr *h, uint8_t **buf, size_t *cap, int *passed);
/* The same, refusing (RM_EBOUNDS) a payload over 'max' bytes before reading it: the server's handshake, where a
   peer not yet authenticated may send a hello or a proof and nothing larger. */
int rm_recv_max(int fd, rm_hdr *h, uint8_t **buf, size_t *cap, uint32_t max);

/* A connection's receive buffer (docs/remote.md, "Where the round trip goes over TCP"): a small message - its
   header and payload - comes in one read() with whatever follows it on the socket, where the functions above
   make two (header, then payload). Bytes read ahead stay in the buffer for the next message; a read of
   RM_INBUF_BYTES or more (a bulk payload) goes straight to its destination once the buffered bytes are used.
   Every read of a buffered connection must then go through the rm_in_* functions. Never used where a descriptor
   may come with a message (rm_recv_fd): it would be read ahead with bytes of another message. */
#define RM_INBUF_BYTES 65536u
typedef struct rm_inbuf {
    uint8_t *p;               /* RM_INBUF_BYTES, allocated at the first read */
    size_t pos, end;          /* the bytes read ahead: [pos, end) */
} rm_inbuf;
/* rm_recv_max, rm_recv_hdr and rm_read_exact through 'in' (the same checks, the same results). */
int rm_in_recv(int fd, rm_inbuf *in, rm_hdr *h, uint8_t **buf, size_t *cap, uint32_t max);
int rm_in_recv_hdr(int fd, rm_inbuf *in, rm_hdr *h);
int rm_in_read(int fd, rm_inbuf *in, void *p, size_t n);
/* The bytes read ahead, dropped (a connection closed or replaced); the buffer kept, or freed. */
void rm_inbuf_reset(rm_inbuf *in);
void rm_inbuf_free(rm_inbuf *in);
/* 1 when 'fd' is a TCP socket (a descriptor can never come with its bytes). */
int rm_sock_is_tcp(int fd);

#endif /* RM_SOCK_H */
