/*
 * pingpong.c - the floor the remoting's transport is measured against (bench/remote/run.sh): a message of
 * SIZE bytes to a forked peer and back, over a connected unix stream socket and over TCP loopback
 * (TCP_NODELAY), with rm_wire.h's 16-byte header in front as the remoting sends it. Prints the median and
 * the 10th/90th percentiles of ROUNDS round trips (after a warm-up), and the throughput of 1 MiB messages
 * each answered by a 16-byte acknowledgement (a synchronous copy's pattern).
 *   pingpong unix|tcp [SIZE=16] [ROUNDS=20000]
 */
#define _GNU_SOURCE
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static void xfer(int fd, void *p, size_t n, int out)
{
    char *b = p;
    while (n > 0) {
        ssize_t r = out ? send(fd, b, n, MSG_NOSIGNAL) : read(fd, b, n);
        if (r <= 0)
            exit(1);
        b += r;
        n -= (size_t)r;
    }
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int tcp = argc > 1 && strcmp(argv[1], "tcp") == 0;
    size_t size = argc > 2 ? strtoul(argv[2], NULL, 0) : 16;
    int rounds = argc > 3 ? atoi(argv[3]) : 20000;
    int sv[2];
    if (tcp) {
        int l = socket(AF_INET, SOCK_STREAM, 0), one = 1;
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t al = sizeof a;
        bind(l, (struct sockaddr *)&a, sizeof a);
        listen(l, 1);
        getsockname(l, (struct sockaddr *)&a, &al);
        sv[1] = socket(AF_INET, SOCK_STREAM, 0);
        connect(sv[1], (struct sockaddr *)&a, sizeof a);
        sv[0] = accept(l, NULL, NULL);
        setsockopt(sv[0], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        setsockopt(sv[1], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        close(l);
    } else {
        socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    }
    size_t msg = size + 16, big = 1 << 20;
    char *buf = calloc(1, big + 16);
    int warm = rounds / 10, nbig = 256;
    if (fork() == 0) {   /* the peer: echo */
        close(sv[0]);
        for (int i = 0; i < warm + rounds; i++) {
            xfer(sv[1], buf, msg, 0);
            xfer(sv[1], buf, msg, 1);
        }
        for (int i = 0; i < nbig; i++) {   /* 1 MiB in, a 16-byte acknowledgement back */
            xfer(sv[1], buf, big + 16, 0);
            xfer(sv[1], buf, 16, 1);
        }
        _exit(0);
    }
    close(sv[1]);
    double *t = malloc(sizeof *t * (size_t)rounds);
    for (int i = 0; i < warm + rounds; i++) {
        double t0 = now_us();
        xfer(sv[0], buf, msg, 1);
        xfer(sv[0], buf, msg, 0);
        if (i >= warm)
            t[i - warm] = now_us() - t0;
    }
    double t0 = now_us();
    for (int i = 0; i < nbig; i++) {
        xfer(sv[0], buf, big + 16, 1);
        xfer(sv[0], buf, 16, 0);
    }
    double gbs = (double)nbig * big / ((now_us() - t0) * 1e3);
    wait(NULL);
    qsort(t, (size_t)rounds, sizeof *t, cmp);
    printf("%s %zu B: round trip median %.2f us (p10 %.2f, p90 %.2f); 1 MiB messages %.2f GB/s\n", tcp ? "tcp" : "unix",
           size, t[rounds / 2], t[rounds / 10], t[rounds * 9 / 10], gbs);
    return 0;
}
