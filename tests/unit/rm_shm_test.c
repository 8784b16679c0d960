/*
 * rm_shm_test.c - the shared area of a client and its back end (remote/rm_shm.c, docs/remote.md, "Shared
 * memory"): the memfd is sealed, passed over a unix socket and mapped by the other side; what the back end
 * refuses to map; a copy's host buffer placed in the area only when the plan is a byte copy without a stream,
 * the buffer came absent and [offset, offset + count) lies in the area.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "rm_shm.h"
#include "rm_sock.h"

void rm_meta_generated(rm_meta *m);

static rm_plans *plans;
static rm_arena arena;

static const rm_plan *plan_named(const char *name)
{
    for (uint32_t i = 0; i < plans->count; i++)
        if (strcmp(plans->all[i].info->name, name) == 0)
            return &plans->all[i];
    fail_msg("no API %s", name);
    return NULL;
}

static void test_create_sealed(void **state)
{
    (void)state;
    void *map;
    int fd = rm_shm_create(1u << 20, &map);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, 4096), -1);   /* sealed: the back end's mapping cannot lose its pages */
    assert_int_equal(errno, EPERM);
    assert_int_equal(ftruncate(fd, 2u << 20), -1);
    ((uint8_t *)map)[(1u << 20) - 1] = 7;
    munmap(map, 1u << 20);
    close(fd);
}

static void test_pass_and_map(void **state)
{
    (void)state;
    int sv[2], passed;
    void *mine, *theirs;
    rm_hdr h;
    uint8_t *buf = NULL;
    size_t cap = 0;
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    int fd = rm_shm_create(1u << 20, &mine);
    assert_true(fd >= 0);
    /* a message without a descriptor first: none comes with it */
    assert_int_equal(rm_send(sv[0], RM_MSG_THREAD, 1, "12345678", 8), RM_OK);
    assert_int_equal(rm_recv_fd(sv[1], &h, &buf, &cap, &passed), RM_OK);
    assert_int_equal(passed, -1);
    assert_int_equal(h.kind, RM_MSG_THREAD);
    assert_int_equal(rm_shm_send(sv[0], 2, fd, 1u << 20, 5), RM_OK);
    close(fd);
    assert_int_equal(rm_recv_fd(sv[1], &h, &buf, &cap, &passed), RM_OK);
    assert_int_equal(h.kind, RM_MSG_SHM);
    assert_int_equal(h.seq, 2);
    assert_true(passed >= 0);
    assert_true(fcntl(passed, F_GETFD) & FD_CLOEXEC);
    uint64_t want;
    uint32_t region;
    assert_int_equal(rm_shm_msg(buf, h.length, &want, &region), RM_OK);
    assert_true(want == 1u << 20 && region == 5);
    assert_int_equal(rm_shm_map(passed, want, &theirs), RM_OK);
    close(passed);
    memcpy(mine, "client", 7);
    assert_string_equal(theirs, "client");   /* one area, two mappings */
    memcpy((uint8_t *)theirs + 100, "server", 7);
    assert_string_equal((uint8_t *)mine + 100, "server");
    munmap(mine, 1u << 20);
    munmap(theirs, 1u << 20);
    free(buf);
    close(sv[0]);
    close(sv[1]);
}

