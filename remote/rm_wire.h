/*
 * rm_wire.h - the remoting's wire format (docs/remote.md, "Wire format"): the
 * message header, the message kinds, the bounds every decoder enforces, and the
 * bounded byte reader and writer the codec is written with.
 *
 * Every message is a 16-byte header followed by 'length' payload bytes. All
 * integers are little-endian; parameter values travel as the bytes of their C
 * type (both ends are LP64 little-endian: the hello says so and a server refuses
 * anything else). A reader never reads past the payload it was given and a
 * writer never grows past RM_MAX_PAYLOAD: every failure is a return code.
 */
#ifndef RM_WIRE_H
#define RM_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the remoting's wire format is little-endian and the codec copies values as they lie in memory"
#endif

#define RM_MAGIC 0x4d524843u       /* the bytes "CHRM" */
#define RM_WIRE_VERSION 7u         /* any change of layout or meaning bumps it (2: token; 3: RM_MSG_THREAD;
                                      4: RM_MSG_SHM, RM_MSG_SHM_CALL, RM_MSG_KICK and the doorbell;
                                      5: cuBLASLt descriptors by number, rm_ltid.h; 6: cuBLAS and cuBLASLt
                                      handles and every cuBLASLt descriptor by number, rm_num.h; 7: a value
                                      read back by attribute goes in with the program's bytes, booleans 4) */

/* Message kinds (rm_hdr.kind). */
#define RM_MSG_HELLO 1u            /* client -> server: rm_hello; server -> client: rm_hello with 'status' */
#define RM_MSG_CALL 2u             /* one call's inputs; answered by one RM_MSG_REPLY                  */
#define RM_MSG_REPLY 3u            /* status, the result, the outputs                                  */
#define RM_MSG_BATCH 4u            /* calls whose outputs nobody waits for; one RM_MSG_BATCH_REPLY     */
#define RM_MSG_BATCH_REPLY 5u      /* how many ran, the first that failed and its result               */
#define RM_MSG_CHALLENGE 6u        /* server -> client, before its hello when it needs a token: a nonce */
#define RM_MSG_AUTH 7u             /* client -> server: HMAC-SHA256 of the nonce with the token (rm_auth.h) */
#define RM_MSG_THREAD 8u           /* u64: the client thread the next calls and batches come from; no reply */
#define RM_MSG_SHM 9u              /* client -> server: u64 size and a memfd (SCM_RIGHTS); answered by an
                                      RM_MSG_SHM of u32 RM_SHM_OK or RM_SHM_REFUSED (rm_shm.h)            */
#define RM_MSG_SHM_CALL 10u        /* a byte copy whose host bytes are in the shared area: u64 offset, then
                                      a CALL payload with the host buffer absent; one RM_MSG_REPLY          */
#define RM_MSG_KICK 11u            /* client -> server, no payload, no reply: a doorbell request waits while
                                      the back end sleeps on the socket (rm_shm.h, rm_bell)              */

/* Bounds. A decoder refuses more; an encoder refuses to produce more. */
#define RM_MAX_PAYLOAD (64u << 20)  /* bytes of one message's payload                                  */
#define RM_MAX_ARENA (128u << 20)   /* bytes a server may stage for one call (inputs + outputs)         */
#define RM_MAX_STRING (1u << 20)    /* bytes of one string parameter                                    */
#define RM_MAX_RET_STRING 4096u     /* bytes of a returned text (rm_plan.ret_string; NCCL's is 1023 at most) */
#define RM_MAX_BATCH 4096u          /* calls in one batch                                               */
#define RM_MAX_KPARAMS 1024u        /* kernel parameters of one launch                                  */
#define RM_MAX_KPARAM_BYTES 32764u  /* bytes of one kernel parameter (the driver's own limit)           */
#define RM_IMAGE_PAD 64u            /* zero bytes staged after a module image: a driver that looks for an
                                       ELF or fatbin header at its start stays in the arena (fuzz_remote)  */

typedef struct rm_hdr {
    uint32_t magic;                /* RM_MAGIC                                                          */
    uint16_t version;              /* RM_WIRE_VERSION                                                   */
    uint16_t kind;                 /* RM_MSG_*                                                          */
    uint32_t length;               /* payload bytes after the header, <= RM_MAX_PAYLOAD                 */
    uint32_t seq;                  /* the client's number; a reply repeats it                           */
} rm_hdr;
_Static_assert(sizeof(rm_hdr) == 16, "rm_hdr is 16 bytes on the wire");

/* The hello, both ways: names the wire version (header), the generated tree and the ABI. */
#define RM_TREE_NAME_LEN 48
typedef struct rm_hello {
    uint32_t cuda_version;         /* CUDA_VERSION of the generated tree (13000)                        */
    uint32_t api_id_limit;         /* one past the largest API id                                       */
    uint64_t tree_hash;            /* rm_plans_tree_hash: every plan's layout hash folded               */
    uint16_t ptr_bytes;            /* sizeof(void *): 8                                                 */
    uint16_t status;               /* server's answer: RM_HELLO_*; 0 from a client                      */
    uint32_t pid;                  /* the sender's process id (logs)                                    */
    char tree[RM_TREE_NAME_LEN];   /* "cushim 0.1.0, CUDA 13.0 headers, SDK ABI 1.1", NUL-padded        */
} rm_hello;
_Static_assert(sizeof(rm_hello) == 72, "rm_hello is 72 bytes on the wire");

