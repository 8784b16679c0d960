/*
 * rm_sock_test.c - the connection's receive buffer (remote/rm_sock.c, rm_inbuf; docs/remote.md "Where the round
 * trip goes over TCP"): a small message comes in one read() with what follows it, and the next message is taken
 * from what was read ahead without a system call; a message that arrives in pieces (one byte at a time, split
 * anywhere) reads the same; a bulk payload goes straight into its destination past the buffered bytes; a peer
 * that closes mid-header or mid-payload gives RM_ECLOSED; a payload over the bound is refused from the header.
 * And a TCP connection's option on both ends (TCP_NODELAY), and rm_sock_is_tcp.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "rm_sock.h"

/* A framed message: header and payload, as rm_send writes them. */
static size_t frame(uint8_t *out, uint16_t kind, uint32_t seq, const void *payload, uint32_t len)
{
    rm_hdr_put(out, kind, len, seq);
    memcpy(out + 16, payload, len);
    return 16 + (size_t)len;
}

static size_t pending(int fd)   /* bytes the socket still holds */
{
    uint8_t b[4096];
    ssize_t n = recv(fd, b, sizeof b, MSG_PEEK | MSG_DONTWAIT);
    return n < 0 ? 0 : (size_t)n;
}

static void test_one_read_per_small_message(void **state)
{
    (void)state;
    int sv[2];
    uint8_t wire[256], *buf = NULL;
    size_t cap = 0, n = 0;
    rm_inbuf in = {0};
    rm_hdr h;
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    n += frame(wire + n, RM_MSG_REPLY, 7, "seventeen bytes!!", 17);
    n += frame(wire + n, RM_MSG_BATCH_REPLY, 8, "abcd", 4);
    n += frame(wire + n, RM_MSG_REPLY, 9, "", 0);
    assert_int_equal(write(sv[1], wire, n), (ssize_t)n);
    assert_int_equal(rm_in_recv(sv[0], &in, &h, &buf, &cap, RM_MAX_PAYLOAD), RM_OK);
    assert_int_equal(h.kind, RM_MSG_REPLY);
    assert_int_equal(h.seq, 7);
    assert_int_equal(h.length, 17);
    assert_memory_equal(buf, "seventeen bytes!!", 17);
    /* the header and payload came in one read with what followed: nothing is left in the socket */
    assert_int_equal(pending(sv[0]), 0);
    assert_int_equal(in.end - in.pos, n - 33);
    assert_int_equal(rm_in_recv(sv[0], &in, &h, &buf, &cap, RM_MAX_PAYLOAD), RM_OK);
    assert_int_equal(h.kind, RM_MSG_BATCH_REPLY);
    assert_int_equal(h.seq, 8);
    assert_memory_equal(buf, "abcd", 4);
    assert_int_equal(rm_in_recv_hdr(sv[0], &in, &h), RM_OK);   /* the two-step form shares the buffer */
    assert_int_equal(h.seq, 9);
    assert_int_equal(h.length, 0);
    assert_int_equal(in.pos, in.end);
    close(sv[1]);
    assert_int_equal(rm_in_recv(sv[0], &in, &h, &buf, &cap, RM_MAX_PAYLOAD), RM_ECLOSED);
    close(sv[0]);
    free(buf);
    rm_inbuf_free(&in);
}

/* Writes 'n' bytes from a thread: the first 'slow' in pieces of 'step' bytes with a pause after each (each a
   read of its own at the other end), then the rest at once. */
typedef struct dribble {
    int fd;
    const uint8_t *p;
    size_t n, slow, step;
} dribble;

static void *dribble_run(void *arg)
{
    dribble *d = arg;
    size_t off = 0;
    while (off < d->n) {
        size_t k = off < d->slow ? (d->slow - off < d->step ? d->slow - off : d->step) : d->n - off;
        ssize_t w = write(d->fd, d->p + off, k);
        if (w <= 0)
            break;
        off += (size_t)w;
        if (off <= d->slow)
            usleep(100);
    }
    return NULL;
}

