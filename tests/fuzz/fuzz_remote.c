/*
 * fuzz_remote.c - libFuzzer harness for the remoting server's decoder (remote/rm_codec.c, docs/remote.md,
 * "Trust model"): whatever bytes a client sends, the back end must not crash, must not read outside the
 * message nor write outside its arena, and must stay within bounded memory.
 *
 * Input: byte 0 picks the mode, bytes 1-2 an API among those the plans carry, the rest is the payload.
 *   mode & 3 == 0: the payload is a CALL body for that API (the harness writes its id and layout hash first,
 *                  so that the fuzzer reaches the parameter decoding instead of guessing 32-bit hashes);
 *   mode & 3 == 1: the payload is a whole CALL payload (id, hash and all, as a client could send);
 *   mode & 3 == 2: the payload is a message: a 16-byte header, then a CALL or a BATCH of CALLs, or what the
 *                  server decodes before a client is authenticated (rm_auth.h): a HELLO (rm_hello_check) or
 *                  the proof of the token (AUTH, rm_auth_verify: accepted exactly when it is the HMAC);
 *   mode & 3 == 3: the payload is a REPLY for that API, decoded by a client whose own buffers are sized
 *                  from the call it sent (a hostile server must not make the client write past them; a value by
 *                  attribute is RM_ATTR_STAGE bytes, its attribute the payload's length mod 24).
 * Shared memory (rm_shm.h): mode 0 with bit 2 set sends the call as an RM_MSG_SHM_CALL, the first 16 body bytes
 * its head (region, reserved word, offset: any region is the one area here); mode 2 takes RM_MSG_SHM_CALL and RM_MSG_SHM messages too. The area is a heap block of FZ_SHM
 * bytes (ASan sees a byte past it); a placed host buffer must lie inside it with its whole count, and every
 * byte of it is read and written as the DMA would. An RM_MSG_SHM maps a sealed memfd of that size (and is
 * refused for an unsealed one).
 * The payload is copied into a heap block of exactly its size (ASan sees a read one past its end). After a
 * call decodes, every pointer it holds must lie inside the arena, and every byte the driver could touch by
 * the metadata's own sizes (arrays by their count parameter, strings to their NUL, images by their content,
 * kernel arguments by their sizes, a host-mode cuBLAS scalar's 16 staged bytes) is read and written here, as the
 * driver would; the reply is encoded too.
 * The arena is 4 MiB: a count past it must be refused, never allocated.
 * Objects by number (rm_num.h): mode 1 with bits 4 and 5 set runs a structured sequence of the calls that name
 * numbered objects (fz_num_ops: NULL, live numbers of any kind, dead numbers, raw objects); besides, every decoded
 * call goes through the back end's map of cuBLAS/cuBLASLt handles
 * and descriptors against a simulated library whose objects are heap blocks holding their kind: whatever numbers a
 * client sends, the library is given only live objects of each parameter's kind (or NULL), and the client gets
 * back only numbers.
 */
#define _GNU_SOURCE
#include "fuzz_common.h"
#include "rm_auth.h"
#include "rm_codec.h"
#include "rm_ltid.h"
#include "rm_num.h"
#include "rm_shm.h"
#include "rm_sock.h"

#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
void rm_meta_generated(rm_meta *m);

static rm_plans *fz_plans;
static const rm_plan **fz_numplans;   /* the APIs that name numbered objects (fz_num_ops) */
static uint32_t fz_nnumplans;
static rm_arena fz_arena;
static const rm_plan **fz_carried;
static uint32_t fz_ncarried;

/* kernel arguments the decoder staged, as the server's check sees them */
static uint32_t fz_kn;
static uint32_t fz_ksizes[RM_MAX_KPARAMS];

static int fz_kcheck(void *user, uint64_t func, uint32_t n, const uint32_t *sizes)
{
    (void)user, (void)func;
    FUZZ_CHECK(n <= RM_MAX_KPARAMS);
    fz_kn = n;
    memcpy(fz_ksizes, sizes, n * sizeof *sizes);
    return func == 0xdeadull ? RM_EMALFORMED : RM_OK;   /* a refused launch takes the error path */
}

#define FZ_SHM (64u << 10)
static uint8_t *fz_shm;          /* the shared area, as the back end sees it */

/* a client's pinned region 1 is the shared area (RM_OP_ADDR, host addresses of RM_OP_ATTR values) */
static int fz_addr_in(void *user, uint32_t region, uint64_t off, uint64_t *addr)
{
    (void)user;
    if (region != 1 || off >= FZ_SHM)
        return RM_EMALFORMED;
    *addr = (uint64_t)(uintptr_t)fz_shm + off;
    return RM_OK;
}