static void test_map_refusals(void **state)
{
    (void)state;
    void *map, *m2;
    size_t size;
    uint64_t want = 1u << 20, zero = 0, big = (2u << 20), huge = RM_SHM_MAX + 1;
    int fd = rm_shm_create(1u << 20, &map);
    int unsealed = memfd_create("unsealed", MFD_CLOEXEC), p[2];
    assert_true(fd >= 0 && unsealed >= 0 && ftruncate(unsealed, 1u << 20) == 0 && pipe(p) == 0);
    uint8_t msg[12] = {0};
    uint32_t region;
    memcpy(msg, &want, 8);
    assert_int_equal(rm_shm_msg(msg, 8, &want, &region), RM_EMALFORMED);
    assert_int_equal(rm_shm_msg(msg, 13, &want, &region), RM_EMALFORMED);
    region = RM_SHM_REGIONS;
    memcpy(msg + 8, &region, 4);
    assert_int_equal(rm_shm_msg(msg, 12, &want, &region), RM_EBOUNDS);
    memcpy(msg, &huge, 8);
    region = 0;
    memcpy(msg + 8, &region, 4);
    assert_int_equal(rm_shm_msg(msg, 12, &want, &region), RM_EBOUNDS);
    want = 1u << 20;
    assert_int_equal(rm_shm_map(fd, zero, &m2), RM_EBOUNDS);
    assert_int_equal(rm_shm_map(fd, huge, &m2), RM_EBOUNDS);
    /* larger than the file: pages past its end would raise SIGBUS in the back end */
    assert_int_equal(rm_shm_map(fd, big, &m2), RM_EUNSUPPORTED);
    /* not sealed: the client could shrink it under the back end's mapping */
    assert_int_equal(rm_shm_map(unsealed, want, &m2), RM_EUNSUPPORTED);
    assert_int_equal(rm_shm_map(p[0], want, &m2), RM_EUNSUPPORTED);
    assert_int_equal(rm_shm_map(-1, want, &m2), RM_EUNSUPPORTED);
    assert_int_equal(rm_shm_map(fd, want, &m2), RM_OK);
    size = (size_t)want;
    munmap(m2, size);
    munmap(map, 1u << 20);
    close(fd);
    close(unsealed);
    close(p[0]);
    close(p[1]);
}

static int shm_stream;   /* rm_shm_place's 'stream': the region is pinned memory, not the staging area */

/* An RM_MSG_SHM_CALL of 'name' (device 0x1000, host 'host', 'count' bytes) at 'off', split and decoded as the
   back end does: the decoded call in *c, placement's result returned. */
static int shm_call(const char *name, const void *host, uint64_t count, uint64_t off, uint8_t *map, size_t size,
                    rm_call *c)
{
    const rm_plan *pl = plan_named(name);
    uint8_t params[64] = {0};
    uint64_t dev = 0x1000;
    rm_wr w;
    rm_call cc;
    uint32_t status;
    const uint8_t *call;
    size_t clen;
    uint64_t got;
    assert_true(pl->info->params_size <= sizeof params);
    memcpy(params + pl->p[pl->chunk_dev].offset, &dev, 8);
    memcpy(params + pl->p[pl->chunk_host].offset, &host, 8);
    memcpy(params + pl->p[pl->chunk_count].offset, &count, 8);
    rm_wr_init(&w, 0);
    uint32_t region;
    rm_shm_call_head(&w, 7, off);
    assert_int_equal(rm_encode_call(pl, params, NULL, &w, &cc), RM_OK);
    assert_int_equal(rm_shm_call_split(w.p, w.len, &region, &got, &call, &clen), RM_OK);
    assert_true(got == off && region == 7);
    rm_arena_reset(&arena);
    assert_int_equal(rm_decode_call(plans, call, clen, &arena, NULL, c, &status), RM_OK);
    int rc = rm_shm_place(c, off, map, size, shm_stream);
    rm_wr_free(&w);
    return rc;
}

