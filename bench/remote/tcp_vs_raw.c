/*
 * tcp_vs_raw.c - issue 43's two TCP targets in one process (bench/remote/run.sh, docs/benchmarks.md "Remoting"):
 * the remote path (this program through the drop-in and the remote plugin to cushim-serve over TCP loopback)
 * against a raw TCP exchange of the same messages with a forked echo peer, interleaved block by block, so that a
 * loaded host slows both alike.
 *
 *   round trip   BLOCKS x ROUNDS cuStreamQuery, each block followed by ROUNDS raw round trips of what that call
 *                puts on the wire: a 32-byte message (16-byte header, 16-byte call) answered by a 33-byte one
 *                (16-byte header, 17-byte reply).
 *   bulk         COPIES x cuMemcpyHtoD and cuMemcpyDtoH of SIZE bytes, each followed by a raw transfer of the same
 *                messages: host to device, SIZE / CHUNK messages of a 41-byte head and CHUNK bytes sent back to back
 *                from the program's buffer (one sendmsg each), the peer reading each into one CHUNK buffer and
 *                answering each with 33 bytes, read after all are sent, as the plugin's chunked copy does; device
 *                to host, SIZE / CHUNK 41-byte requests sent back to back, each answered by a 37-byte head and
 *                CHUNK bytes from the peer's buffer, read straight into the program's buffer. CHUNK is the plugin's
 *                (8 MiB). Then the same raw transfer with the peer copying each chunk to or from a SIZE buffer
 *                (memcpy), as the fake driver's cuMemcpy does in the back end: the floor of the remote path on the
 *                fake driver, whose "DMA" is a CPU copy on the back end's thread. And once more with that copy
 *                overlapped with the socket on a second thread of the peer (chunk k copied while chunk k+1 is read,
 *                or chunk k+1 copied while chunk k is sent): what a back end that pipelined its copies could reach.
 * Both connections have what rm_sock.c gives a TCP connection: TCP_NODELAY, the kernel's buffer autotuning.
 * Prints each side's median (p10-p90) and the ratio of the medians, with the ratio's spread over blocks/copies.
 *   tcp_vs_raw [BLOCKS=10] [ROUNDS=2000] [SIZE=268435456] [COPIES=5]
 */
#define _GNU_SOURCE
#include <cuda.h>
#define NET_IO_EXIT 3
#include "bench_net.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (8u << 20)
enum { CALL_OUT = 32, CALL_IN = 33, HEAD_OUT = 41, ACK = 33, HEAD_IN = 37 };

/* A head and CHUNK bytes in one sendmsg, as the plugin and the server send them. */
static void send2(int fd, void *head, size_t hn, void *body, size_t bn)
{
    struct iovec v[2] = { { head, hn }, { body, bn } };
    struct iovec *p = v;
    int n = 2;
    while (n > 0) {
        struct msghdr m = { .msg_iov = p, .msg_iovlen = (size_t)n };
        ssize_t r = sendmsg(fd, &m, MSG_NOSIGNAL);
        if (r <= 0)
            exit(3);
        while (n > 0 && (size_t)r >= p->iov_len) {
            r -= (ssize_t)p->iov_len;
            p++;
            n--;
        }
        if (n > 0) {
            p->iov_base = (char *)p->iov_base + r;
            p->iov_len -= (size_t)r;
        }
    }
}

static double pct(double *t, int n, int p)
{
    qsort(t, (size_t)n, sizeof *t, cmp);
    return t[(size_t)n * (size_t)p / 100 < (size_t)n ? (size_t)n * (size_t)p / 100 : (size_t)n - 1];
}

/* A copy on a thread of its own (the overlapped floor). */
typedef struct copy_job {
    char *dst;
    const char *src;
    size_t n;
} copy_job;

static void *copy_run(void *a)
{
    copy_job *c = a;
    memcpy(c->dst, c->src, c->n);
    return NULL;
}