/* Three messages split at every kind of place (inside a header, between header and payload, inside a payload,
   across two messages): each reads whole and in order. */
static void test_pieces(void **state)
{
    (void)state;
    static const size_t steps[] = { 1, 3, 16, 17, 40, 5000 };
    uint8_t *wire = malloc(20000), payload[6000];
    for (size_t i = 0; i < sizeof payload; i++)
        payload[i] = (uint8_t)(i * 7 + 1);
    for (size_t s = 0; s < sizeof steps / sizeof steps[0]; s++) {
        int sv[2];
        size_t n = 0, cap = 0;
        uint8_t *buf = NULL;
        rm_inbuf in = {0};
        rm_hdr h;
        pthread_t th;
        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
        n += frame(wire + n, RM_MSG_REPLY, 1, payload, 5);
        n += frame(wire + n, RM_MSG_REPLY, 2, payload, sizeof payload);
        n += frame(wire + n, RM_MSG_REPLY, 3, payload + 1, 33);
        dribble d = { .fd = sv[1], .p = wire, .n = n, .step = steps[s], .slow = steps[s] < 16 ? 64 : n };
        assert_int_equal(pthread_create(&th, NULL, dribble_run, &d), 0);
        assert_int_equal(rm_in_recv(sv[0], &in, &h, &buf, &cap, RM_MAX_PAYLOAD), RM_OK);
        assert_int_equal(h.seq, 1);
        assert_memory_equal(buf, payload, 5);
        assert_int_equal(rm_in_recv(sv[0], &in, &h, &buf, &cap, RM_MAX_PAYLOAD), RM_OK);
        assert_int_equal(h.seq, 2);
        assert_int_equal(h.length, sizeof payload);
        assert_memory_equal(buf, payload, sizeof payload);
        assert_int_equal(rm_in_recv(sv[0], &in, &h, &buf, &cap, RM_MAX_PAYLOAD), RM_OK);
        assert_int_equal(h.seq, 3);
        assert_memory_equal(buf, payload + 1, 33);
        pthread_join(th, NULL);
        close(sv[0]);
        close(sv[1]);
        free(buf);
        rm_inbuf_free(&in);
    }
    free(wire);
}

static void *bulk_writer(void *arg)
{
    dribble *d = arg;
    size_t off = 0;
    while (off < d->n) {
        ssize_t k = write(d->fd, d->p + off, d->n - off);
        if (k <= 0)
            break;
        off += (size_t)k;
    }
    return NULL;
}

/* A device-to-host chunk's reply: the head through the buffer, the bytes straight into the program's buffer
   (rp_bulk.c), then the next message still framed right. */
static void test_bulk_straight(void **state)
{
    (void)state;
    size_t len = 3 * RM_INBUF_BYTES + 123, n = 0;
    uint8_t *wire = malloc(len + 100), *dst = malloc(len + 1), small[64];
    rm_inbuf in = {0};
    rm_hdr h;
    int sv[2];
    pthread_t th;
    for (size_t i = 0; i < len; i++)
        wire[16 + 8 + i] = (uint8_t)(i ^ (i >> 9));
    rm_hdr_put(wire, RM_MSG_REPLY, (uint32_t)(8 + len), 4);
    memcpy(wire + 16, "headhead", 8);
    n = 16 + 8 + len;
    n += frame(wire + n, RM_MSG_REPLY, 5, "next", 4);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    dribble d = { .fd = sv[1], .p = wire, .n = n };
    assert_int_equal(pthread_create(&th, NULL, bulk_writer, &d), 0);
    assert_int_equal(rm_in_recv_hdr(sv[0], &in, &h), RM_OK);
    assert_int_equal(h.length, 8 + len);
    assert_int_equal(rm_in_read(sv[0], &in, small, 8), RM_OK);
    assert_memory_equal(small, "headhead", 8);
    dst[len] = 0xee;
    assert_int_equal(rm_in_read(sv[0], &in, dst, len), RM_OK);
    assert_memory_equal(dst, wire + 24, len);
    assert_int_equal(dst[len], 0xee);   /* nothing past the destination */
    uint8_t *buf = NULL;
    size_t cap = 0;
    assert_int_equal(rm_in_recv(sv[0], &in, &h, &buf, &cap, RM_MAX_PAYLOAD), RM_OK);
    assert_int_equal(h.seq, 5);
    assert_memory_equal(buf, "next", 4);
    pthread_join(th, NULL);
    close(sv[0]);
    close(sv[1]);
    free(buf);
    free(wire);
    free(dst);
    rm_inbuf_free(&in);
}

