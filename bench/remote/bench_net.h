/*
 * bench_net.h - what the remoting's raw-socket benchmarks share (pingpong.c, tcp_vs_raw.c): a clock, whole
 * reads and writes, and a connected TCP loopback pair with TCP_NODELAY on both ends, as rm_sock.c gives a TCP
 * connection. A program defines NET_IO_EXIT (the status it exits with when the peer goes) before including it.
 */
#ifndef BENCH_NET_H
#define BENCH_NET_H

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

/* n bytes sent (out) or read whole; the process exits NET_IO_EXIT when the other end is gone */
static void xfer(int fd, void *p, size_t n, int out)
{
    char *b = p;
    while (n > 0) {
        ssize_t r = out ? send(fd, b, n, MSG_NOSIGNAL) : read(fd, b, n);
        if (r <= 0)
            exit(NET_IO_EXIT);
        b += r;
        n -= (size_t)r;
    }
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* sv[0] and sv[1]: the two ends of one TCP loopback connection; -1 if it could not be made */
static int net_tcp_pair(int sv[2])
{
    int l = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t al = sizeof a;
    if (l < 0)
        return -1;
    if (bind(l, (struct sockaddr *)&a, sizeof a) != 0 || listen(l, 1) != 0 ||
        getsockname(l, (struct sockaddr *)&a, &al) != 0 || (sv[1] = socket(AF_INET, SOCK_STREAM, 0)) < 0) {
        close(l);
        return -1;
    }
    if (connect(sv[1], (struct sockaddr *)&a, sizeof a) != 0 || (sv[0] = accept(l, NULL, NULL)) < 0) {
        close(sv[1]);
        close(l);
        return -1;
    }
    setsockopt(sv[0], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(sv[1], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    close(l);
    return 0;
}

#endif