static int fz_addr_out(void *user, uint64_t addr, uint32_t *region, uint64_t *off)
{
    (void)user;
    uint64_t b = (uint64_t)(uintptr_t)fz_shm;
    if (addr < b || addr - b >= FZ_SHM)
        return 0;
    *region = 1;
    *off = addr - b;
    return 1;
}

/* in place from 16 bytes: the decoder's in-place path is reached by inputs of a fuzzer's usual sizes */
static const rm_ctx fz_server_ctx = { .kparam_check = fz_kcheck, .in_place_min = 16, .addr_in = fz_addr_in,
                                      .addr_out = fz_addr_out };
static const uint8_t *fz_msg;   /* the call being decoded: input byte arrays may point into it */
static size_t fz_msglen;

static int fz_memfd = -1, fz_unsealed = -1;

static void fz_init(void)
{
    rm_meta m;
    rm_meta_generated(&m);
    fz_plans = rm_plans_build(&m);
    FUZZ_CHECK(fz_plans != NULL);
    FUZZ_CHECK(rm_arena_init(&fz_arena, 4u << 20) == 0);
    fz_shm = malloc(FZ_SHM);
    void *map;
    fz_memfd = rm_shm_create(FZ_SHM, &map);
    FUZZ_CHECK(fz_shm != NULL && fz_memfd >= 0);
    munmap(map, FZ_SHM);
    fz_unsealed = memfd_create("fuzz-unsealed", MFD_CLOEXEC);
    FUZZ_CHECK(fz_unsealed >= 0 && ftruncate(fz_unsealed, FZ_SHM) == 0);
    fz_carried = calloc(fz_plans->count, sizeof *fz_carried);
    FUZZ_CHECK(fz_carried != NULL);
    for (uint32_t i = 0; i < fz_plans->count; i++) {
        const rm_plan *pl = &fz_plans->all[i];
        if (pl->cls == RM_CLASS_FORWARD || pl->cls == RM_CLASS_FORWARD_NULL || pl->cls == RM_CLASS_HAND)
            fz_carried[fz_ncarried++] = pl;
    }
    fz_numplans = calloc(fz_plans->count, sizeof *fz_numplans);
    FUZZ_CHECK(fz_numplans != NULL);
    for (uint32_t i = 0; i < fz_plans->count; i++) {
        const rm_plan *pl = &fz_plans->all[i];
        int named = pl->num_create != 0 || pl->num_destroy != 0 || pl->num_attr_kind != 0;
        for (uint32_t k = 0; k < pl->nparams; k++)
            named |= pl->p[k].num != 0;
        if (named)
            fz_numplans[fz_nnumplans++] = pl;
    }
}

static int fz_in_arena(const void *p, size_t n)
{
    const uint8_t *b = p;
    return b >= fz_arena.base && b <= fz_arena.base + fz_arena.used && n <= (size_t)(fz_arena.base + fz_arena.used - b);
}

/* Read and write n bytes at p, as the driver may: ASan stops here if the decoder staged fewer. */
static void fz_touch(void *p, size_t n)
{
    volatile uint8_t *b = p;
    FUZZ_CHECK(fz_in_arena(p, n));
    for (size_t i = 0; i < n; i++)
        b[i] = b[i];   /* a write, leaving counts as they were */
}

/* An input-only byte array read in place: inside the message, read only (the driver only reads it). */
static int fz_in_msg(const void *p, size_t n)
{
    const uint8_t *b = p;
    return fz_msg != NULL && b >= fz_msg && b <= fz_msg + fz_msglen && n <= (size_t)(fz_msg + fz_msglen - b);
}

static void fz_read(const void *p, size_t n)
{
    volatile const uint8_t *b = p;
    uint8_t x = 0;
    for (size_t i = 0; i < n; i++)
        x ^= b[i];
    (void)x;
}

static uint64_t fz_int(const void *p, unsigned size)
{
    uint64_t v = 0;
    memcpy(&v, p, size < 8 ? size : 8);
    return v;
}

