/*
 * rm_shm.h - the shared-memory area of a client and its back end on one host (docs/remote.md, "Shared memory").
 *
 * Over a unix socket the client creates a memfd (sealed against shrinking and growing), maps it and passes it to
 * its back end with SCM_RIGHTS in an RM_MSG_SHM message; the back end checks it (a regular file of at least the
 * size named, sealed: the client cannot truncate it under the server's mapping and raise SIGBUS there) and maps
 * it. A bulk copy then crosses as RM_MSG_SHM_CALL messages: a region, an offset into it and an ordinary call
 * whose host buffer is absent; the back end points that buffer at the region (rm_shm_place) and the bytes never
 * cross the socket. Region 0 is the client's staging area; the others are the program's pinned host memory
 * (cuMemAllocHost, cudaMallocHost...), each a memfd of its own: a copy from or to it is one DMA (zero copy). The back end reads nothing but bytes to copy from the area: every offset and length comes from
 * the socket's message (received once, into the back end's own buffer), so a client rewriting the area
 * concurrently changes only its own data.
 */
#ifndef RM_SHM_H
#define RM_SHM_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "rm_codec.h"

#define RM_SHM_MAX (64ull << 30)  /* bytes of all of a client's regions together that its back end maps at most */
#define RM_SHM_REGIONS 256u       /* regions a back end holds at once (0: the staging area) */

/* RM_MSG_SHM's answer (u32 payload of the back end's RM_MSG_SHM). */
#define RM_SHM_OK 0u
#define RM_SHM_REFUSED 1u         /* no descriptor, not a sealed regular file of that size, or mmap failed */

/* Client: a sealed memfd of 'size' bytes mapped read/write: *map, and the descriptor (close it once sent).
   -1 and errno when the system has no memfd or no memory. */
int rm_shm_create(size_t size, void **map);
/* RM_MSG_SHM payload (12 bytes): u64 size, u32 region. With a descriptor: map it as that region; size 0 and no
   descriptor: the region is unmapped (the client frees it). */
/* Client: an RM_MSG_SHM message carrying 'memfd' (SCM_RIGHTS), or none when memfd < 0. RM_OK, RM_ECLOSED,
   RM_EIO. */
int rm_shm_send(int sock, uint32_t seq, int memfd, uint64_t size, uint32_t region);
/* Server: the payload read. RM_OK; RM_EMALFORMED (length), RM_EBOUNDS (region or size over the bounds). */
int rm_shm_msg(const uint8_t *msg, size_t len, uint64_t *size, uint32_t *region);
/* Server: maps a descriptor received with RM_MSG_SHM, 'size' bytes. RM_OK and *map; else RM_EBOUNDS (size 0),
   RM_EUNSUPPORTED (not a sealed regular file of at least that size), RM_ENOMEM (mmap). The descriptor stays
   the caller's to close. */
int rm_shm_map(int memfd, uint64_t size, void **map);

/* RM_MSG_SHM_CALL payload: u32 region, u32 0, u64 offset into the region, then a CALL payload (rm_codec.h) of
   a byte copy (rm_plan.chunk_*) whose host buffer is absent. Client: writes the head (the call follows). */
void rm_shm_call_head(rm_wr *w, uint32_t region, uint64_t offset);
/* Server: splits the payload. RM_OK, RM_EMALFORMED (short, the reserved word not 0), RM_EBOUNDS (region). */
int rm_shm_call_split(const uint8_t *msg, size_t len, uint32_t *region, uint64_t *offset, const uint8_t **call,
                      size_t *call_len);
/* Server: a decoded call's host buffer pointed at map + offset, after checking that the plan is a byte copy,
   that the buffer was absent and that [offset, offset + count) lies in the area (the count as decoded, from the
   back end's own copy). 'stream': a copy on a stream may be placed too (pinned regions: the DMA reads or writes
   the program's own pages whenever the stream runs it, as locally; never the staging area, which the client
   reuses as soon as the reply comes). RM_OK, or RM_EMALFORMED / RM_EBOUNDS: the call must not run. */
int rm_shm_place(rm_call *c, uint64_t offset, void *map, size_t size, int stream);
/* Server: the host buffer set back to NULL before the reply is encoded (its bytes are in the area). */
void rm_shm_unplace(rm_call *c);

/* The doorbell: synchronous calls through the staging area's last pages, without the socket (docs/remote.md,
   "Shared memory"). The client writes a CALL payload into 'req', its length and client thread, then 'req_seq'
   (its sequence number, last); when 'srv_sleeping' is set it sends RM_MSG_KICK on the socket. The back end spins
   a bounded while on 'req_seq', then sleeps in poll() on the socket; it copies the request out once (its length
   bounded), runs it as an RM_MSG_CALL, writes the REPLY payload into 'rep' (or sends it on the socket when larger:
   rep_len RM_BELL_ON_SOCKET), then 'rep_seq', and wakes the client's futex on 'rep_seq' when 'cli_sleeping' is set.
   The client spins a bounded while, then waits on the futex with a timeout, polling the socket in between: a dead
   back end is seen within RM_BELL_POLL_MS. The socket also orders the rest: the client rings only when nothing it
   sent on the socket waits for an answer. */
#define RM_BELL_BYTES (32u << 10)   /* a request or reply payload the doorbell carries at most */
#define RM_BELL_ON_SOCKET 0xffffffffu
#define RM_BELL_SPIN_NS 30000u      /* each side spins this long before it sleeps */
#define RM_BELL_POLL_MS 20          /* a sleeping client looks at the socket this often */

typedef struct rm_bell {
    _Atomic uint32_t req_seq;       /* client: the request in 'req' (written last)          */
    _Atomic uint32_t rep_seq;       /* back end: the request answered in 'rep' (written last) */
    _Atomic uint32_t srv_sleeping;  /* the back end sleeps on the socket: kick it there      */
    _Atomic uint32_t cli_sleeping;  /* the client waits on rep_seq's futex: wake it          */
    uint32_t req_len, rep_len;
    uint64_t req_tid;               /* the client thread of the request (RM_MSG_THREAD's number) */
    uint8_t reserved[32];
    uint8_t req[RM_BELL_BYTES];
    uint8_t rep[RM_BELL_BYTES];
} rm_bell;

#define RM_BELL_SPAN ((sizeof(rm_bell) + 4095u) / 4096u * 4096u)   /* bytes at the end of region 0 */

/* The bell at the end of region 0 ('size' bytes at 'map'), NULL when the region is too small for one. */
rm_bell *rm_bell_of(void *map, size_t size);
/* Server: the request copied out of the shared page once, its length bounded: into 'dst' (RM_BELL_BYTES), *len,
   *tid. RM_OK or RM_EBOUNDS. */
int rm_bell_take(rm_bell *b, uint8_t *dst, size_t *len, uint64_t *tid);
/* futex(2) on a word of the shared area (not private: the two processes map it). wait: returns when *w != old,
   on a wake, or after timeout_ms. */
void rm_bell_wake(_Atomic uint32_t *w);
void rm_bell_wait(_Atomic uint32_t *w, uint32_t old, int timeout_ms);
/* A pause inside a spin loop at its i-th turn: the CPU's pause instruction, then sched_yield(). */
void rm_bell_relax(unsigned i);

#endif /* RM_SHM_H */
