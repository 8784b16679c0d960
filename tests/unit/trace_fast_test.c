/*
 * trace_fast_test.c - the trace plugin's recording fast path (tr_plan.h,
 * tr_plan_fast in tr_plan.c) against the general path it replaces: a scalar
 * output capture writes the blob tr_cap_size + tr_cap_write write, byte for
 * byte, and its inline form (an EXIT's only output, TR_F_INLINE) is that
 * blob's word with the flags naming the parameter and size; the params copy
 * equals memcpy plus zero padding for every size; the in-place ENTER/EXIT
 * headers equal the zeroed struct filled field by field;
 * a plan's fast-path flags follow its captures (and which APIs get one CALL
 * record per call: trace_call tests those records); the chunk and thread
 * buffer layouts keep the producer's and the writer's fields on separate
 * cache lines; and the safe read of inputs after a failed call
 * (tr_cap_write_safe, through cushim_read_mem: sdk_io tests the read itself)
 * gives the plain capture's bytes where memory is readable and only the
 * readable prefix, without a fault, where it is not.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tr_plan.h"
#include <cushim/cushim_io.h>

/* tr_plan.c's other functions read the host; these tests call only tr_plan_fast. */
const cushim_host *tr_host;
tr_state *tr_st;

static tr_cap scalar_cap(uint16_t param, uint16_t off, uint32_t elem, uint32_t fixed)
{
    tr_cap c;
    memset(&c, 0, sizeof c);
    c.param = param;
    c.mode = TR_CAP_ARRAY;
    c.count_param = -1;
    c.off = off;
    c.size = sizeof(void *);
    c.elem_size = elem;
    c.fixed = fixed;
    return c;
}

/* The blob of a one-element output: the fast writer and the general one agree on every byte and length. */
static void scalar_blob_equals_general(void **state)
{
    static const uint32_t elems[] = {1, 2, 4, 8};
    unsigned char value[8] = {0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88};
    (void)state;
    for (unsigned e = 0; e < 4; e++)
        for (uint32_t fixed = 0; fixed <= 1; fixed++)
            for (int null = 0; null <= 1; null++) {
                void *params[3] = {(void *)0x1234, null ? NULL : (void *)value, (void *)0x5678};
                tr_cap c = scalar_cap(5, sizeof(void *), elems[e], fixed);
                unsigned char a[64], b[64];
                uint32_t size;
                uint64_t count;
                int trunc, has;
                unsigned char *ea = a, *eb;
                memset(a, 0xAA, sizeof a);
                memset(b, 0xAA, sizeof b);
                has = tr_cap_size(&c, (const unsigned char *)params, &size, &count, &trunc);
                if (has)
                    ea = tr_cap_write(&c, (const unsigned char *)params, a, size, count, trunc);
                eb = tr_cap_scalar(&c, (const unsigned char *)params, b);
                assert_int_equal(has, !null);
                assert_int_equal(ea - a, eb - b);
                assert_int_equal(eb - b, null ? 0 : (int)(sizeof(tr_blob) + 8));
                assert_memory_equal(a, b, sizeof a);
            }
}

/* The inline output: the blob's 8 data bytes, nothing else; the flags name the parameter and the size (the
   renderer's tr_exit_blob rebuilds the blob from them: trace_render's inline_output_renders_as_blob). */