/* The driver's view of a decoded call: every pointer, sized by the metadata (not by the plan). */
static void fz_check_call(const rm_call *c)
{
    const rm_plan *pl = c->plan;
    const cushim_api_info *a = pl->info;
    const uint8_t *params = c->params;
    FUZZ_CHECK(fz_in_arena(c->params, a->params_size));
    for (uint32_t i = 0; i < pl->nparams; i++) {
        const cushim_param_info *mp = &a->params[i];
        void *ptr;
        if (mp->kind != CUSHIM_KIND_POINTER && mp->kind != CUSHIM_KIND_STRING)
            continue;
        memcpy(&ptr, params + mp->offset, sizeof ptr);
        if (ptr == NULL)
            continue;
        /* an address rm_special.c carries as its value, which the callee looks up and never reads
           (cudaPointerGetAttributes's 'ptr'), as it does a CUdeviceptr */
        const rm_special *hs = rm_special_find(a->name, a->categories);
        if (pl->p[i].op == RM_OP_VALUE && hs != NULL && hs->op == RM_OP_ARRAY && hs->func != NULL &&
            strcmp(hs->func, mp->name) == 0)
            continue;
        switch (pl->p[i].op) {
        case RM_OP_STRING_IN:
            fz_touch(ptr, strlen(ptr) + 1);
            break;
        case RM_OP_STRING_OUT:
        case RM_OP_OWNED_OUT:   /* the slot the callee sets */
            fz_touch(ptr, sizeof(char *));
            break;
        case RM_OP_IMAGE:
            fz_touch(ptr, rm_image_size(ptr, UINT64_MAX));   /* what the driver reads of an image */
            break;
        case RM_OP_KPARAMS: {
            void **args = ptr;
            fz_touch(args, fz_kn * sizeof(void *));
            for (uint32_t k = 0; k < fz_kn; k++)
                fz_touch(args[k], fz_ksizes[k]);
            break;
        }
        case RM_OP_KNODE: {   /* the struct, and its kernelParams as a launch's arguments */
            void **args = NULL;
            uint32_t ko = 0, ks = 0;
            fz_touch(ptr, mp->elem_size);
            FUZZ_CHECK(rm_struct_field_at(mp->struct_type, "kernelParams", &ko, &ks) && ks == 8);
            memcpy(&args, (uint8_t *)ptr + ko, sizeof args);
            if (args != NULL) {
                fz_touch(args, fz_kn * sizeof(void *));
                for (uint32_t k = 0; k < fz_kn; k++)
                    fz_touch(args[k], fz_ksizes[k]);
            }
            break;
        }
        case RM_OP_ARRAY: {
            uint64_t n = 1;
            uint32_t elem = mp->elem_size ? mp->elem_size : 1;
            const rm_rank *rk = rm_rank_find(a->name, mp->name);
            if (rk != NULL) {   /* counted by a rank (cuTensorMapEncode*): none outside the ranks the driver takes */
                for (uint32_t k = 0; k < a->nparams; k++)
                    if (strcmp(a->params[k].name, rk->count) == 0)
                        n = fz_int(params + a->params[k].offset, a->params[k].size);
                n = n < rk->less || n > rk->max ? 0 : n - rk->less;
            } else if (mp->fixed_count) {
                n = mp->fixed_count;
            } else if (mp->count_param >= 0) {
                const cushim_param_info *cp = &a->params[mp->count_param];
                if (mp->count_indirect) {
                    void *q;
                    memcpy(&q, params + cp->offset, sizeof q);
                    n = q ? fz_int(q, cp->elem_size) : 0;
                } else {
                    n = fz_int(params + cp->offset, cp->size);
                }
            }
            FUZZ_CHECK(n == c->cap[i]);
            FUZZ_CHECK(elem == 0 || n <= fz_arena.max / elem);
            if (fz_in_msg(ptr, (size_t)n * elem)) {
                FUZZ_CHECK(mp->dir == CUSHIM_DIR_IN && pl->p[i].elem == 1 && n >= fz_server_ctx.in_place_min);
                fz_read(ptr, (size_t)n);
            } else {
                fz_touch(ptr, (size_t)n * elem);
            }
            break;
        }
        case RM_OP_LCONFIG: {   /* a launch configuration and its attributes, as many as its count says */
            uint32_t ao, no, n;
            const cushim_struct_info *at;
            const uint8_t *attrs;
            FUZZ_CHECK(rm_lconfig_fields(mp->struct_type, &ao, &no, &at));
            fz_touch(ptr, mp->elem_size);
            memcpy(&attrs, (uint8_t *)ptr + ao, sizeof attrs);
            memcpy(&n, (uint8_t *)ptr + no, sizeof n);
            FUZZ_CHECK(n <= RM_MAX_LATTRS && (n == 0) == (attrs == NULL));
            if (n != 0)
                fz_touch((void *)attrs, (size_t)n * at->size);
            break;
        }
        case RM_OP_JITOPTS: {   /* option values: each slot, and each log buffer as many bytes as its size option says */
            void **vals = ptr;
            const int32_t *opts;
            memcpy(&opts, params + pl->p[pl->p[i].func_param].offset, sizeof opts);
            FUZZ_CHECK(c->cap[i] <= RM_MAX_JITOPTS && (c->cap[i] == 0 || opts != NULL));
            fz_touch(vals, (size_t)c->cap[i] * sizeof(void *));
            for (uint64_t k = 0; k < c->cap[i]; k++) {
                const rm_jit_opt *o = rm_jit_opt_of(&pl->p[i], opts[k]);
                int32_t sid;
                FUZZ_CHECK(o != NULL && o->kind != 0);
                if (o->kind != RM_JIT_LOG || vals[k] == NULL)
                    continue;
                FUZZ_CHECK(rm_jit_value_of(&pl->p[i], o->size_opt, &sid));
                for (uint64_t j = 0; j < c->cap[i]; j++)   /* the driver writes up to the size it reads */
                    if (opts[j] == sid) {
                        uint64_t size = (uint64_t)(uintptr_t)vals[j];
                        FUZZ_CHECK(size <= RM_MAX_JIT_LOG);
                        fz_touch(vals[k], (size_t)size);
                    }
            }
            break;
        }
        case RM_OP_ATTR:   /* a value sized by its attribute: staged in RM_ATTR_STAGE bytes whatever it is */
            FUZZ_CHECK(c->cap[i] != 0 && c->cap[i] <= RM_ATTR_STAGE);
            fz_touch(ptr, RM_ATTR_STAGE);
            break;
        case RM_OP_ATTRS: {   /* one pointer per attribute, each NULL or to RM_ATTR_STAGE bytes */
            void **vals = ptr;
            FUZZ_CHECK(c->cap[i] <= RM_MAX_ATTRS);
            fz_touch(vals, (size_t)c->cap[i] * sizeof(void *));
            for (uint64_t k = 0; k < c->cap[i]; k++)
                if (vals[k] != NULL)
                    fz_touch(vals[k], RM_ATTR_STAGE);
            break;
        }
        case RM_OP_SCALAR:   /* cuBLAS's alpha/beta/result: a host value staged whole, or a device address */
            if (c->cap[i] != 0) {
                FUZZ_CHECK(c->cap[i] <= RM_SCALAR_MAX && fz_in_arena(ptr, RM_SCALAR_MAX));
                fz_touch(ptr, RM_SCALAR_MAX);   /* the library reads the size of the type it was told */
            }
            break;
        default:
            FUZZ_CHECK(0);   /* NULL_ONLY and the rest must stay NULL */
        }
    }
}