/* The echo peer: a command byte, then what it stands for. */
static void peer(int fd, size_t size)
{
    char small[64] = {0}, cmd;
    char *buf = malloc(CHUNK), *buf2 = malloc(CHUNK), *mem = malloc(size);   /* 'mem': the fake's device memory */
    if (buf == NULL || buf2 == NULL || mem == NULL)
        exit(2);
    memset(buf2, 2, CHUNK);
    memset(buf, 2, CHUNK);
    memset(mem, 2, size);
    while (read(fd, &cmd, 1) == 1) {
        uint32_t n = 0;
        xfer(fd, &n, 4, 0);
        if (cmd == 'r') {   /* n round trips */
            for (uint32_t i = 0; i < n; i++) {
                xfer(fd, small, CALL_OUT, 0);
                xfer(fd, small, CALL_IN, 1);
            }
        } else if (cmd == 'h' || cmd == 'H') {   /* n chunks in, each acknowledged ('H': and copied on) */
            for (uint32_t i = 0; i < n; i++) {
                size_t len = i + 1 < n || size % CHUNK == 0 ? CHUNK : size % CHUNK;
                xfer(fd, small, HEAD_OUT, 0);
                xfer(fd, buf, len, 0);
                if (cmd == 'H')
                    memcpy(mem + (size_t)i * CHUNK, buf, len);
                xfer(fd, small, ACK, 1);
            }
        } else if (cmd == 'o') {   /* 'H' with chunk k copied on a thread while chunk k+1 is read */
            char *b[2] = { buf, buf2 };
            pthread_t th;
            copy_job job;
            for (uint32_t i = 0; i <= n; i++) {
                size_t len = i + 1 < n || size % CHUNK == 0 ? CHUNK : size % CHUNK;
                if (i < n) {
                    xfer(fd, small, HEAD_OUT, 0);
                    xfer(fd, b[i & 1], len, 0);
                }
                if (i > 0) {
                    pthread_join(th, NULL);
                    xfer(fd, small, ACK, 1);
                }
                if (i < n) {
                    job = (copy_job){ mem + (size_t)i * CHUNK, b[i & 1], len };
                    if (pthread_create(&th, NULL, copy_run, &job) != 0)
                        exit(2);
                }
            }
        } else if (cmd == 'O') {   /* 'D' with chunk k+1 copied on a thread while chunk k is sent */
            char *b[2] = { buf, buf2 };
            pthread_t th;
            copy_job job;
            for (uint32_t i = 0; i < n; i++)
                xfer(fd, small, HEAD_OUT, 0);
            memcpy(b[0], mem, n > 1 || size % CHUNK == 0 ? CHUNK : size % CHUNK);
            for (uint32_t i = 0; i < n; i++) {
                size_t len = i + 1 < n || size % CHUNK == 0 ? CHUNK : size % CHUNK;
                int more = i + 1 < n;
                if (more) {
                    size_t next = i + 2 < n || size % CHUNK == 0 ? CHUNK : size % CHUNK;
                    job = (copy_job){ b[(i + 1) & 1], mem + (size_t)(i + 1) * CHUNK, next };
                    if (pthread_create(&th, NULL, copy_run, &job) != 0)
                        exit(2);
                }
                send2(fd, small, HEAD_IN, b[i & 1], len);
                if (more)
                    pthread_join(th, NULL);
            }
        } else if (cmd == 'd' || cmd == 'D') {   /* n requests, each answered with a chunk ('D': copied first) */
            for (uint32_t i = 0; i < n; i++) {
                size_t len = i + 1 < n || size % CHUNK == 0 ? CHUNK : size % CHUNK;
                xfer(fd, small, HEAD_OUT, 0);
                if (cmd == 'D')
                    memcpy(buf, mem + (size_t)i * CHUNK, len);
                send2(fd, small, HEAD_IN, buf, len);
            }
        }
    }
    _exit(0);
}

static void command(int fd, char c, uint32_t n)
{
    char m[5] = { c };
    memcpy(m + 1, &n, 4);
    xfer(fd, m, 5, 1);
}

/* A host-to-device copy's messages: every chunk sent back to back from the program's buffer, then the answers. */
static void raw_htod(int fd, char cmd, char *host, size_t size, uint32_t chunks, char *small)
{
    command(fd, cmd, chunks);
    for (uint32_t k = 0; k < chunks; k++) {
        size_t off = (size_t)k * CHUNK, n = size - off < CHUNK ? size - off : CHUNK;
        send2(fd, small, HEAD_OUT, host + off, n);
    }
    for (uint32_t k = 0; k < chunks; k++)
        xfer(fd, small, ACK, 0);
}

/* A device-to-host copy's: every request, then each answer's head and its bytes straight into the buffer. */
static void raw_dtoh(int fd, char cmd, char *host, size_t size, uint32_t chunks, char *small)
{
    command(fd, cmd, chunks);
    for (uint32_t k = 0; k < chunks; k++)
        xfer(fd, small, HEAD_OUT, 1);
    for (uint32_t k = 0; k < chunks; k++) {
        size_t off = (size_t)k * CHUNK, n = size - off < CHUNK ? size - off : CHUNK;
        xfer(fd, small, HEAD_IN, 0);
        xfer(fd, host + off, n, 0);
    }
}

