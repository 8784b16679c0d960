/*
 * tr_record.c - the recording part: each thread's buffer (tr_buf.h) found
 * through one thread-local pointer, created at the thread's first record (the
 * output opens then: tr_output.h) and ended by the host's TLS destructor;
 * threads whose calls are not recorded (the tracer's own); standalone records
 * (NVTX, GPU activity, correlations). The call hooks (tr_hooks.c, tr_query.c)
 * write into the same buffers.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "tr_kname.h"
#include "tr_output.h"
#include "tr_plan.h"
#include "tr_record.h"

#define TR_CHUNK (64u * 1024u)    /* per thread at a time: 64 MiB serve 1024 recording threads */

/* The calling thread's buffer, cached from the host's TLS slot (whose destructor ends it): one TLS
   access instead of a call into the host per recorded call. Set and cleared on its own thread only. */
__thread tr_tbuf *tr_tb_cached;

static void tr_thread_end(void *p)
{
    tr_tbuf *tb = p;
    if (tr_tb_cached == tb)   /* the destructor runs on the exiting thread */
        tr_tb_cached = NULL;
    free(tb->prod);
    tb->prod = NULL;
    tr_buf_detach(tb);
}

tr_tbuf *tr_thread_buf(void)
{
    tr_tbuf *tb = tr_tb_cached;
    if (tb != NULL)
        return tb;
    if ((tb = tr_host->tls_get(tr_st->tls_key)) != NULL)
        return tr_tb_cached = tb;
    if (!tr_output_ready(tr_st))
        return NULL;
    if ((tb = tr_buf_attach(&tr_st->bufs, tr_host->thread_id())) == NULL)
        return NULL;
    tb->alt_tid = (uint64_t)pthread_self();
    /* the name now, once a thread (16 bytes with the NUL, as the kernel keeps it): the writer may get to the
       thread's first record after the thread has ended, when /proc no longer has it */
    if (prctl(PR_GET_NAME, tb->name, 0, 0, 0) != 0)
        tb->name[0] = '\0';
    tb->name[sizeof tb->name - 1] = '\0';
    atomic_store_explicit(&tb->nopen, 0, memory_order_relaxed);   /* tr_buf_attach leaves it to us */
    if (tr_host->tls_set(tr_st->tls_key, tb) != CUSHIM_OK) {
        tr_buf_detach(tb);
        return NULL;
    }
    return tr_tb_cached = tb;
}

int tr_thread_quiet(int quiet)
{
    tr_tbuf *tb = tr_st ? tr_thread_buf() : NULL;
    int was = 0;
    if (tb != NULL) {
        was = (tb->hold & TR_HOLD_QUIET) != 0;
        tb->hold = quiet ? tb->hold | TR_HOLD_QUIET : tb->hold & ~TR_HOLD_QUIET;
    }
    return was;
}

void tr_record2(uint16_t type, uint64_t seq, uint64_t parent, uint64_t t, const void *extra, uint32_t extra_len,
                const char *text, uint32_t text_len, const char *text2, uint32_t text2_len)
{
    tr_tbuf *tb;
    tr_rec r;
    uint32_t len;
    unsigned char *p, *o;
    if (tr_st == NULL || (tb = tr_thread_buf()) == NULL)
        return;
    if (tr_buf_interrupted(&tr_st->bufs, tb))   /* a signal handler's record while its thread wrote one */
        return;
    if (text_len > TR_NAME_MAX)   /* NVTX messages render bounded, kernel names whole */
        text_len = TR_NAME_MAX;
    if (text2 == NULL || text2_len == 0)
        text2 = NULL;
    else if (text2_len > TR_NAME_MAX)
        text2_len = TR_NAME_MAX;
    len = (uint32_t)sizeof r + tr_pad8(extra_len) + (text ? (uint32_t)sizeof(tr_blob) + tr_pad8(text_len + 1) : 0) +
          (text2 ? (uint32_t)sizeof(tr_blob) + tr_pad8(text2_len + 1) : 0);
    if ((p = tr_buf_reserve(&tr_st->bufs, tb, len, tb->open * TR_EXIT_MIN)) == NULL) {
        atomic_fetch_add_explicit(&tr_st->bufs.dropped, 1, memory_order_relaxed);
        return;
    }
    memset(&r, 0, sizeof r);
    r.len = len;
    r.type = type;
    r.seq = seq;
    r.parent = parent;
    r.t = t;
    memset(p, 0, len);
    memcpy(p, &r, sizeof r);
    if (extra_len)
        memcpy(p + sizeof r, extra, extra_len);
    o = p + sizeof r + tr_pad8(extra_len);
    if (text) {
        tr_blob b = {.param = 0, .flags = 0, .len = text_len + 1, .count = text_len};
        memcpy(o, &b, sizeof b);
        memcpy(o + sizeof b, text, text_len);
        o += sizeof b + tr_pad8(text_len + 1);
    }
    if (text2) {
        tr_blob b = {.param = 1, .flags = 0, .len = text2_len + 1, .count = text2_len};
        memcpy(o, &b, sizeof b);
        memcpy(o + sizeof b, text2, text2_len);
    }
    tr_buf_commit(tb, len);
}

void tr_record(uint16_t type, uint64_t seq, uint64_t parent, uint64_t t, const void *extra, uint32_t extra_len,
               const char *text, uint32_t text_len)
{
    tr_record2(type, seq, parent, t, extra, extra_len, text, text_len, NULL, 0);
}


static int tr_recording_setup(tr_state *st, char *why, size_t cap)
{
    const cushim_host *host = tr_host;
    cushim_plugin *self = st->self;
    st->id_limit = host->api_id_limit();
    st->plans = calloc(st->id_limit, sizeof *st->plans);
    st->kernel_names = host->opt_bool(self, "kernel_names");
    tr_bufs_init(&st->bufs, TR_CHUNK, host->opt_bytes(self, "buffer"));
    if (st->bufs.limit < 4ull * TR_CHUNK)
        host->log(self, CUSHIM_LOG_WARN, "buffer=%llu bytes holds fewer than 4 chunks of %u bytes: most calls will be "
                  "dropped", (unsigned long long)st->bufs.limit, TR_CHUNK);
    tr_kernel_names_setup();
    if (st->plans == NULL || host->tls_create(self, tr_thread_end, &st->tls_key) != CUSHIM_OK) {
        snprintf(why, cap, "out of memory");
        return -1;
    }
    return 0;
}

static void tr_recording_fork_child(tr_state *st)
{
    tr_tbuf *keep;
    /* the calling thread starts afresh: its next call opens the child's own file and starts its writer */
    keep = tr_host->tls_get(st->tls_key);
    if (keep != NULL)
        tr_host->tls_set(st->tls_key, NULL);
    tr_tb_cached = NULL;   /* fork_child runs on the forking thread, the child's only one */
    /* the parent's threads are gone here: their kernel-name caches too */
    for (tr_tbuf *tb = atomic_load(&st->bufs.head); tb != NULL; tb = tb->next_tb) {
        free(tb->prod);
        tb->prod = NULL;
        atomic_store_explicit(&tb->nopen, 0, memory_order_relaxed);   /* their calls ended with them */
    }
    tr_kernel_names_fork_child();
}

const tr_part tr_part_recording = {
    .name = "recording",
    .setup = tr_recording_setup,
    .fork_child = tr_recording_fork_child,
};