static void fz_reply(const rm_call *c)
{
    rm_wr w;
    uint8_t ret[64] = {0};
    FUZZ_CHECK(c->plan->info->ret_size <= sizeof ret);
    rm_wr_init(&w, 0);
    FUZZ_CHECK(rm_encode_reply(c, c->plan->id, RM_ST_OK, ret, &w) == RM_OK);   /* outputs, sized as staged */
    FUZZ_CHECK(w.len <= RM_MAX_PAYLOAD);
    if (c->plan->ret_string) {   /* a returned text (ncclGetLastError): sent to its bound, the pointer never */
        static char text[RM_MAX_RET_STRING + 64];
        const char *t = text;
        memset(text, 'e', sizeof text - 1);
        memcpy(ret, &t, sizeof t);
        rm_wr_reset(&w);
        FUZZ_CHECK(rm_encode_reply(c, c->plan->id, RM_ST_OK, ret, &w) == RM_OK);
        FUZZ_CHECK(w.len <= 64 + (size_t)c->plan->info->ret_size + RM_MAX_RET_STRING);
        FUZZ_CHECK(memmem(w.p, w.len, &t, sizeof t) == NULL);
        memset(ret, 0, sizeof ret);
    }
    if (c->plan->ret_status) {   /* a failed call: a JIT's logs still go (outputs 2) */
        ret[0] = 218;
        rm_wr_reset(&w);
        FUZZ_CHECK(rm_encode_reply(c, c->plan->id, RM_ST_OK, ret, &w) == RM_OK);
        FUZZ_CHECK(w.len <= RM_MAX_PAYLOAD);
    }
    rm_wr_free(&w);
}

/* ---- objects by number (rm_num.h), against a simulated library: each object it makes is a heap block holding its
   kind, freed when destroyed, so a destroyed object or one of another kind reaching the library is an ASan report
   or a FUZZ_CHECK ---- */
static rm_numtab fz_num;
typedef struct fz_obj {
    uint64_t magic;
    uint8_t kind;
} fz_obj;
#define FZ_OBJ_MAGIC 0x0b1ec7ull
#define FZ_NUM_LIVE 4096   /* past it the table and the objects are dropped: bounded memory over a long run */

