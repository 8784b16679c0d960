/*
 * ucx_pingpong.c - the same round trip as pingpong.c over UCX active messages (ucp_am_send_nbx), for the
 * transport evaluation of docs/remote.md. The two processes exchange worker addresses over a pipe and
 * connect endpoints directly, so UCX picks its transports as configured: UCX_TLS=posix,sysv,cma,self (shared
 * memory on one host) or UCX_TLS=tcp. Messages past the eager limit go by rendezvous (ucp_am_recv_data_nbx).
 * Throughput: 1 MiB messages, each answered by a 16-byte acknowledgement (a synchronous copy's pattern).
 *   UCX_TLS=... ucx_pingpong [SIZE=16] [ROUNDS=20000]
 * Build: gcc -O2 ucx_pingpong.c $(pkg-config --cflags --libs ucx)   (Debian: libucx-dev)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <ucp/api/ucp.h>
#include <unistd.h>

static ucp_worker_h worker;
static ucp_ep_h ep;
static volatile int got;
static char *rbuf;

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static void recv_done(void *req, ucs_status_t st, size_t len, void *user)
{
    (void)st, (void)len, (void)user;
    got++;
    ucp_request_free(req);   /* here: freed before it completes, a request's callback is not called */
}

static ucs_status_t on_am(void *arg, const void *hdr, size_t hlen, void *data, size_t len, const ucp_am_recv_param_t *p)
{
    (void)arg, (void)hdr, (void)hlen;
    if (p->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) {
        ucp_request_param_t rp = { .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK, .cb.recv_am = recv_done };
        void *r = ucp_am_recv_data_nbx(worker, data, rbuf, len, &rp);
        if (!UCS_PTR_IS_PTR(r))
            got++;   /* completed at once */
        return UCS_OK;
    }
    memcpy(rbuf, data, len);
    got++;
    return UCS_OK;
}

static void send_wait(const void *buf, size_t len)
{
    ucp_request_param_t rp = { 0 };
    void *r = ucp_am_send_nbx(ep, 1, NULL, 0, buf, len, &rp);
    if (UCS_PTR_IS_PTR(r)) {
        while (ucp_request_check_status(r) == UCS_INPROGRESS)
            ucp_worker_progress(worker);
        ucp_request_free(r);
    }
}

static void wait_msg(int want)
{
    while (got < want)
        ucp_worker_progress(worker);
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    size_t size = argc > 1 ? strtoul(argv[1], NULL, 0) : 16, big = 1 << 20;
    int rounds = argc > 2 ? atoi(argv[2]) : 20000, warm = rounds / 10, nbig = 256;
    int a2b[2], b2a[2];
    if (pipe(a2b) || pipe(b2a))
        return 1;
    pid_t pid = fork();
    int peer = pid == 0;
    ucp_params_t pp = { .field_mask = UCP_PARAM_FIELD_FEATURES, .features = UCP_FEATURE_AM };
    ucp_context_h ctx;
    ucp_config_t *cfg;
    ucp_config_read(NULL, NULL, &cfg);
    if (ucp_init(&pp, cfg, &ctx) != UCS_OK)
        return 1;
    ucp_config_release(cfg);
    ucp_worker_params_t wp = { .field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE, .thread_mode = UCS_THREAD_MODE_SINGLE };
    if (ucp_worker_create(ctx, &wp, &worker) != UCS_OK)
        return 1;
    ucp_address_t *addr;
    size_t alen;
    ucp_worker_get_address(worker, &addr, &alen);
    int wfd = peer ? b2a[1] : a2b[1], rfd = peer ? a2b[0] : b2a[0];
    if (write(wfd, &alen, sizeof alen) != sizeof alen || write(wfd, addr, alen) != (ssize_t)alen)
        return 1;
    size_t plen;
    if (read(rfd, &plen, sizeof plen) != sizeof plen)
        return 1;
    void *paddr = malloc(plen);
    for (size_t got_ = 0; got_ < plen;) {
        ssize_t r = read(rfd, (char *)paddr + got_, plen - got_);
        if (r <= 0)
            return 1;
        got_ += (size_t)r;
    }
    ucp_ep_params_t ep_p = { .field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS, .address = paddr };
    if (ucp_ep_create(worker, &ep_p, &ep) != UCS_OK)
        return 1;
    ucp_am_handler_param_t hp = { .field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB,
                                  .id = 1, .cb = on_am };
    ucp_worker_set_am_recv_handler(worker, &hp);
    char *sbuf = calloc(1, big + 16);
    rbuf = calloc(1, big + 16);
    size_t msg = size + 16;
    if (peer) {
        for (int i = 0; i < warm + rounds; i++) {
            wait_msg(i + 1);
            send_wait(sbuf, msg);
        }
        for (int i = 0; i < nbig; i++) {   /* 1 MiB in, a 16-byte acknowledgement back */
            wait_msg(warm + rounds + i + 1);
            send_wait(sbuf, 16);
        }
        for (int i = 0; i < 100000; i++)
            ucp_worker_progress(worker);
        _exit(0);
    }
    double *t = malloc(sizeof *t * (size_t)rounds);
    for (int i = 0; i < warm + rounds; i++) {
        double t0 = now_us();
        send_wait(sbuf, msg);
        wait_msg(i + 1);
        if (i >= warm)
            t[i - warm] = now_us() - t0;
    }
    double t0 = now_us();
    for (int i = 0; i < nbig; i++) {
        send_wait(sbuf, big + 16);
        wait_msg(warm + rounds + i + 1);
    }
    double gbs = (double)nbig * big / ((now_us() - t0) * 1e3);
    waitpid(pid, NULL, 0);
    qsort(t, (size_t)rounds, sizeof *t, cmp);
    const char *tls = getenv("UCX_TLS");
    printf("ucx(%s) %zu B: round trip median %.2f us (p10 %.2f, p90 %.2f); 1 MiB messages %.2f GB/s\n",
           tls ? tls : "default", size, t[rounds / 2], t[rounds / 10], t[rounds * 9 / 10], gbs);
    return 0;
}