int main(int argc, char **argv)
{
    int blocks = argc > 1 ? atoi(argv[1]) : 10, rounds = argc > 2 ? atoi(argv[2]) : 2000;
    size_t size = argc > 3 ? strtoull(argv[3], NULL, 0) : (size_t)256 << 20;
    int copies = argc > 4 ? atoi(argv[4]) : 5;
    uint32_t chunks = (uint32_t)((size + CHUNK - 1) / CHUNK);
    int sv[2];
    if (blocks < 1 || rounds < 1 || copies < 1 || size == 0 || net_tcp_pair(sv) != 0)
        return 2;
    if (fork() == 0) {   /* before any CUDA call: the peer holds no connection of the plugin's */
        close(sv[0]);
        peer(sv[1], size);
    }
    close(sv[1]);
    int fd = sv[0];
    CUdevice dev;
    CUcontext ctx;
    CUdeviceptr d;
    char *host = malloc(size), small[64] = {0};
    if (host == NULL || cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) ||
        cuCtxSetCurrent(ctx) || cuMemAlloc(&d, size)) {
        fprintf(stderr, "tcp_vs_raw: set-up failed\n");
        return 1;
    }
    memset(host, 1, size);
    size_t nt = (size_t)blocks * (size_t)rounds;
    double *rt = malloc(sizeof *rt * nt), *raw = malloc(sizeof *raw * nt), *ratio = malloc(sizeof *ratio * 3 * (size_t)(blocks > copies ? blocks : copies));
    double *bm = malloc(sizeof *bm * (size_t)rounds);
    for (int i = 0; i < rounds / 10; i++)   /* warm up both */
        cuStreamQuery(NULL);
    for (int b = 0; b < blocks; b++) {
        double *r = rt + (size_t)b * rounds, *w = raw + (size_t)b * rounds;
        for (int i = 0; i < rounds; i++) {
            double t0 = now_us();
            cuStreamQuery(NULL);
            r[i] = now_us() - t0;
        }
        command(fd, 'r', (uint32_t)rounds);
        for (int i = 0; i < rounds; i++) {
            double t0 = now_us();
            xfer(fd, small, CALL_OUT, 1);
            xfer(fd, small, CALL_IN, 0);
            w[i] = now_us() - t0;
        }
        memcpy(bm, r, sizeof *bm * (size_t)rounds);
        double m1 = pct(bm, rounds, 50);
        memcpy(bm, w, sizeof *bm * (size_t)rounds);
        ratio[b] = m1 / pct(bm, rounds, 50);
    }
    double rm = pct(rt, (int)nt, 50), rp10 = pct(rt, (int)nt, 10), rp90 = pct(rt, (int)nt, 90);
    double wm = pct(raw, (int)nt, 50), wp10 = pct(raw, (int)nt, 10), wp90 = pct(raw, (int)nt, 90);
    printf("round trip: remote cuStreamQuery median %.2f us (p10 %.2f, p90 %.2f); raw TCP 32/33 B median %.2f us "
           "(p10 %.2f, p90 %.2f); ratio %.2fx (blocks: min %.2f, median %.2f, max %.2f; %d x %d)\n",
           rm, rp10, rp90, wm, wp10, wp90, rm / wm, pct(ratio, blocks, 0), pct(ratio, blocks, 50),
           pct(ratio, blocks, 100), blocks, rounds);
    /* per copy, GB/s: [dir][kind][copy], kind 0 remote, 1 raw, 2 raw with the peer's memcpy (the fake's DMA),
       3 that memcpy overlapped with the socket on a second thread of the peer */
    double *th = malloc(sizeof *th * 8 * (size_t)copies);
    for (int c = 0; c < copies; c++) {
        for (int dir = 0; dir < 2; dir++)
            for (int kind = 0; kind < 4; kind++) {
                double t0 = now_us();
                if (kind == 0 && (dir ? cuMemcpyDtoH(host, d, size) : cuMemcpyHtoD(d, host, size)) != CUDA_SUCCESS)
                    return 1;
                if (kind != 0 && dir == 0)
                    raw_htod(fd, "_hHo"[kind], host, size, chunks, small);
                if (kind != 0 && dir == 1)
                    raw_dtoh(fd, "_dDO"[kind], host, size, chunks, small);
                th[(dir * 4 + kind) * copies + c] = (double)size / ((now_us() - t0) * 1e3);
            }
    }
    for (int dir = 0; dir < 2; dir++) {
        double *r = th + (size_t)dir * 4 * copies, *w = r + copies, *wc = w + copies, *wo = wc + copies;
        for (int c = 0; c < copies; c++)
            ratio[c] = r[c] / w[c], ratio[copies + c] = r[c] / wc[c];
        double rm2 = pct(r, copies, 50), wm2 = pct(w, copies, 50), cm2 = pct(wc, copies, 50);
        printf("%s %zu MiB: remote median %.2f GB/s (%.2f-%.2f); raw TCP, same messages, median %.2f GB/s "
               "(%.2f-%.2f); ratio %.0f%% (copies: min %.0f%%, median %.0f%%, max %.0f%%; %d); raw with the peer's "
               "memcpy %.2f GB/s (%.2f-%.2f), remote/that %.0f%% (copies: median %.0f%%); that memcpy overlapped "
               "on a second thread %.2f GB/s (%.2f-%.2f), %.0f%% of the raw\n",
               dir ? "DtoH" : "HtoD", size >> 20, rm2, pct(r, copies, 0), pct(r, copies, 100), wm2,
               pct(w, copies, 0), pct(w, copies, 100), 100 * rm2 / wm2, 100 * pct(ratio, copies, 0),
               100 * pct(ratio, copies, 50), 100 * pct(ratio, copies, 100), copies, cm2, pct(wc, copies, 0),
               pct(wc, copies, 100), 100 * rm2 / cm2, 100 * pct(ratio + copies, copies, 50), pct(wo, copies, 50),
               pct(wo, copies, 0), pct(wo, copies, 100), 100 * pct(wo, copies, 50) / wm2);
    }
    close(fd);
    wait(NULL);
    cuMemFree(d);
    cuDevicePrimaryCtxRelease(dev);
    return 0;
}