static void fz_num_reset(void)
{
    for (uint32_t i = 0; i < fz_num.n; i++)
        free((void *)(uintptr_t)fz_num.e[i].real);
    rm_num_free(&fz_num);
}

/* What the library sees of an object it is given: one of its own, live, of the parameter's kind - or of the kind
   its row accepts too (a cuBLAS handle as a cuBLASLt handle), never in that kind's Destroy ('ends'). */
static void fz_obj_check(uint64_t real, int kind, int ends)
{
    const fz_obj *o = (const fz_obj *)(uintptr_t)real;
    const rm_numbered *nb = rm_numbered_at(kind);
    int also = nb != NULL && nb->also != NULL && !ends ? rm_numbered_type(nb->also) : 0;
    FUZZ_CHECK(real != 0 && o->magic == FZ_OBJ_MAGIC && (o->kind == kind || (also != 0 && o->kind == also)));
}

/* The call as the library would run it: its objects checked, a Create's made, a Destroy's freed. */
static void fz_num_run(const rm_plan *pl, void *params)
{
    int rc = rm_num_pre(&fz_num, pl, params);
    FUZZ_CHECK(rc == RM_OK || rc == RM_NUM_BAD_HANDLE || rc == RM_EMALFORMED);
    if (rc != RM_OK)
        return;   /* not run */
    for (uint32_t i = 0; i < pl->nparams; i++) {
        uint64_t v;
        if (pl->p[i].num == 0)
            continue;
        memcpy(&v, (uint8_t *)params + pl->p[i].offset, sizeof v);
        if (v != 0)
            fz_obj_check(v, pl->p[i].num, pl->num_destroy == pl->p[i].num);
        if (v != 0 && pl->num_destroy == pl->p[i].num) {
            ((fz_obj *)(uintptr_t)v)->magic = 0;
            free((void *)(uintptr_t)v);
        }
    }
    void *buf = NULL;
    int attr = 0;
    if (pl->num_attr_kind != 0) {   /* the attribute holding an object, 8 bytes: checked, or written by a getter */
        int64_t a = 0;
        uint64_t size;
        memcpy(&a, (uint8_t *)params + pl->p[pl->num_attr_param].offset, pl->p[pl->num_attr_param].size);
        if (pl->p[pl->num_attr_param].size == 4)
            a = (int32_t)a;
        memcpy(&size, (uint8_t *)params + pl->p[pl->num_size_param].offset, sizeof size);
        memcpy(&buf, (uint8_t *)params + pl->p[pl->num_buf_param].offset, sizeof buf);
        attr = a == pl->num_attr_value && buf != NULL;
        FUZZ_CHECK(!attr || size == 8);
    }
    if (attr && !pl->num_attr_out) {
        uint64_t v;
        memcpy(&v, buf, sizeof v);
        if (v != 0)
            fz_obj_check(v, pl->num_attr_kind, 0);
    } else if (attr) {   /* the getter: one of the library's objects of that kind, or none */
        uint64_t v = 0;
        for (uint32_t i = 0; i < fz_num.n; i++)
            if (fz_num.e[i].kind == pl->num_attr_kind)
                v = fz_num.e[i].real;
        memcpy(buf, &v, sizeof v);
    }
    void *out = NULL;
    fz_obj *made = NULL;
    if (pl->num_create != 0) {
        memcpy(&out, (uint8_t *)params + pl->p[0].offset, sizeof out);
        if (out != NULL && (made = malloc(sizeof *made)) != NULL) {
            *made = (fz_obj){ .magic = FZ_OBJ_MAGIC, .kind = pl->num_create };
            uint64_t real = (uint64_t)(uintptr_t)made;
            memcpy(out, &real, sizeof real);
        }
    }
    uint32_t n = fz_num.n;
    rm_num_post(&fz_num, pl, params, 1);
    if (made != NULL) {   /* numbered: the client gets the number, never the object */
        uint64_t id;
        memcpy(&id, out, sizeof id);
        FUZZ_CHECK(rm_ltid_is(id) && fz_num.n == n + 1);
    }
    if (attr && pl->num_attr_out) {
        uint64_t id;
        memcpy(&id, buf, sizeof id);
        FUZZ_CHECK(id == 0 || rm_ltid_is(id));
    }
    if (fz_num.n > FZ_NUM_LIVE)
        fz_num_reset();
}

/* Structured: a sequence of calls of the APIs that name numbered objects, 8 bytes each - the API, then per numbered
   parameter (and an attribute's value) a choice: NULL, a live number of any kind, a number not live (failed,
   destroyed, not given yet), or a live object's own value - so that every kind meets every other. */