static void inline_word_equals_blob_data(void **state)
{
    static const uint32_t elems[] = {1, 2, 4, 8};
    unsigned char value[8] = {0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88};
    (void)state;
    for (unsigned e = 0; e < 4; e++)
        for (int null = 0; null <= 1; null++) {
            void *params[3] = {(void *)0x1234, null ? NULL : (void *)value, (void *)0x5678};
            tr_cap c = scalar_cap(200, sizeof(void *), elems[e], 0);
            tr_plan *pl = calloc(1, sizeof *pl + sizeof c);
            unsigned char a[64], b[64], *ea, *eb;
            uint16_t flags = TR_F_SKIPPED;
            cushim_api_info info;
            tr_blob bl;
            assert_non_null(pl);
            memset(&info, 0, sizeof info);
            info.ret_size = 4;
            info.ret_kind = CUSHIM_RET_CURESULT;
            pl->nout = 1;
            pl->caps[0] = c;
            tr_plan_fast(pl, &info, 1);
            assert_true(pl->out_inline);
            assert_true(pl->post_fast);
            assert_int_equal(pl->caps[0].inl, TR_F_INLINE | (e << 4) | (200u << 8));
            memset(a, 0xAA, sizeof a);
            memset(b, 0xAA, sizeof b);
            ea = tr_cap_scalar(&pl->caps[0], (const unsigned char *)params, a);
            eb = tr_cap_inline(&pl->caps[0], (const unsigned char *)params, b, &flags);
            assert_int_equal(eb - b, null ? 0 : 8);
            assert_int_equal(flags, null ? TR_F_SKIPPED : (TR_F_SKIPPED | pl->caps[0].inl));
            for (unsigned i = (unsigned)(eb - b); i < sizeof b; i++)
                assert_int_equal(b[i], 0xAA);
            if (!null) {
                assert_int_equal(ea - a, sizeof(tr_blob) + 8);
                memcpy(&bl, a, sizeof bl);
                assert_int_equal(bl.param, 200);
                assert_int_equal(bl.len, 1u << ((flags >> 4) & 3u));
                assert_int_equal(bl.count, 1);
                assert_int_equal(bl.flags, 0);
                assert_memory_equal(a + sizeof(tr_blob), b, 8);
            }
            free(pl);
        }
}

/* Params structs of every size up to 130 bytes: the bytes, zero padding to 8, nothing written beyond. */
static void params_copy_equals_memcpy(void **state)
{
    unsigned char src[136], dst[160];
    (void)state;
    for (unsigned i = 0; i < sizeof src; i++)
        src[i] = (unsigned char)(i * 7 + 3);
    for (uint32_t n = 0; n <= 130; n++) {
        memset(dst, 0xAA, sizeof dst);
        tr_copy_params(dst, src, n);
        assert_memory_equal(dst, src, n);
        for (uint32_t i = n; i < tr_pad8(n); i++)
            assert_int_equal(dst[i], 0);
        for (uint32_t i = tr_pad8(n); i < sizeof dst; i++)
            assert_int_equal(dst[i], 0xAA);
    }
}

