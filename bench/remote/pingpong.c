/*
 * pingpong.c - the floor the remoting's transport is measured against (bench/remote/run.sh): a message of
 * SIZE bytes to a forked peer and back, over a connected unix stream socket and over TCP loopback
 * (TCP_NODELAY), with rm_wire.h's 16-byte header in front as the remoting sends it. Prints the median and
 * the 10th/90th percentiles of ROUNDS round trips (after a warm-up), and the throughput of 1 MiB messages
 * each answered by a 16-byte acknowledgement (a synchronous copy's pattern).
 *   pingpong unix|tcp [SIZE=16] [ROUNDS=20000]
 */
#define _GNU_SOURCE
#define NET_IO_EXIT 1
#include "bench_net.h"
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

int main(int argc, char **argv)
{
    int tcp = argc > 1 && strcmp(argv[1], "tcp") == 0;
    size_t size = argc > 2 ? strtoul(argv[2], NULL, 0) : 16;
    int rounds = argc > 3 ? atoi(argv[3]) : 20000;
    int sv[2];
    if (tcp) {
        if (net_tcp_pair(sv) != 0)
            return 2;
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
