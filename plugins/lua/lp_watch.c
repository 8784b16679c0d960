/*
 * lp_watch.c - loading the policy into a new generation, reloading it, and the file watcher.
 *
 * The watcher thread polls the file every reload_ms and publishes a new generation only if it
 * compiled and validated; otherwise the error is logged with file:line.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cushim/cushim_io.h"

#include "lp_engine.h"
#include "lp_gen.h"
#include "lp_state.h"
#include "lp_watch.h"

_Atomic int lp_watch_restart;

/* The watcher thread, and the file it watches. */
static struct {
    pthread_t thread;
    int watching;
    _Atomic int stop;
    pthread_mutex_t stop_lock;
    pthread_cond_t stop_cond;
    uint64_t file_sig[4];       /* dev, ino, size, mtime ns of the file last loaded */
} lp_w = {.stop_lock = PTHREAD_MUTEX_INITIALIZER, .stop_cond = PTHREAD_COND_INITIALIZER};

/* ------------------------------------------------------------------------ */
/* Loading                                                                  */
/* ------------------------------------------------------------------------ */
static int lp_read_file(const char *path, char **text, size_t *len, uint64_t sig[4], char *err, size_t errlen)
{
    struct stat st = {0};
    /* O_NONBLOCK: a FIFO or device named by mistake must not block the loading thread */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    FILE *f = NULL;
    char *buf;
    size_t n = 0;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (f = fdopen(fd, "rb")) == NULL) {
        if (fd >= 0 && !S_ISREG(st.st_mode))
            snprintf(err, errlen, "the policy %s is not a regular file", path);
        else
            snprintf(err, errlen, "cannot open the policy %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (st.st_size > (16 << 20)) {
        snprintf(err, errlen, "the policy %s is larger than 16 MiB", path);
        fclose(f);
        return -1;
    }
    buf = malloc((size_t)st.st_size + 1);
    if (buf == NULL) {
        fclose(f);
        snprintf(err, errlen, "out of memory reading %s", path);
        return -1;
    }
    n = fread(buf, 1, (size_t)st.st_size, f);
    fclose(f);
    buf[n] = '\0';
    *text = buf;
    *len = n;
    sig[0] = (uint64_t)st.st_dev;
    sig[1] = (uint64_t)st.st_ino;
    sig[2] = (uint64_t)st.st_size;
    sig[3] = (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec;
    return 0;
}

static int lp_file_sig(const char *path, uint64_t sig[4])
{
    struct stat st;
    if (stat(path, &st) != 0)
        return -1;
    sig[0] = (uint64_t)st.st_dev;
    sig[1] = (uint64_t)st.st_ino;
    sig[2] = (uint64_t)st.st_size;
    sig[3] = (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec;
    return 0;
}

/* Reads, compiles and validates the policy: a new generation, or NULL with the
   reason (file:line first for a Lua error) in 'err'. */
lp_gen *lp_gen_load(char *err, size_t errlen)
{
    char *text;
    size_t len;
    lp_gen *g;
    lp_thread *t = NULL;
    lp_hookdef *hooks;
    uint32_t nhooks;
    if (lp_read_file(lp_eng.o.script, &text, &len, lp_w.file_sig, err, errlen) != 0)
        return NULL;
    g = lp_gen_new(text, len);   /* its reference is the validation state's, dropped by lp_thread_free */
    if (g == NULL || (t = lp_thread_new()) == NULL) {
        snprintf(err, errlen, "out of memory");
        if (g != NULL)
            lp_gen_release(g);
        else
            free(text);
        return NULL;
    }
    if (lp_state_build(t, g, 1, err, errlen) != 0) {
        const char *base = lp_script_base();
        size_t n = strlen(base);
        lp_thread_free(t);   /* frees g with the last reference */
        if (base != lp_eng.o.script && !strncmp(err, base, n) && err[n] == ':') {
            char *rest = strdup(err + n);   /* "policy.lua:2: ..." -> "/dir/policy.lua:2: ..." */
            if (rest != NULL) {
                snprintf(err, errlen, "%s%s", lp_eng.o.script, rest);
                free(rest);
            }
        }
        return NULL;
    }
    hooks = t->decl;
    nhooks = t->ndecl;
    t->decl = NULL;
    t->ndecl = t->capdecl = 0;
    lp_gen_hold(g);   /* ours until published */
    lp_thread_free(t);
    if (lp_gen_finish(g, hooks, nhooks, err, errlen) != 0) {
        lp_gen_release(g);
        return NULL;
    }
    return g;
}

void lp_reload(void)
{
    char err[2048];
    lp_gen *cur = lp_gen_current();
    lp_gen *g = lp_gen_load(err, sizeof err);
    if (g == NULL || lp_publish(g) != 0) {
        if (g != NULL)
            lp_gen_release(g);
        atomic_fetch_add_explicit(&lp_eng.failed_reloads, 1, memory_order_relaxed);
        if (g == NULL)
            lp_eng.host->log(lp_eng.self, CUSHIM_LOG_ERROR, "%s; keeping %s", err,
                             cur ? "the policy loaded before" : "no policy (calls pass)");
        return;
    }
    atomic_fetch_add_explicit(&lp_eng.reloads, 1, memory_order_relaxed);
    lp_eng.host->log(lp_eng.self, CUSHIM_LOG_INFO, "%s: generation %llu loaded (%u hooks)", lp_eng.o.script,
                     (unsigned long long)g->number, g->nhooks);
}

/* ------------------------------------------------------------------------ */
/* The watcher                                                              */
/* ------------------------------------------------------------------------ */
static void *lp_watch(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lp_w.stop_lock);
    while (!atomic_load(&lp_w.stop)) {
        struct timespec ts;
        uint64_t sig[4];
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += (long)(lp_eng.o.reload_ms % 1000) * 1000000L;
        ts.tv_sec += lp_eng.o.reload_ms / 1000 + ts.tv_nsec / 1000000000L;
        ts.tv_nsec %= 1000000000L;
        pthread_cond_timedwait(&lp_w.stop_cond, &lp_w.stop_lock, &ts);
        if (atomic_load(&lp_w.stop))
            break;
        pthread_mutex_unlock(&lp_w.stop_lock);
        if (lp_file_sig(lp_eng.o.script, sig) == 0 && memcmp(sig, lp_w.file_sig, sizeof sig) != 0)
            lp_reload();   /* records the new signature even when it fails: a broken edit is reported once */
        pthread_mutex_lock(&lp_w.stop_lock);
    }
    pthread_mutex_unlock(&lp_w.stop_lock);
    return NULL;
}

void lp_watch_start(void)
{
    pthread_attr_t a;
    if (!lp_eng.o.reload)
        return;
    atomic_store(&lp_w.stop, 0);
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, 1 << 20);
    /* the program's signals not taken (cushim_io.h) */
    if (cushim_thread_create(&lp_w.thread, &a, "cushim-lua", lp_watch, NULL) == 0)
        lp_w.watching = 1;
    else
        lp_eng.host->log(lp_eng.self, CUSHIM_LOG_WARN, "cannot start the file watcher: edits will not reload");
    pthread_attr_destroy(&a);
}

void lp_watch_stop(void)
{
    if (!lp_w.watching)
        return;
    pthread_mutex_lock(&lp_w.stop_lock);
    atomic_store(&lp_w.stop, 1);
    pthread_cond_broadcast(&lp_w.stop_cond);
    pthread_mutex_unlock(&lp_w.stop_lock);
    pthread_join(lp_w.thread, NULL);
    lp_w.watching = 0;
}

/* After fork: the watcher thread did not survive; it is started again on the first hooked call (lp_pre). */
void lp_watch_fork_child(void)
{
    pthread_mutex_init(&lp_w.stop_lock, NULL);
    pthread_cond_init(&lp_w.stop_cond, NULL);
    if (lp_w.watching) {
        lp_w.watching = 0;
        atomic_store(&lp_watch_restart, 1);
    }
}