static void test_place(void **state)
{
    (void)state;
    static uint8_t map[4096];
    uint8_t src[16] = {0};
    rm_call c;
    void *host;
    assert_int_equal(shm_call("cuMemcpyHtoD_v2", NULL, 100, 200, map, sizeof map, &c), RM_OK);
    memcpy(&host, (uint8_t *)c.params + c.plan->p[c.plan->chunk_host].offset, sizeof host);
    assert_ptr_equal(host, map + 200);
    rm_shm_unplace(&c);
    memcpy(&host, (uint8_t *)c.params + c.plan->p[c.plan->chunk_host].offset, sizeof host);
    assert_null(host);
    assert_int_equal(shm_call("cuMemcpyDtoH_v2", NULL, 4096, 0, map, sizeof map, &c), RM_OK);   /* all of it */
    assert_int_equal(shm_call("cuMemcpyDtoH_v2", NULL, 0, 4096, map, sizeof map, &c), RM_OK);
    /* outside the area */
    assert_int_equal(shm_call("cuMemcpyDtoH_v2", NULL, 4097, 0, map, sizeof map, &c), RM_EBOUNDS);
    assert_int_equal(shm_call("cuMemcpyHtoD_v2", NULL, 1, 4096, map, sizeof map, &c), RM_EBOUNDS);
    assert_int_equal(shm_call("cuMemcpyHtoD_v2", NULL, 0, 4097, map, sizeof map, &c), RM_EBOUNDS);
    assert_int_equal(shm_call("cuMemcpyHtoD_v2", NULL, 2, UINT64_MAX, map, sizeof map, &c), RM_EBOUNDS);
    assert_int_equal(shm_call("cuMemcpyHtoD_v2", NULL, UINT64_MAX, 1, map, sizeof map, &c), RM_EBOUNDS);
    /* the bytes in the message as well: not a shared-memory call */
    assert_int_equal(shm_call("cuMemcpyHtoD_v2", src, sizeof src, 0, map, sizeof map, &c), RM_EMALFORMED);
    /* a copy on a stream: not in the staging area (its DMA could outlive the reply while the client reuses the
       slot); in a pinned region, yes (the program's own pages, as locally), within the same bounds */
    assert_int_equal(shm_call("cuMemcpyHtoDAsync_v2", NULL, 16, 0, map, sizeof map, &c), RM_EMALFORMED);
    shm_stream = 1;
    assert_int_equal(shm_call("cuMemcpyHtoDAsync_v2", NULL, 16, 0, map, sizeof map, &c), RM_OK);
    assert_int_equal(shm_call("cuMemcpyDtoHAsync_v2", NULL, 4096, 0, map, sizeof map, &c), RM_OK);
    assert_int_equal(shm_call("cuMemcpyDtoHAsync_v2", NULL, 4096, 1, map, sizeof map, &c), RM_EBOUNDS);
    shm_stream = 0;
}

static void test_place_not_a_copy(void **state)
{
    (void)state;
    static uint8_t map[64];
    const rm_plan *pl = plan_named("cuCtxSynchronize");
    rm_wr w;
    rm_call c, cc;
    uint32_t status;
    rm_wr_init(&w, 0);
    assert_int_equal(rm_encode_call(pl, (uint8_t[8]){0}, NULL, &w, &cc), RM_OK);
    rm_arena_reset(&arena);
    assert_int_equal(rm_decode_call(plans, w.p, w.len, &arena, NULL, &c, &status), RM_OK);
    assert_int_equal(rm_shm_place(&c, 0, map, sizeof map, 1), RM_EMALFORMED);
    rm_wr_free(&w);
    const uint8_t *call;
    size_t clen;
    uint64_t off;
    uint32_t region;
    uint8_t head[16] = {0};
    assert_int_equal(rm_shm_call_split(head, 15, &region, &off, &call, &clen), RM_EMALFORMED);
    head[4] = 1;   /* the reserved word */
    assert_int_equal(rm_shm_call_split(head, 16, &region, &off, &call, &clen), RM_EMALFORMED);
    head[4] = 0;
    region = RM_SHM_REGIONS;
    memcpy(head, &region, 4);
    assert_int_equal(rm_shm_call_split(head, 16, &region, &off, &call, &clen), RM_EBOUNDS);
}

static int setup(void **state)
{
    (void)state;
    rm_meta m;
    rm_meta_generated(&m);
    plans = rm_plans_build(&m);
    return plans != NULL && rm_arena_init(&arena, 1u << 20) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    rm_plans_free(plans);
    rm_arena_destroy(&arena);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_sealed),
        cmocka_unit_test(test_pass_and_map),
        cmocka_unit_test(test_map_refusals),
        cmocka_unit_test(test_place),
        cmocka_unit_test(test_place_not_a_copy),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