/* A peer that closes mid-header or mid-payload: RM_ECLOSED, never a message. */
static void test_closed_midway(void **state)
{
    (void)state;
    uint8_t wire[64];
    size_t n = frame(wire, RM_MSG_REPLY, 1, "0123456789abcdef", 16);
    for (size_t cut = 1; cut < n; cut++) {
        int sv[2];
        uint8_t *buf = NULL;
        size_t cap = 0;
        rm_inbuf in = {0};
        rm_hdr h;
        assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
        assert_int_equal(write(sv[1], wire, cut), (ssize_t)cut);
        close(sv[1]);
        assert_int_equal(rm_in_recv(sv[0], &in, &h, &buf, &cap, RM_MAX_PAYLOAD), RM_ECLOSED);
        close(sv[0]);
        free(buf);
        rm_inbuf_free(&in);
    }
}

/* A header whose length is over the bound: refused before anything is allocated; a bad magic refused. */
static void test_bounds(void **state)
{
    (void)state;
    int sv[2];
    uint8_t hdr[16], *buf = NULL;
    size_t cap = 0;
    rm_inbuf in = {0};
    rm_hdr h;
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    rm_hdr_put(hdr, RM_MSG_CALL, 4097, 1);
    assert_int_equal(write(sv[1], hdr, 16), 16);
    assert_int_equal(rm_in_recv(sv[0], &in, &h, &buf, &cap, 4096), RM_EBOUNDS);
    assert_null(buf);
    assert_int_equal(cap, 0);
    memcpy(hdr, "XXXX", 4);
    assert_int_equal(write(sv[1], hdr, 16), 16);
    assert_int_equal(rm_in_recv(sv[0], &in, &h, &buf, &cap, RM_MAX_PAYLOAD), RM_EMALFORMED);
    close(sv[0]);
    close(sv[1]);
    rm_inbuf_free(&in);
}

/* TCP connections, both ends: TCP_NODELAY; rm_sock_is_tcp tells TCP from unix. */
static void test_tcp_options(void **state)
{
    (void)state;
    char err[256], peer[96], addr[64];
    int l = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t al = sizeof a;
    assert_int_equal(bind(l, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(l, 1), 0);
    assert_int_equal(getsockname(l, (struct sockaddr *)&a, &al), 0);
    snprintf(addr, sizeof addr, "tcp://127.0.0.1:%u", ntohs(a.sin_port));
    int c = rm_connect(addr, err, sizeof err);
    assert_true(c >= 0);
    int s = accept(l, NULL, NULL);
    assert_true(s >= 0);
    assert_int_equal(rm_accepted(s, peer, sizeof peer), 1);
    for (int k = 0; k < 2; k++) {
        int fd = k ? s : c, v = 0;
        socklen_t vl = sizeof v;
        assert_int_equal(getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &v, &vl), 0);
        assert_int_not_equal(v, 0);
        assert_int_equal(rm_sock_is_tcp(fd), 1);
    }
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    assert_int_equal(rm_sock_is_tcp(sv[0]), 0);
    close(sv[0]);
    close(sv[1]);
    close(c);
    close(s);
    close(l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_read_per_small_message),
        cmocka_unit_test(test_pieces),
        cmocka_unit_test(test_bulk_straight),
        cmocka_unit_test(test_closed_midway),
        cmocka_unit_test(test_bounds),
        cmocka_unit_test(test_tcp_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