static uint64_t fz_num_pick(const uint8_t *b)
{
    switch (b[0] & 3u) {
    case 0:
        return 0;
    case 1:
        return fz_num.n ? fz_num.e[b[1] % fz_num.n].id : rm_ltid(b[1]);
    case 2:
        return rm_ltid(b[1]);
    default:
        return fz_num.n ? fz_num.e[b[1] % fz_num.n].real : 0x1000;
    }
}

static void fz_num_ops(const uint8_t *d, size_t n)
{
    for (size_t at = 0; at + 8 <= n && fz_nnumplans != 0; at += 8) {
        const uint8_t *b = d + at;
        const rm_plan *pl = fz_numplans[(b[0] | (uint32_t)b[1] << 8) % fz_nnumplans];
        uint8_t params[1024] __attribute__((aligned(16)));
        uint64_t out = 0, val = fz_num_pick(b + 6);
        if (pl->info->params_size > sizeof params)
            continue;
        memset(params, 0, sizeof params);
        int k = 0;
        for (uint32_t i = 0; i < pl->nparams; i++)
            if (pl->p[i].num != 0) {
                uint64_t v = fz_num_pick(b + 2 + 2 * (k++ % 2));
                memcpy(params + pl->p[i].offset, &v, sizeof v);
            }
        if (pl->num_create != 0) {
            void *po = &out;
            memcpy(params + pl->p[0].offset, &po, sizeof po);
        }
        if (pl->num_attr_kind != 0) {   /* the attribute: ours or another; its buffer 8 bytes or 4 */
            int64_t attr = (b[5] & 1u) ? pl->num_attr_value : pl->num_attr_value + 1;
            uint64_t size = (b[5] & 2u) ? 4 : 8;
            void *pb = &val;
            memcpy(params + pl->p[pl->num_attr_param].offset, &attr, pl->p[pl->num_attr_param].size);
            memcpy(params + pl->p[pl->num_buf_param].offset, &pb, sizeof pb);
            memcpy(params + pl->p[pl->num_size_param].offset, &size, sizeof size);
        }
        rm_num_message(&fz_num, pl);
        fz_num_run(pl, params);
    }
}

static void fz_one_call(const uint8_t *msg, size_t len)
{
    rm_call c;
    uint32_t status = 0xffff;
    fz_kn = 0;
    fz_msg = msg;
    fz_msglen = len;
    uint32_t id = 0;
    if (len >= 4)
        memcpy(&id, msg, 4);
    rm_num_message(&fz_num, rm_plan_of(fz_plans, id));   /* every message counts, as in the back end */
    int rc = rm_decode_call(fz_plans, msg, len, &fz_arena, &fz_server_ctx, &c, &status);
    FUZZ_CHECK(rc <= 0);
    FUZZ_CHECK((rc == RM_OK) == (status == RM_ST_OK));
    FUZZ_CHECK(status <= RM_ST_NO_FUNCTION);
    FUZZ_CHECK(fz_arena.used <= fz_arena.max);
    if (rc == RM_OK) {
        fz_check_call(&c);
        fz_num_run(c.plan, c.params);
        fz_reply(&c);
    }
    rm_arena_reset(&fz_arena);
}

/* An RM_MSG_SHM_CALL payload: what the back end runs only when its host buffer lies in the area. */
static void fz_one_shm_call(const uint8_t *msg, size_t len)
{
    rm_call c;
    uint32_t status = 0xffff;
    uint64_t off;
    uint32_t region;
    const uint8_t *call;
    size_t clen;
    if (rm_shm_call_split(msg, len, &region, &off, &call, &clen) != RM_OK)
        return;
    FUZZ_CHECK(region < RM_SHM_REGIONS);
    fz_msg = call;
    fz_msglen = clen;
    int rc = rm_decode_call(fz_plans, call, clen, &fz_arena, &fz_server_ctx, &c, &status);
    FUZZ_CHECK((rc == RM_OK) == (status == RM_ST_OK));
    if (rc == RM_OK && rm_shm_place(&c, off, fz_shm, FZ_SHM, region != 0) == RM_OK) {
        const rm_plan *pl = c.plan;
        const rm_pplan *ph = &pl->p[pl->chunk_host], *pc = &pl->p[pl->chunk_count];
        uint8_t *host;
        uint64_t n = 0;
        memcpy(&host, (uint8_t *)c.params + ph->offset, sizeof host);
        memcpy(&n, (uint8_t *)c.params + pc->offset, pc->size < 8 ? pc->size : 8);
        FUZZ_CHECK((pl->nparams == 3 || (region != 0 && pl->nparams == 4)) && host >= fz_shm && n <= FZ_SHM && (size_t)(host - fz_shm) <= FZ_SHM - n);
        for (uint64_t k = 0; k < n; k++)   /* the DMA: every byte, read and written (ASan checks the block) */
            ((volatile uint8_t *)host)[k] = (uint8_t)(((volatile uint8_t *)host)[k] + 1);
        rm_shm_unplace(&c);
        fz_reply(&c);
    }
    rm_arena_reset(&fz_arena);
}

