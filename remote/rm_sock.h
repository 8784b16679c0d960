/*
 * rm_sock.h - the remoting's transport for the first brick: one stream socket per client, messages framed
 * by rm_wire.h's header (docs/remote.md, "Transport": why plain sockets, and what UCX would change).
 *
 * Addresses: "unix:/path". Sends never raise SIGPIPE (MSG_NOSIGNAL) and retry EINTR and short writes;
 * receives check the header (magic, payload bound) before reading the payload into a growable buffer.
 */
#ifndef RM_SOCK_H
#define RM_SOCK_H

#include <stddef.h>
#include <stdint.h>

#include "rm_wire.h"

#define RM_ECLOSED (-10)      /* the peer closed the connection (a crashed server or client) */
#define RM_EIO (-11)          /* a system call failed: errno says why                       */

/* A listening socket for 'address', created with mode 0600 (the owner only). -1 and a reason in 'err'. */
int rm_listen(const char *address, char *err, size_t errlen);
/* A connected socket, or -1 and a reason. */
int rm_connect(const char *address, char *err, size_t errlen);
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

#endif /* RM_SOCK_H */