static void scalar_word_keeps_first_bytes(void **state)
{
    unsigned char v[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    (void)state;
    for (uint32_t n = 1; n <= 8; n *= 2) {
        uint64_t w = tr_scalar_word(v, n);
        unsigned char out[8];
        memcpy(out, &w, 8);
        assert_memory_equal(out, v, n);
        for (uint32_t i = n; i < 8; i++)
            assert_int_equal(out[i], 0);
    }
}

/* The headers written in place over stale bytes equal the zeroed struct with its fields set. */
static void headers_written_whole(void **state)
{
    cushim_call parent, call;
    unsigned char buf[sizeof(tr_rec)];
    tr_rec want;
    tr_exit wantx;
    (void)state;
    memset(&parent, 0, sizeof parent);
    memset(&call, 0, sizeof call);
    parent.seq = 77;
    call.api_id = 1234;
    call.depth = 1;
    call.seq = 78;
    call.parent = &parent;

    memset(buf, 0xAA, sizeof buf);
    tr_put_enter(buf, &call, 200, 5555, 0xabcdef);
    memset(&want, 0, sizeof want);
    want.len = 200;
    want.type = TR_REC_ENTER;
    want.api_id = 1234;
    want.depth = 1;
    want.seq = 78;
    want.parent = 77;
    want.t = 5555;
    want.aux = 0xabcdef;
    assert_memory_equal(buf, &want, sizeof want);

    call.parent = NULL;
    memset(buf, 0xAA, sizeof buf);
    tr_put_enter(buf, &call, 200, 5555, 0);
    want.parent = 0;
    want.aux = 0;
    assert_memory_equal(buf, &want, sizeof want);

    /* EXIT: the compact header, and not a byte past it */
    call.parent = &parent;
    memset(buf, 0xAA, sizeof buf);
    tr_put_exit(buf, &call, 72, TR_F_SKIPPED, 6666, 2);
    memset(&wantx, 0, sizeof wantx);
    wantx.len = 72;
    wantx.type = TR_REC_EXIT;
    wantx.flags = TR_F_SKIPPED;
    wantx.seq = 78;
    wantx.t = 6666;
    wantx.aux = 2;
    assert_memory_equal(buf, &wantx, sizeof wantx);
    for (size_t i = sizeof wantx; i < sizeof buf; i++)
        assert_int_equal(buf[i], 0xAA);
}

static tr_plan *plan_with(uint16_t nin, uint16_t nout, const tr_cap *caps)
{
    tr_plan *pl = calloc(1, sizeof *pl + (size_t)(nin + nout) * sizeof(tr_cap));
    assert_non_null(pl);
    pl->nin = nin;
    pl->nout = nout;
    if (nin + nout > 0)
        memcpy(pl->caps, caps, (size_t)(nin + nout) * sizeof(tr_cap));
    return pl;
}

/* Which APIs take the fast paths, and the sizes the fast paths reserve. */
static void plan_flags(void **state)
{
    cushim_api_info info;
    tr_cap one = scalar_cap(0, 0, 8, 0), two = scalar_cap(1, 8, 4, 1), arr = scalar_cap(1, 8, 8, 0);
    tr_cap caps[2];
    tr_plan *pl;
    (void)state;
    arr.count_param = 0;   /* a counted array: not a scalar */
    memset(&info, 0, sizeof info);
    info.params_size = 12;
    info.ret_size = 4;
    info.ret_kind = CUSHIM_RET_CURESULT;

    /* cuCtxGetCurrent's shape: one scalar output */
    pl = plan_with(0, 1, &one);
    tr_plan_fast(pl, &info, 1);
    assert_int_equal(pl->enter_len, sizeof(tr_rec) + 16);
    assert_int_equal(pl->exit_max, sizeof(tr_exit) + 8);   /* inline: no blob header */
    assert_true(pl->pre_fast);
    assert_true(pl->post_fast);
    assert_true(pl->ret_result);
    assert_true(pl->caps[0].scalar);
    assert_true(pl->out_inline);
    assert_int_equal(pl->caps[0].inl, TR_F_INLINE_OF(0, 3));
    assert_true(pl->call);   /* one CALL record at exit: header, params, the word, room for a long exit time */
    assert_int_equal(pl->call_max, sizeof(tr_call) + 16 + 8 + 8);
    free(pl);

    /* the one scalar output of a parameter past 255: no inline form, so the general exit with its blob */
    caps[0] = one;
    caps[0].param = 300;
    pl = plan_with(0, 1, caps);
    tr_plan_fast(pl, &info, 1);
    assert_true(pl->caps[0].scalar);
    assert_int_equal(pl->caps[0].inl, 0);
    assert_false(pl->out_inline);
    assert_false(pl->post_fast);
    assert_false(pl->call);
    free(pl);

    /* two scalar outputs: the general exit (its loop), still without array capture */
    caps[0] = one;
    caps[1] = two;
    pl = plan_with(0, 2, caps);
    tr_plan_fast(pl, &info, 1);
    assert_true(pl->outs_scalar);
    assert_false(pl->out_inline);
    assert_int_equal(pl->exit_max, sizeof(tr_exit) + 2 * (sizeof(tr_blob) + 8));
    assert_false(pl->post_fast);
    free(pl);

    /* an array output; an input capture */
    caps[0] = arr;
    pl = plan_with(0, 1, caps);
    tr_plan_fast(pl, &info, 1);
    assert_false(pl->caps[0].scalar);
    assert_false(pl->outs_scalar);
    assert_false(pl->post_fast);
    free(pl);
    pl = plan_with(1, 0, &one);
    tr_plan_fast(pl, &info, 1);
    assert_true(pl->pre_fast);     /* an input capture: read at exit (after the driver), */
    assert_false(pl->post_fast);   /* by the general exit, */
    assert_false(pl->call);        /* so the ENTER and EXIT records */
    free(pl);

    /* a launch asks its kernel's name at entry when kernel names are on: one CALL record with the name (its
       word before the long exit time's); a correlation id (GPU tracing) turns the CALL record off */
    pl = plan_with(0, 0, NULL);
    pl->launch = TR_LAUNCH_FUNC;
    tr_plan_fast(pl, &info, 1);
    assert_false(pl->pre_fast);
    assert_int_equal(pl->call, TR_CALL_KNAME);
    assert_false(pl->post_only);
    assert_int_equal(pl->call_max, sizeof(tr_call) + 16 + 8 + 8);
    tr_plan_fast(pl, &info, 0);
    assert_true(pl->pre_fast);
    assert_int_equal(pl->call, TR_CALL_PLAIN);
    assert_int_equal(pl->call_max, sizeof(tr_call) + 16 + 8);   /* no output: no word */
    pl->corr = 1;
    tr_plan_fast(pl, &info, 0);
    assert_false(pl->pre_fast);
    assert_false(pl->post_fast);
    assert_false(pl->call);
    tr_plan_fast(pl, &info, 1);
    assert_false(pl->call);
    free(pl);
    /* a launch with an input capture: its ENTER holds the name */
    pl = plan_with(1, 0, &one);
    pl->launch = TR_LAUNCH_FUNC;
    tr_plan_fast(pl, &info, 1);
    assert_false(pl->call);
    free(pl);

    /* a return value other than 4 bytes, and a status that is no CUDA result */
    info.ret_size = 8;
    info.ret_kind = CUSHIM_RET_OTHER;
    pl = plan_with(0, 0, NULL);
    tr_plan_fast(pl, &info, 1);
    assert_false(pl->post_fast);
    assert_false(pl->ret_result);
    assert_int_equal(pl->ret_size, 8);
    free(pl);
}

/* The producer's publishing store and the writer's progress never share a line. */
static void layouts_split_lines(void **state)
{
    (void)state;
    assert_true(offsetof(tr_chunk, consumed) / TR_CACHELINE != offsetof(tr_chunk, committed) / TR_CACHELINE);
    assert_int_equal(offsetof(tr_chunk, data) % TR_CACHELINE, 0);
    assert_true(offsetof(tr_chunk, data) > offsetof(tr_chunk, consumed));
    assert_true(offsetof(tr_tbuf, state) / TR_CACHELINE != offsetof(tr_tbuf, open) / TR_CACHELINE);
    assert_true(offsetof(tr_tbuf, wstate) / TR_CACHELINE != offsetof(tr_tbuf, wr) / TR_CACHELINE);
    assert_int_equal(sizeof(tr_tbuf) % TR_CACHELINE, 0);
}

/* A readable page followed by one that cannot be read: the second page's address. */
static unsigned char *page_before_hole(void)
{
    long pg = sysconf(_SC_PAGESIZE);
    unsigned char *m = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(m != MAP_FAILED);
    assert_int_equal(mprotect(m + pg, (size_t)pg, PROT_NONE), 0);
    return m + pg;
}

/* The blob the plain capture writes (tr_cap_size, tr_cap_write) and its length. */
static uint32_t plain_blob(const tr_cap *c, const void *params, unsigned char *out)
{
    uint32_t size;
    uint64_t count;
    int trunc;
    if (!tr_cap_size(c, params, &size, &count, &trunc))
        return 0;
    return (uint32_t)(tr_cap_write(c, params, out, size, count, trunc) - out);
}

/* tr_cap_write_safe: byte for byte the plain capture's blob where memory is readable (a string, a long string,
   a counted array, a count behind a pointer, NULL); where it is not, the readable prefix (TR_BLOB_TRUNC |
   TR_BLOB_UNREAD) or nothing (TR_BLOB_UNREAD); never more than tr_cap_safe_room. */
static void cap_write_safe(void **state)
{
    struct {
        const void *ptr;
        uint64_t count;
        const uint32_t *pcount;
    } pv;
    tr_cap str, arr, ind;
    unsigned char a[8192], b[8192], *hole = page_before_hole();
    char longs[600];
    uint64_t words[700];
    uint32_t n, room, pc = 5;
    tr_blob bl;
    (void)state;
    if (!cushim_read_mem_usable()) {   /* a seccomp filter that refuses both safe reads: said */
        print_message("no safe read here: cushim_read_mem reads nothing, the safe capture not tested\n");
        return;
    }
    memset(&str, 0, sizeof str);
    str.mode = TR_CAP_STRING;
    str.size = sizeof(void *);
    str.count_param = -1;
    arr = scalar_cap(0, 0, 8, 0);
    arr.count_param = 1;
    arr.coff = offsetof(__typeof__(pv), count);
    arr.csize = 8;
    ind = arr;
    ind.count_param = 2;
    ind.coff = offsetof(__typeof__(pv), pcount);
    ind.csize = sizeof(void *);
    ind.count_indirect = 1;
    ind.cpointee = 4;
    memset(longs, 'x', sizeof longs - 1);
    longs[sizeof longs - 1] = '\0';
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        words[i] = 0x1000 + i;

    /* readable: equal to the plain capture */
    const void *strs[] = {"vecadd", "", longs};
    for (size_t k = 0; k < 3; k++) {
        pv.ptr = strs[k];
        memset(a, 0xAA, sizeof a);
        memset(b, 0xAA, sizeof b);
        n = plain_blob(&str, &pv, a);
        room = tr_cap_safe_room(&str, (const unsigned char *)&pv);
        assert_int_equal(tr_cap_write_safe(&str, (const unsigned char *)&pv, b) - b, n);
        assert_memory_equal(a, b, n);
        assert_true(n <= room);
    }
    /* a count whose product with the element size wraps (2^61 * 8): the room still holds what is written */
    uint64_t counts[] = {0, 1, 3, 512, 700, (uint64_t)1 << 61};
    for (size_t k = 0; k < 6; k++) {
        pv.ptr = words;
        pv.count = counts[k];
        memset(a, 0xAA, sizeof a);
        memset(b, 0xAA, sizeof b);
        n = plain_blob(&arr, &pv, a);
        assert_int_equal(tr_cap_write_safe(&arr, (const unsigned char *)&pv, b) - b, n);
        assert_memory_equal(a, b, n);
        assert_true(n <= tr_cap_safe_room(&arr, (const unsigned char *)&pv));
    }
    pv.pcount = &pc;
    n = plain_blob(&ind, &pv, a);
    assert_int_equal(tr_cap_write_safe(&ind, (const unsigned char *)&pv, b) - b, n);
    assert_memory_equal(a, b, n);
    pv.ptr = NULL;   /* NULL: no blob */
    assert_int_equal(tr_cap_safe_room(&arr, (const unsigned char *)&pv), 0);
    assert_ptr_equal(tr_cap_write_safe(&arr, (const unsigned char *)&pv, b), b);

    /* a string running into the hole: its readable bytes, cut short */
    memcpy(hole - 5, "vecad", 5);
    pv.ptr = hole - 5;
    n = (uint32_t)(tr_cap_write_safe(&str, (const unsigned char *)&pv, b) - b);
    memcpy(&bl, b, sizeof bl);
    assert_int_equal(bl.flags, TR_BLOB_TRUNC | TR_BLOB_UNREAD);
    assert_int_equal(bl.len, 5);
    assert_memory_equal(b + sizeof bl, "vecad", 5);
    assert_int_equal(n, sizeof bl + 8);
    /* one in it: nothing */
    pv.ptr = hole;
    n = (uint32_t)(tr_cap_write_safe(&str, (const unsigned char *)&pv, b) - b);
    memcpy(&bl, b, sizeof bl);
    assert_int_equal(bl.flags, TR_BLOB_UNREAD);
    assert_int_equal(bl.len, 0);
    assert_int_equal(n, sizeof bl);
    /* an array of 4 whose last 1.5 elements are in the hole: the whole readable element(s), the count kept */
    memset(hole - 20, 0x22, 20);
    pv.ptr = hole - 20;
    pv.count = 4;
    n = (uint32_t)(tr_cap_write_safe(&arr, (const unsigned char *)&pv, b) - b);
    memcpy(&bl, b, sizeof bl);
    assert_int_equal(bl.flags, TR_BLOB_TRUNC | TR_BLOB_UNREAD);
    assert_int_equal(bl.len, 16);
    assert_int_equal(bl.count, 4);
    assert_true(n <= tr_cap_safe_room(&arr, (const unsigned char *)&pv));
    /* the array in the hole; a count behind a pointer into it */
    pv.ptr = hole;
    n = (uint32_t)(tr_cap_write_safe(&arr, (const unsigned char *)&pv, b) - b);
    memcpy(&bl, b, sizeof bl);
    assert_int_equal(bl.flags, TR_BLOB_UNREAD);
    assert_int_equal(n, sizeof bl);
    pv.ptr = words;
    pv.pcount = (const uint32_t *)(void *)hole;
    n = (uint32_t)(tr_cap_write_safe(&ind, (const unsigned char *)&pv, b) - b);
    memcpy(&bl, b, sizeof bl);
    assert_int_equal(bl.flags, TR_BLOB_UNREAD);
    assert_int_equal(bl.len, 0);
    assert_int_equal(n, sizeof bl);
    assert_true(n <= tr_cap_safe_room(&ind, (const unsigned char *)&pv));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(scalar_blob_equals_general), cmocka_unit_test(inline_word_equals_blob_data),
        cmocka_unit_test(params_copy_equals_memcpy),
        cmocka_unit_test(scalar_word_keeps_first_bytes), cmocka_unit_test(headers_written_whole),
        cmocka_unit_test(plan_flags), cmocka_unit_test(layouts_split_lines),
        cmocka_unit_test(cap_write_safe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