/* An RM_MSG_SHM payload: a region of the sealed memfd mapped, of the unsealed one refused. */
static void fz_shm_msg(const uint8_t *msg, size_t len)
{
    void *map;
    uint64_t size;
    uint32_t region;
    if (rm_shm_msg(msg, len, &size, &region) != RM_OK)
        return;
    FUZZ_CHECK(len == 12 && region < RM_SHM_REGIONS && size <= RM_SHM_MAX);
    if (rm_shm_map(fz_memfd, size, &map) == RM_OK) {
        FUZZ_CHECK(size <= FZ_SHM && size != 0);
        munmap(map, (size_t)size);
    }
    FUZZ_CHECK(rm_shm_map(fz_unsealed, size, &map) != RM_OK);
}

/* The client's copy of a returned text: never more than the bound. */
static const char *fz_ret_text(void *user, const char *s, size_t n)
{
    static char copy[RM_MAX_RET_STRING + 1];
    (void)user;
    FUZZ_CHECK(n <= RM_MAX_RET_STRING);
    memcpy(copy, s, n);
    copy[n] = '\0';
    return copy;
}

/* A hostile server's reply to a call of 'pl' whose client buffers are sized from the call itself. */
static void fz_client_reply(const rm_plan *pl, const uint8_t *msg, size_t len)
{
    uint8_t *params = calloc(1, pl->info->params_size + 1), ret[64];
    void *bufs[RM_MAX_PARAMS] = {0};
    rm_call c;
    uint32_t status;
    FUZZ_CHECK(params != NULL);
    memset(&c, 0, sizeof c);
    c.plan = pl;
    c.params = params;
    for (uint32_t k = 0; k < pl->nptr; k++) {   /* one element behind each output, at most */
        uint32_t i = pl->order[k];
        const rm_pplan *pp = &pl->p[i];
        size_t n = pp->op == RM_OP_ARRAY ? pp->elem :
                   pp->op == RM_OP_STRING_OUT || pp->op == RM_OP_OWNED_OUT ? sizeof(char *) :
                   pp->op == RM_OP_SCALAR ? 8 :   /* a host-mode result of 8 bytes */
                   pp->op == RM_OP_ATTR ? RM_ATTR_STAGE : 0;   /* a value by attribute: at most that */
        if (n == 0 || !(pp->dir & CUSHIM_DIR_OUT))
            continue;
        if (pp->op == RM_OP_ATTR) {   /* the attribute from the reply's length: each of a table's first ones */
            int32_t attr = (int32_t)(len % 24);
            memcpy(params + pl->p[pp->func_param].offset, &attr, sizeof attr);
        }
        bufs[i] = malloc(n);
        FUZZ_CHECK(bufs[i] != NULL);
        memcpy(params + pp->offset, &bufs[i], sizeof(void *));
        c.cap[i] = pp->op == RM_OP_ARRAY ? 1 : pp->op == RM_OP_SCALAR ? 8 : 0;
    }
    const rm_ctx cx = { .ret_text = fz_ret_text };   /* no intern: a string output fails cleanly */
    (void)rm_decode_reply(&c, ret, msg, len, &cx, &status);
    for (uint32_t i = 0; i < RM_MAX_PARAMS; i++)
        free(bufs[i]);
    free(params);
}

/* The bytes through a socket, read as the back end reads a TCP client (rm_in_recv with its receive buffer, the
   payload bound of a call): every message read is the input's next header and payload, byte for byte, and the
   stream ends in an error (the end of the bytes, a bad header, a length over the bound), never a hang. */