#define RM_HELLO_OK 0u
#define RM_HELLO_REFUSED_VERSION 1u  /* another wire version                                           */
#define RM_HELLO_REFUSED_ABI 2u      /* another pointer size                                           */
#define RM_HELLO_REFUSED_AUTH 3u     /* the proof of the token was wrong (or missing)                  */
#define RM_HELLO_REFUSED_BUSY 4u     /* the server serves its --max-clients already (sent by the listener) */

/* Reply status (RM_MSG_REPLY): whether the call ran. */
#define RM_ST_OK 0u                /* the function ran; the result and outputs follow                  */
#define RM_ST_UNKNOWN_API 1u       /* the server's tree has no such API id                             */
#define RM_ST_LAYOUT 2u            /* the API's layout hash differs: the trees disagree about it       */
#define RM_ST_MALFORMED 3u         /* the message broke the format or its bounds                       */
#define RM_ST_TOO_LARGE 4u         /* the call needs more staging memory than RM_MAX_ARENA             */
#define RM_ST_REFUSED 5u           /* the server does not forward this API (its class)                 */
#define RM_ST_NO_FUNCTION 6u       /* the server's driver lacks the function                           */

/* Codec return codes (negative; 0 is success). */
#define RM_OK 0
#define RM_EMALFORMED (-1)         /* truncated, trailing bytes, a bad tag                             */
#define RM_EBOUNDS (-2)            /* a count, length or size over its bound                           */
#define RM_ENOMEM (-3)
#define RM_EUNSUPPORTED (-4)       /* the call cannot be carried (a non-NULL opaque pointer...)        */
#define RM_ELAYOUT (-5)            /* API id or layout hash unknown to this side                       */

/* A bounded reader over one payload. */
typedef struct rm_rd {
    const uint8_t *p;
    size_t len, pos;
} rm_rd;

static inline int rm_rd_bytes(rm_rd *r, void *dst, size_t n)
{
    if (n > r->len - r->pos)
        return RM_EMALFORMED;
    if (n != 0)
        memcpy(dst, r->p + r->pos, n);
    r->pos += n;
    return RM_OK;
}

/* Points at the next n bytes (no copy) and skips them; NULL if fewer remain. */
static inline const uint8_t *rm_rd_take(rm_rd *r, size_t n)
{
    if (n > r->len - r->pos)
        return NULL;
    const uint8_t *s = r->p + r->pos;
    r->pos += n;
    return s;
}

int rm_rd_u8(rm_rd *r, uint8_t *v);
int rm_rd_u32(rm_rd *r, uint32_t *v);
int rm_rd_u64(rm_rd *r, uint64_t *v);

/* A growable writer, never past 'max' bytes (RM_MAX_PAYLOAD when 0). */
typedef struct rm_wr {
    uint8_t *p;
    size_t len, cap, max;
    int err;                       /* sticky: the first failure (RM_EBOUNDS, RM_ENOMEM)                */
    /* zero copy (rm_wr_ref): one large input left in the caller's memory, sent from there by a writer
       whose owner sends the payload as p[0..ref_at), ref, p[ref_at..len) (rm_wr_payload_len bytes) */
    int allow_ref;                 /* set by the owner: it sends with iovecs and keeps 'ref' alive      */
    const void *ref;
    size_t ref_at, ref_len;
} rm_wr;

#define RM_REF_MIN (64u << 10)     /* inputs this large are sent from the caller's memory (allow_ref)   */

void rm_wr_init(rm_wr *w, size_t max);
void rm_wr_free(rm_wr *w);
void rm_wr_reset(rm_wr *w);
uint8_t *rm_wr_room(rm_wr *w, size_t n);   /* n more bytes at the end (uninitialised), NULL on error */
void rm_wr_bytes(rm_wr *w, const void *src, size_t n);
void rm_wr_u8(rm_wr *w, uint8_t v);
void rm_wr_u32(rm_wr *w, uint32_t v);
void rm_wr_u64(rm_wr *w, uint64_t v);
/* n bytes at src: referenced (not copied) when the writer allows it, n >= RM_REF_MIN and no other
   reference is held; else copied as rm_wr_bytes. */
void rm_wr_ref(rm_wr *w, const void *src, size_t n);
static inline size_t rm_wr_payload_len(const rm_wr *w)
{
    return w->len + w->ref_len;
}

/* Header: written into 16 bytes / checked from 16 bytes (magic, version, length bound). */
void rm_hdr_put(uint8_t out[16], uint16_t kind, uint32_t length, uint32_t seq);
int rm_hdr_get(const uint8_t in[16], rm_hdr *h);

#endif /* RM_WIRE_H */