static void fz_stream(const uint8_t *msg, size_t len)
{
    int sv[2];
    if (len > 65536)
        return;   /* written whole before it is read: within the socket's buffer */
    FUZZ_CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(sv[1], msg + off, len - off);
        FUZZ_CHECK(w > 0);
        off += (size_t)w;
    }
    close(sv[1]);
    rm_inbuf in = {0};
    rm_hdr h;
    uint8_t *buf = NULL;
    size_t cap = 0, at = 0;
    uint32_t max = len > 64 ? 64 + msg[0] : RM_MAX_PAYLOAD;   /* sometimes a small bound, as the handshake's */
    int rc;
    while ((rc = rm_in_recv(sv[0], &in, &h, &buf, &cap, max)) == RM_OK) {
        FUZZ_CHECK(at + 16 + h.length <= len && h.length <= max);
        FUZZ_CHECK(h.length == 0 || memcmp(buf, msg + at + 16, h.length) == 0);
        at += 16 + h.length;
    }
    FUZZ_CHECK(rc == RM_ECLOSED || rc == RM_EMALFORMED || rc == RM_EBOUNDS);
    FUZZ_CHECK(rc != RM_ECLOSED || len - at < 16 || 16 + (size_t)h.length > len - at);
    close(sv[0]);
    free(buf);
    rm_inbuf_free(&in);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (fz_plans == NULL)
        fz_init();
    if (size < 3)
        return 0;
    unsigned mode = data[0] & 3u;
    const rm_plan *pl = fz_carried[(data[1] | (uint32_t)data[2] << 8) % fz_ncarried];
    size_t body = size - 3;
    size_t len = mode == 0 ? body + 8 : body;
    uint8_t *msg = malloc(len ? len : 1);
    FUZZ_CHECK(msg != NULL);
    if (mode == 0 && (data[0] & 4u) && body >= 16) {   /* an RM_MSG_SHM_CALL: its head, id, hash, the body */
        memcpy(msg, data + 3, 16);
        memcpy(msg + 16, &pl->id, 4);
        memcpy(msg + 20, &pl->hash, 4);
        memcpy(msg + 24, data + 19, body - 16);
        fz_one_shm_call(msg, len);
        free(msg);
        return 0;
    }
    if (mode == 0) {
        memcpy(msg, &pl->id, 4);
        memcpy(msg + 4, &pl->hash, 4);
        memcpy(msg + 8, data + 3, body);
    } else {
        memcpy(msg, data + 3, body);
    }
    switch (mode) {
    case 0:
    case 1:
        if (mode == 1 && (data[0] & 0x30u) == 0x30u)
            fz_num_ops(msg, len);   /* objects by number, structured */
        else
            fz_one_call(msg, len);
        break;
    case 2: {
        rm_hdr h;
        if (data[0] & 8u) {   /* a TCP back end's reader (rm_inbuf): the bytes as a stream of messages */
            fz_stream(msg, len);
            break;
        }
        if (len < sizeof h || rm_hdr_get(msg, &h) != RM_OK || h.length != len - sizeof h)
            break;
        if (h.kind == RM_MSG_HELLO) {
            rm_hello in;
            uint16_t st = rm_hello_check(&h, msg + sizeof h, &in);
            FUZZ_CHECK(st == RM_HELLO_OK || st == RM_HELLO_REFUSED_VERSION || st == RM_HELLO_REFUSED_ABI);
            FUZZ_CHECK(memchr(in.tree, '\0', sizeof in.tree) != NULL);   /* logged as a string */
        } else if (h.kind == RM_MSG_AUTH) {
            static const rm_token tok = { .key = "fuzz-token-0123456789", .len = 21 };
            static const uint8_t nonce[RM_NONCE_BYTES] = { 1, 2, 3 };
            uint8_t mac[RM_MAC_BYTES];
            rm_auth_mac(&tok, nonce, mac);
            int want = h.length == RM_MAC_BYTES && memcmp(mac, msg + sizeof h, RM_MAC_BYTES) == 0;
            FUZZ_CHECK(rm_auth_verify(&tok, nonce, msg + sizeof h, h.length) == want);
        } else if (h.kind == RM_MSG_CALL) {
            fz_one_call(msg + sizeof h, h.length);
        } else if (h.kind == RM_MSG_SHM_CALL) {
            fz_one_shm_call(msg + sizeof h, h.length);
        } else if (h.kind == RM_MSG_SHM) {
            fz_shm_msg(msg + sizeof h, h.length);
        } else if (h.kind == RM_MSG_BATCH) {
            rm_rd r = { .p = msg + sizeof h, .len = h.length };
            uint32_t n;
            const uint8_t *call;
            size_t clen;
            if (rm_rd_u32(&r, &n) != RM_OK || n > RM_MAX_BATCH)
                break;
            for (uint32_t i = 0; i < n && rm_batch_next(&r, &call, &clen) == RM_OK; i++)
                fz_one_call(call, clen);
        }
        break;
    }
    default:
        fz_client_reply(pl, msg, len);
    }
    free(msg);
    return 0;
}
