/*
 * trace_call_test.c - the trace plugin's CALL records (one record per fast-path
 * call, written at exit) against the ENTER/EXIT pairs they replace, through the
 * real writer (tr_writer.c) into real files: the same calls recorded both ways
 * render the same traceEvents bytes (success with an inline output, failure, a
 * NULL output pointer, a skipped call, a call over 4.29 s, a call without
 * parameters nested in a runtime call, a fast call inside a two-record call, a
 * two-record call left open inside a fast call); the per-thread open-call stack
 * (tr_plan.h) past its 16 entries, popped in order and out of order; and the
 * calls still on it when the file is finished, written as unfinished (innermost
 * first, merged with the writer's stack of ENTER records, those past 16 counted
 * in otherData), with entries that do not look whole skipped, also while
 * their thread pushes and pops (concurrency: TSan). Launches with kernel names
 * (TR_CALL_KNAME: the name in the CALL record and on the open-call stack)
 * render as the ENTER/EXIT pairs with the name in the ENTER did (named, failed,
 * skipped, unnamed, over 4.29 s, a runtime launch named by the driver launch
 * inside it, as a CALL record or as an ENTER); unfinished ones with their name. GPU records waiting for
 * their correlation: a bounded ring, each written once, oldest first.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "stats-nvtx.h"
#include "tr_plan.h"
#include "tr_wevents.h"
#include "tr_writer.h"

/* tr_plan.c's other functions read the host; these tests call only tr_plan_fast and tr_open_find. */
const cushim_host *tr_host;
tr_state *tr_st;

/* ---- hand-made APIs ---- */

typedef struct get_params { uint64_t *out; int32_t flags; int32_t pad_; } get_params;
typedef struct dev_params { int32_t dev; } dev_params;
/* a launch: the function's handle (here the kernel's name itself, so that the rig's name lookup is the key) */
typedef struct launch_params { const char *f; int32_t n; int32_t pad_; } launch_params;

#define P(st, name, type, kind, dir, esz, pointee) \
    {#name, type, type, kind, dir, offsetof(st, name), sizeof(((st *)0)->name), -1, esz, 0, pointee, 0, 0, NULL, NULL}
static const cushim_param_info get_pi[] = {
    P(get_params, out, "CUdeviceptr *", CUSHIM_KIND_POINTER, CUSHIM_DIR_OUT, 8, CUSHIM_KIND_DEVPTR),
    P(get_params, flags, "int", CUSHIM_KIND_SCALAR, CUSHIM_DIR_IN, 0, 0),
};
static const cushim_param_info dev_pi[] = {
    P(dev_params, dev, "int", CUSHIM_KIND_SCALAR, CUSHIM_DIR_IN, 0, 0),
};
static const cushim_param_info launch_pi[] = {
    P(launch_params, f, "struct CUfunc_st *", CUSHIM_KIND_HANDLE, CUSHIM_DIR_IN, 0, 0),
    P(launch_params, n, "int", CUSHIM_KIND_SCALAR, CUSHIM_DIR_IN, 0, 0),
};
#define API_GET 5
#define API_NONE 6
#define API_DEV 7
#define API_LAUNCH 3     /* a driver launch */
#define API_RTLAUNCH 4   /* a runtime launch */
static const cushim_api_info apis[] = {
    {.id = API_GET, .name = "cuGetThing", .base_name = "cuGetThing", .library = CUSHIM_LIB_DRIVER,
     .ret_kind = CUSHIM_RET_CURESULT, .params_size = sizeof(get_params), .ret_size = 4, .nparams = 2,
     .params = get_pi},
    {.id = API_NONE, .name = "cuNoArgs", .base_name = "cuNoArgs", .library = CUSHIM_LIB_DRIVER,
     .ret_kind = CUSHIM_RET_CURESULT, .params_size = 0, .ret_size = 4, .nparams = 0, .params = NULL},
    {.id = API_DEV, .name = "cudaSetThing", .base_name = "cudaSetThing", .library = CUSHIM_LIB_RUNTIME,
     .ret_kind = CUSHIM_RET_CUDAERROR, .params_size = sizeof(dev_params), .ret_size = 4, .nparams = 1,
     .params = dev_pi},
    {.id = API_LAUNCH, .name = "cuLaunchThing", .base_name = "cuLaunchThing", .library = CUSHIM_LIB_DRIVER,
     .categories = CUSHIM_CAT_LAUNCH, .ret_kind = CUSHIM_RET_CURESULT, .params_size = sizeof(launch_params),
     .ret_size = 4, .nparams = 2, .params = launch_pi},
    {.id = API_RTLAUNCH, .name = "cudaLaunchThing", .base_name = "cudaLaunchThing", .library = CUSHIM_LIB_RUNTIME,
     .categories = CUSHIM_CAT_LAUNCH, .ret_kind = CUSHIM_RET_CUDAERROR, .params_size = sizeof(launch_params),
     .ret_size = 4, .nparams = 2, .params = launch_pi},
};

static const cushim_api_info *t_api(uint32_t id)
{
    for (unsigned i = 0; i < sizeof apis / sizeof apis[0]; i++)
        if (apis[i].id == id)
            return &apis[i];
    return NULL;
}
static const cushim_param_info *t_param(const cushim_api_info *a, uint32_t i)
{
    return i < a->nparams ? &a->params[i] : NULL;
}
static const char *t_result(uint32_t kind, int32_t code)
{
    (void)kind;
    return code == 0 ? "SUCCESS" : code == 1 ? "ERROR_INVALID_VALUE" : NULL;
}

/* The plans trace.c would make: cuGetThing's one output a scalar capture (inline). */
static tr_plan *plan_of(uint32_t id)
{
    const cushim_api_info *info = t_api(id);
    tr_plan *pl = calloc(1, sizeof *pl + sizeof(tr_cap));
    assert_non_null(pl);
    if (id == API_GET) {
        tr_cap *c = &pl->caps[0];
        c->param = 0;
        c->mode = TR_CAP_ARRAY;
        c->count_param = -1;
        c->off = offsetof(get_params, out);
        c->size = sizeof(void *);
        c->elem_size = 8;
        pl->nout = 1;
    }
    if (id == API_LAUNCH || id == API_RTLAUNCH) {   /* kernel names on: the name in the CALL record */
        pl->launch = id == API_LAUNCH ? TR_LAUNCH_FUNC : TR_LAUNCH_STUB;
        pl->fparam_off = offsetof(launch_params, f);
        tr_plan_fast(pl, info, 1);
        assert_int_equal(pl->call, TR_CALL_KNAME);
        return pl;
    }
    tr_plan_fast(pl, info, 0);
    assert_true(pl->call);
    return pl;
}

/* ---- recording, both ways ---- */

typedef struct rig {
    tr_bufs bufs;
    tr_tbuf *tb;
    tr_plan *plans[8];
    int calls;   /* 1: fast calls as CALL records, 0: as ENTER/EXIT pairs (the plugin before) */
} rig;

static void rig_init(rig *r, int calls)
{
    memset(r, 0, sizeof *r);
    tr_bufs_init(&r->bufs, 64 * 1024, 1u << 24);
    r->tb = tr_buf_attach(&r->bufs, 4242);
    assert_non_null(r->tb);
    atomic_store(&r->tb->nopen, 0);
    r->plans[API_GET] = plan_of(API_GET);
    r->plans[API_NONE] = plan_of(API_NONE);
    r->plans[API_DEV] = plan_of(API_DEV);
    r->plans[API_LAUNCH] = plan_of(API_LAUNCH);
    r->plans[API_RTLAUNCH] = plan_of(API_RTLAUNCH);
    r->calls = calls;
}

static void rig_free(rig *r)
{
    for (unsigned i = 0; i < 8; i++)
        free(r->plans[i]);
    tr_bufs_destroy(&r->bufs);
}

/* A launch's kernel name as trace.c's tr_enter_aux finds it: here the function's handle is the name. */
static uint64_t launch_name(const rig *r, const cushim_call *c)
{
    const tr_plan *pl = r->plans[c->api_id];
    if (!pl->launch)
        return 0;
    return tr_rd_uint((const unsigned char *)c->params + pl->fparam_off, sizeof(void *));
}

/* An ENTER as trace.c's pre hooks write it (also the two-record calls' here): a launch's with its kernel name
   (tr_pre_plain, the plugin before). */
static void put_enter(rig *r, const cushim_call *c)
{
    const tr_plan *pl = r->plans[c->api_id];
    unsigned char *p = tr_buf_reserve(&r->bufs, r->tb, pl->enter_len, (r->tb->open + 1) * TR_EXIT_MIN);
    uint64_t name = launch_name(r, c);
    assert_non_null(p);
    if (name != 0 && c->parent != NULL)   /* tr_enter_aux */
        tr_open_kname_up(r->tb, c, name, r->plans, 8);
    tr_put_enter(p, c, pl->enter_len, c->t_enter_ns, name);
    tr_copy_params(p + sizeof(tr_rec), c->params, pl->params_size);
    tr_buf_commit(r->tb, pl->enter_len);
    r->tb->open++;
}

/* An EXIT as trace.c's fast post hook writes it. */
static void put_exit(rig *r, const cushim_call *c, uint64_t t)
{
    const tr_plan *pl = r->plans[c->api_id];
    unsigned char *p, *o;
    uint16_t flags = (c->flags & CUSHIM_CALL_SKIPPED) ? TR_F_SKIPPED : 0;
    uint64_t aux = tr_scalar_word(c->retval, 4);
    r->tb->open--;
    p = tr_buf_reserve(&r->bufs, r->tb, pl->exit_max, r->tb->open * TR_EXIT_MIN);
    assert_non_null(p);
    o = p + sizeof(tr_exit);
    if (cushim_call_result(c) == 0 && pl->nout != 0)
        o = tr_cap_inline(&pl->caps[pl->nin], c->params, o, &flags);
    tr_put_exit(p, c, (uint32_t)(o - p), flags, t, aux);
    tr_buf_commit(r->tb, (uint32_t)(o - p));
}

/* A fast call's pre hook (tr_hooks.c tr_pre_as, tr_pre_enter): a launch's with its kernel name looked up, given to
   the enclosing launch on the open-call stack when that has none (tr_enter_aux). */
static void call_pre(rig *r, const cushim_call *c)
{
    uint64_t name = launch_name(r, c);
    if (!r->calls) {
        put_enter(r, c);
        return;
    }
    if (name != 0 && c->parent != NULL)
        tr_open_kname_up(r->tb, c, name, r->plans, 8);
    tr_open_push(r->tb, c, c->t_enter_ns, name);
}

/* The CALL record as trace.c's tr_post_call writes it. */
static void call_post(rig *r, const cushim_call *c, uint64_t t)
{
    const tr_plan *pl = r->plans[c->api_id];
    uint64_t t0 = 0, kn = 0;
    unsigned char *p;
    if (!r->calls) {
        put_exit(r, c, t);
        return;
    }
    assert_true(tr_open_pop(r->tb, c, c->t_enter_ns, t, &t0, &kn));
    assert_int_equal(t0, c->t_enter_ns);
    p = tr_buf_reserve(&r->bufs, r->tb, pl->call_max, r->tb->open * TR_EXIT_MIN);
    assert_non_null(p);
    tr_buf_commit(r->tb, tr_call_write(p, pl, c, t0, t, kn));
}

typedef struct frame {
    cushim_call c;
    union { get_params g; dev_params d; launch_params l; } p;
    int32_t ret;
} frame;

static void frame_init(frame *f, uint32_t api, uint64_t seq, uint64_t t0, const frame *parent)
{
    memset(f, 0, sizeof *f);
    f->c.api_id = api;
    f->c.info = t_api(api);
    f->c.params = &f->p;
    f->c.retval = &f->ret;
    f->c.seq = seq;
    f->c.t_enter_ns = t0;
    f->c.parent = parent ? &parent->c : NULL;
    f->c.depth = parent ? parent->c.depth + 1 : 0;
}

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    char *b;
    long len;
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    len = ftell(f);
    fseek(f, 0, SEEK_SET);
    b = calloc(1, (size_t)len + 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    *n = (size_t)len;
    return b;
}

/* 'needle' in [at, end), or NULL. A plain loop: the sanitizers' strstr and memmem interceptors check the whole
   rest of the text on every call, which made a search loop over a 13 MB file take minutes under TSan. */
static char *find_in(const char *at, const char *end, const char *needle)
{
    size_t m = strlen(needle);
    for (; at != NULL && at < end && (size_t)(end - at) >= m; at++)
        if (at[0] == needle[0] && memcmp(at, needle, m) == 0)
            return (char *)(uintptr_t)at;
    return NULL;
}

/* A writer over the rig's buffer into a file named with 'tag' (path[] holds its name), opened. */
static void writer_open(tr_writer *w, rig *r, char *path, size_t cap, const char *tag)
{
    memset(w, 0, sizeof *w);
    snprintf(path, cap, "%s/trace_call_test.%d.%s.json", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
             (int)getpid(), tag);
    w->bufs = &r->bufs;
    w->meta.api_param = t_param;
    w->meta.result_name = t_result;
    w->meta.sizeof_param_info = sizeof(cushim_param_info);
    w->api_by_id = t_api;
    w->pid = 77;
    w->fd = -1;
    w->path = path;
    assert_int_equal(tw_open(w), 0);
}

/* Drains the rig's buffer into a file through the writer and finishes it; returns the file's text. */
static char *write_file(rig *r, const char *tag)
{
    tr_writer w;
    char path[256];
    size_t n;
    char *text;
    writer_open(&w, r, path, sizeof path, tag);
    w.flow_categories = CUSHIM_CAT_LAUNCH | CUSHIM_CAT_COPY | CUSHIM_CAT_SET;   /* read while draining */
    tw_drain_all(&w);
    tw_finish(&w);
    tw_free(&w);
    text = slurp(path, &n);
    unlink(path);
    return text;
}

/* The same calls, recorded one way or the other. */
static void workload(rig *r)
{
    static uint64_t thing = 0xabcdef12345ull;
    frame a, b, c;
    /* success: the output inline */
    frame_init(&a, API_GET, 1, 1000, NULL);
    a.p.g.out = &thing;
    a.p.g.flags = 3;
    call_pre(r, &a.c);
    call_post(r, &a.c, 1500);
    /* failure: the output not written */
    frame_init(&a, API_GET, 2, 2000, NULL);
    a.p.g.out = &thing;
    a.ret = 1;
    call_pre(r, &a.c);
    call_post(r, &a.c, 2250);
    /* a NULL output pointer; an unknown result code */
    frame_init(&a, API_GET, 3, 3000, NULL);
    a.ret = 999;
    call_pre(r, &a.c);
    call_post(r, &a.c, 3001);
    /* skipped by another plugin's pre hook */
    frame_init(&a, API_GET, 4, 4000, NULL);
    a.p.g.out = &thing;
    a.c.flags = CUSHIM_CALL_SKIPPED;
    call_pre(r, &a.c);
    call_post(r, &a.c, 4100);
    /* over 2^32 ns */
    frame_init(&a, API_GET, 5, 5000000000ull, NULL);
    a.p.g.out = &thing;
    call_pre(r, &a.c);
    call_post(r, &a.c, 5000000000ull + 7000000000ull);
    /* a runtime call and a call without parameters inside it */
    frame_init(&a, API_DEV, 10, 10000, NULL);
    a.p.d.dev = 2;
    frame_init(&b, API_NONE, 11, 10100, &a);
    call_pre(r, &a.c);
    call_pre(r, &b.c);
    call_post(r, &b.c, 10200);
    call_post(r, &a.c, 10300);
    /* a fast call inside a two-record call (an ENTER/EXIT pair either way) */
    frame_init(&a, API_GET, 20, 20000, NULL);
    a.p.g.out = &thing;
    frame_init(&b, API_DEV, 21, 20100, &a);
    put_enter(r, &a.c);
    call_pre(r, &b.c);
    call_post(r, &b.c, 20200);
    put_exit(r, &a.c, 20300);
    /* a two-record call whose exit never came, inside a fast call: closed as unfinished by the fast call's end */
    frame_init(&a, API_DEV, 30, 30000, NULL);
    frame_init(&c, API_GET, 31, 30100, &a);
    call_pre(r, &a.c);
    put_enter(r, &c.c);
    r->tb->open--;   /* its exit is lost */
    call_post(r, &a.c, 30500);
}

/* 'workload' recorded as ENTER/EXIT pairs (rig 'pair') and as CALL records (rig 'call'), each written to a file
   ('tag' "pair" and "call" after 'prefix'): *a and *b their text cut before "displayTimeUnit" (the traceEvents),
   *ea and *eb where it was cut (the rest of each file follows). */
static void record_both(rig *pair, rig *call, void (*workload_fn)(rig *), const char *prefix, char **a, char **b,
                        char **ea, char **eb)
{
    char tag[32];
    rig_init(pair, 0);
    rig_init(call, 1);
    workload_fn(pair);
    workload_fn(call);
    snprintf(tag, sizeof tag, "%spair", prefix);
    *a = write_file(pair, tag);
    snprintf(tag, sizeof tag, "%scall", prefix);
    *b = write_file(call, tag);
    *ea = strstr(*a, "\n],\"displayTimeUnit\"");
    *eb = strstr(*b, "\n],\"displayTimeUnit\"");
    assert_non_null(*ea);
    assert_non_null(*eb);
    **ea = **eb = '\0';
}

static void call_renders_as_pair(void **state)
{
    rig pair, call;
    char *a, *b, *ea, *eb;
    (void)state;
    record_both(&pair, &call, workload, "", &a, &b, &ea, &eb);
    /* what the workload is meant to cover is there (so that equal outputs are not equally empty) */
    assert_non_null(strstr(a, "\"out\":\"0xabcdef12345\""));
    assert_non_null(strstr(a, "(not written: the call failed)"));
    assert_non_null(strstr(a, "\"result\":999"));
    assert_non_null(strstr(a, "\"skipped\":true"));
    assert_non_null(strstr(a, "\"dur\":7000000.000"));
    assert_non_null(strstr(a, "\"cat\":\"cuda_runtime\",\"name\":\"cudaSetThing\""));
    assert_non_null(strstr(a, "\"name\":\"cuNoArgs\""));
    assert_non_null(strstr(a, "\"parent\":10,"));
    assert_non_null(strstr(a, "\"cat\":\"cuda_api_unfinished\",\"name\":\"cuGetThing\""));
    assert_string_equal(a, b);
    /* and fewer record bytes */
    {
        unsigned long long ra = 0, rb = 0;
        const char *pa = strstr(ea + 1, "\"record_bytes\":"), *pb = strstr(eb + 1, "\"record_bytes\":");
        assert_non_null(pa);
        assert_non_null(pb);
        assert_int_equal(sscanf(pa, "\"record_bytes\":%llu", &ra), 1);
        assert_int_equal(sscanf(pb, "\"record_bytes\":%llu", &rb), 1);
        assert_true(rb < ra);
    }
    free(a);
    free(b);
    rig_free(&pair);
    rig_free(&call);
}

/* Launches, recorded one way or the other: the kernel's name in the CALL record against the ENTER's aux. */
static int count_of(const char *s, const char *what);

static void launch_workload(rig *r)
{
    static const char k_vecadd[] = "vecadd", k_inner[] = "inner \"quoted\" kernel", k_long[] = "long_k";
    frame a, b;
    /* a driver launch with its kernel's name */
    frame_init(&a, API_LAUNCH, 1, 1000, NULL);
    a.p.l.f = k_vecadd;
    a.p.l.n = 3;
    call_pre(r, &a.c);
    call_post(r, &a.c, 1500);
    /* failed */
    frame_init(&a, API_LAUNCH, 2, 2000, NULL);
    a.p.l.f = k_vecadd;
    a.ret = 1;
    call_pre(r, &a.c);
    call_post(r, &a.c, 2250);
    /* skipped by another plugin's pre hook */
    frame_init(&a, API_LAUNCH, 3, 3000, NULL);
    a.p.l.f = k_vecadd;
    a.c.flags = CUSHIM_CALL_SKIPPED;
    call_pre(r, &a.c);
    call_post(r, &a.c, 3100);
    /* no name (the lookup found none) */
    frame_init(&a, API_LAUNCH, 4, 4000, NULL);
    a.p.l.n = 4;
    call_pre(r, &a.c);
    call_post(r, &a.c, 4100);
    /* over 2^32 ns: the name's word, then the exit time's */
    frame_init(&a, API_LAUNCH, 5, 5000000000ull, NULL);
    a.p.l.f = k_long;
    call_pre(r, &a.c);
    call_post(r, &a.c, 5000000000ull + 7000000000ull);
    /* a runtime launch without a name of its own: the driver launch inside it names it */
    frame_init(&a, API_RTLAUNCH, 10, 10000, NULL);
    frame_init(&b, API_LAUNCH, 11, 10100, &a);
    b.p.l.f = k_inner;
    call_pre(r, &a.c);
    call_pre(r, &b.c);
    call_post(r, &b.c, 10200);
    call_post(r, &a.c, 10300);
    /* one with its own name keeps it */
    frame_init(&a, API_RTLAUNCH, 20, 20000, NULL);
    a.p.l.f = k_vecadd;
    frame_init(&b, API_LAUNCH, 21, 20100, &a);
    b.p.l.f = k_inner;
    call_pre(r, &a.c);
    call_pre(r, &b.c);
    call_post(r, &b.c, 20200);
    call_post(r, &a.c, 20300);
    /* an unnamed runtime launch with two records either way (as with an input capture), a launch inside it: the
       writer names the ENTER on its stack from the inner one's CALL record */
    frame_init(&a, API_RTLAUNCH, 30, 30000, NULL);
    frame_init(&b, API_LAUNCH, 31, 30100, &a);
    b.p.l.f = k_inner;
    put_enter(r, &a.c);
    call_pre(r, &b.c);
    call_post(r, &b.c, 30200);
    put_exit(r, &a.c, 30300);
}

static void launch_renders_as_pair(void **state)
{
    rig pair, call;
    char *a, *b, *ea, *eb;
    (void)state;
    record_both(&pair, &call, launch_workload, "l", &a, &b, &ea, &eb);
    /* what the workload is meant to cover is there */
    assert_int_equal(count_of(a, "\"ph\":\"X\""), 11);
    assert_non_null(strstr(a, "\"n\":3,\"kernel\":\"vecadd\",\"result\":\"SUCCESS\"}}"));
    assert_non_null(strstr(a, "\"kernel\":\"vecadd\",\"result\":\"ERROR_INVALID_VALUE\"}}"));
    assert_non_null(strstr(a, "\"kernel\":\"vecadd\",\"result\":\"SUCCESS\",\"skipped\":true}}"));
    assert_non_null(strstr(a, "\"n\":4,\"result\":\"SUCCESS\"}}"));
    assert_non_null(strstr(a, "\"dur\":7000000.000"));
    assert_non_null(strstr(a, "\"kernel\":\"long_k\""));
    assert_int_equal(count_of(a, "\"kernel\":\"inner \\\"quoted\\\" kernel\""), 5);   /* 11, 10, 21, 31, 30 */
    assert_non_null(strstr(a, "\"name\":\"cudaLaunchThing\",\"pid\":77,\"tid\":4242,\"ts\":10.000,\"dur\":0.300,"
                              "\"args\":{\"seq\":10,\"depth\":0,\"f\":\"0x0\",\"n\":0,\"kernel\":\"inner "));
    assert_non_null(strstr(a, "\"seq\":20,\"depth\":0,\"f\":\"0x"));
    assert_string_equal(a, b);
    free(a);
    free(b);
    rig_free(&pair);
    rig_free(&call);
}

/* A launch's CALL record: the name's word after the params, flag TR_F_KNAME; neither without a name. */
static void launch_record_bytes(void **state)
{
    static const char k[] = "k";
    rig r;
    frame a;
    unsigned char *p;
    uint64_t w;
    tr_call h;
    (void)state;
    rig_init(&r, 1);
    frame_init(&a, API_LAUNCH, 1, 1000, NULL);
    a.p.l.f = k;
    p = tr_buf_reserve(&r.bufs, r.tb, r.plans[API_LAUNCH]->call_max, 0);
    assert_non_null(p);
    assert_int_equal(r.plans[API_LAUNCH]->call_max, sizeof(tr_call) + sizeof(launch_params) + 8 + 8);
    assert_int_equal(tr_call_write(p, r.plans[API_LAUNCH], &a.c, 1000, 1234, (uint64_t)(uintptr_t)k),
                     sizeof(tr_call) + sizeof(launch_params) + 8);
    memcpy(&h, p, sizeof h);
    assert_int_equal(h.flags, TR_F_KNAME);
    memcpy(&w, p + sizeof h + sizeof(launch_params), sizeof w);
    assert_ptr_equal((const char *)(uintptr_t)w, k);
    /* no name: no word, no flag (an ENTER's aux of 0 says nothing either) */
    assert_int_equal(tr_call_write(p, r.plans[API_LAUNCH], &a.c, 1000, 1234, 0),
                     sizeof(tr_call) + sizeof(launch_params));
    memcpy(&h, p, sizeof h);
    assert_int_equal(h.flags, 0);
    rig_free(&r);
}

/* Launches in flight when the file is finished: written from the open-call stack with their kernel's name (the
   runtime launch's learnt from the driver launch inside it). */
static void unfinished_launch_named(void **state)
{
    static const char k[] = "pending_k";
    rig r;
    frame a, b;
    char *text;
    (void)state;
    rig_init(&r, 1);
    frame_init(&a, API_RTLAUNCH, 40, 5000, NULL);
    frame_init(&b, API_LAUNCH, 41, 5100, &a);
    b.p.l.f = k;
    call_pre(&r, &a.c);
    call_pre(&r, &b.c);
    text = write_file(&r, "lopen");
    assert_non_null(strstr(text, "{\"ph\":\"X\",\"cat\":\"cuda_api_unfinished\",\"name\":\"cuLaunchThing\","
                                 "\"pid\":77,\"tid\":4242,\"ts\":5.100,\"dur\":0.000,\"args\":{\"seq\":41,"
                                 "\"depth\":1,\"parent\":40,\"args_unrecorded\":true,\"kernel\":\"pending_k\","
                                 "\"unfinished\":true}}"));
    assert_non_null(strstr(text, "\"name\":\"cudaLaunchThing\",\"pid\":77,\"tid\":4242,\"ts\":5.000,\"dur\":0.100,"
                                 "\"args\":{\"seq\":40,\"depth\":0,\"args_unrecorded\":true,\"kernel\":\"pending_k\","
                                 "\"unfinished\":true}}"));
    assert_int_equal(count_of(text, "\"ph\":\"X\""), 2);
    free(text);
    rig_free(&r);
}

/* A cuCtxGetCurrent-like call (8-byte params, one 8-byte output) is one 64-byte record. */
static void call_record_bytes(void **state)
{
    static uint64_t thing = 7;
    rig r;
    frame a;
    unsigned char *p;
    uint32_t len;
    tr_call h;
    (void)state;
    rig_init(&r, 1);
    frame_init(&a, API_GET, 1, 1000, NULL);
    a.p.g.out = &thing;
    p = tr_buf_reserve(&r.bufs, r.tb, r.plans[API_GET]->call_max, 0);
    assert_non_null(p);
    len = tr_call_write(p, r.plans[API_GET], &a.c, 1000, 1234, 0);
    assert_int_equal(len, sizeof(tr_call) + sizeof(get_params) + 8);
    memcpy(&h, p, sizeof h);
    assert_int_equal(h.type, TR_REC_CALL);
    assert_int_equal(h.dur, 234);
    assert_int_equal(h.flags, r.plans[API_GET]->caps[0].inl);
    /* 16 bytes of params here; cuCtxGetCurrent's are 8: 48 + 8 + 8 */
    assert_int_equal(sizeof(tr_call) + 8 + 8, 64);
    rig_free(&r);
}

/* A read-only query's record (tr_query_write, the query hook's) holds tr_call_write's bytes, every byte written
   the same, in each case it takes or hands over: an output kept or not (a failed call, a NULL pointer, an API
   whose result is no status, each output size), no output, no params, params of 4 bytes, a skipped call, a
   duration past 32 bits or negative. */
static void query_record_same(void **state)
{
    static const uint32_t sizes[] = {8, 4, 2, 1};
    static const uint32_t kinds[] = {CUSHIM_RET_CURESULT, CUSHIM_RET_OTHER};
    static const uint32_t ids[] = {API_GET, API_NONE, API_DEV};
    static uint64_t thing = 0x1122334455667788ull;
    static const struct { int32_t ret; int null_out, skipped; uint64_t t0, t; } cases[] = {
        {0, 0, 0, 1000, 1234},        {1, 0, 0, 1000, 1234}, {0, 1, 0, 1000, 1234},
        {0, 0, 1, 1000, 1234},        {1, 0, 1, 1000, 1234}, {0, 0, 0, 1000, 1000 + 0xffffffffull},
        {0, 0, 0, 1000, 1000 + (1ull << 40)}, {0, 0, 0, 5000, 1000}, {0, 0, 0, 1000, 1000 + 0xfffffffeull},
    };
    unsigned checked = 0, with_word = 0;
    (void)state;
    for (unsigned k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        for (unsigned a = 0; a < sizeof ids / sizeof ids[0]; a++)
            for (unsigned z = 0; z < (ids[a] == API_GET ? 4u : 1u); z++)
                for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
                    cushim_api_info info = *t_api(ids[a]);
                    tr_plan *pl = calloc(1, sizeof *pl + sizeof(tr_cap));
                    unsigned char x[128], y[128];
                    uint32_t lx, ly;
                    frame parent, f;
                    assert_non_null(pl);
                    info.ret_kind = kinds[k];
                    info.categories = CUSHIM_CAT_QUERY;
                    if (ids[a] == API_GET) {
                        tr_cap *c = &pl->caps[0];
                        c->mode = TR_CAP_ARRAY;
                        c->count_param = -1;
                        c->off = offsetof(get_params, out);
                        c->size = sizeof(void *);
                        c->elem_size = sizes[z];
                        pl->nout = 1;
                    }
                    tr_plan_fast(pl, &info, 0);
                    assert_true(pl->post_only);
                    frame_init(&parent, API_NONE, 3, 900, NULL);
                    frame_init(&f, ids[a], 4, cases[i].t0, i & 1 ? &parent : NULL);
                    f.c.info = &info;
                    f.ret = cases[i].ret;
                    if (ids[a] == API_GET) {
                        f.p.g.out = cases[i].null_out ? NULL : &thing;
                        f.p.g.flags = 77;
                    } else if (ids[a] == API_DEV) {
                        f.p.d.dev = 5;
                    }
                    f.c.flags = cases[i].skipped ? CUSHIM_CALL_SKIPPED : 0;
                    memset(x, 0xab, sizeof x);
                    memset(y, 0xab, sizeof y);
                    lx = tr_call_write(x, pl, &f.c, cases[i].t0, cases[i].t, 0);
                    ly = tr_query_write(y, pl, &f.c, cases[i].t0, cases[i].t);
                    assert_int_equal(lx, ly);
                    assert_true(lx <= pl->call_max);
                    assert_memory_equal(x, y, sizeof x);
                    with_word += ids[a] == API_GET && lx > pl->q_len + (cases[i].t - cases[i].t0 >= UINT32_MAX ? 8u : 0u);
                    checked++;
                    free(pl);
                }
    assert_int_equal(checked, 2 * (4 + 1 + 1) * (sizeof cases / sizeof cases[0]));
    assert_true(with_word > 0);   /* the output word's cases ran too */
}

/* Past TR_OPEN_MAX the calls are only counted; popped in order, every entry's call comes back; a pop lower
   down drops the entries above; a pop on an empty stack writes nothing. */
static void open_stack_overflow(void **state)
{
    rig r;
    frame f[24];
    uint64_t t0 = 0, kn = 0;
    (void)state;
    rig_init(&r, 1);
    for (int i = 0; i < 24; i++) {
        frame_init(&f[i], API_GET, 100 + (uint64_t)i, 1000 + (uint64_t)i, i ? &f[i - 1] : NULL);
        tr_open_push(r.tb, &f[i].c, f[i].c.t_enter_ns, 0);
        assert_int_equal(atomic_load(&r.tb->nopen), (uint32_t)i + 1);
    }
    for (int i = 0; i < TR_OPEN_MAX; i++) {
        assert_int_equal(atomic_load(&r.tb->opens[i].seq), 100 + (uint64_t)i);
        assert_int_equal(atomic_load(&r.tb->opens[i].id_depth), API_GET | (uint64_t)i << 32);
    }
    for (int i = 23; i >= 0; i--) {
        t0 = 0;
        f[i].c.t_enter_ns = i == 3 ? 0 : f[i].c.t_enter_ns;   /* no frame time: the stack's */
        assert_true(tr_open_pop(r.tb, &f[i].c, f[i].c.t_enter_ns, 99999, &t0, &kn));
        assert_int_equal(t0, 1000 + (uint64_t)i);
        assert_int_equal(atomic_load(&r.tb->nopen), (uint32_t)i);
        if (i < TR_OPEN_MAX)   /* the entries below untouched */
            for (int k = 0; k < i; k++)
                assert_int_equal(atomic_load(&r.tb->opens[k].seq), 100 + (uint64_t)k);
    }
    assert_false(tr_open_pop(r.tb, &f[0].c, f[0].c.t_enter_ns, 99999, &t0, &kn));   /* nothing open: not written */
    /* out of order: the second call's post comes while two calls above it are still on the stack */
    for (int i = 0; i < 4; i++)
        tr_open_push(r.tb, &f[i].c, 1000 + (uint64_t)i, 0);
    assert_true(tr_open_pop(r.tb, &f[1].c, f[1].c.t_enter_ns, 99999, &t0, &kn));
    assert_int_equal(atomic_load(&r.tb->nopen), 1);
    assert_true(tr_open_pop(r.tb, &f[0].c, f[0].c.t_enter_ns, 99999, &t0, &kn));
    assert_int_equal(atomic_load(&r.tb->nopen), 0);
    rig_free(&r);
}

static int count_of(const char *s, const char *what)
{
    int n = 0;
    for (const char *p = strstr(s, what); p != NULL; p = strstr(p + 1, what))
        n++;
    return n;
}

/* Calls in flight when the file is finished: the open stack's (innermost first, without args), merged with a
   two-record call's ENTER on the writer's stack by seq; those past 16 counted in otherData. */
static void unfinished_from_open_stack(void **state)
{
    rig r;
    frame f[22];
    char *text;
    const char *p;
    uint64_t seqs[32];
    int n = 0;
    (void)state;
    rig_init(&r, 1);
    frame_init(&f[0], API_GET, 100, 5000, NULL);
    tr_open_push(r.tb, &f[0].c, 5000, 0);
    frame_init(&f[1], API_GET, 101, 5100, &f[0]);   /* a two-record call */
    f[1].p.g.flags = 9;
    put_enter(&r, &f[1].c);
    for (int i = 2; i < 22; i++) {   /* 20 more fast calls: 15 fit the stack, 5 are only counted */
        frame_init(&f[i], i % 2 ? API_NONE : API_GET, 100 + (uint64_t)i, 5000 + 100 * (uint64_t)i, &f[i - 1]);
        tr_open_push(r.tb, &f[i].c, f[i].c.t_enter_ns, 0);
    }
    assert_int_equal(atomic_load(&r.tb->nopen), 21);
    text = write_file(&r, "open");
    for (p = strstr(text, "cuda_api_unfinished"); p != NULL; p = strstr(p + 1, "cuda_api_unfinished")) {
        unsigned long long s = 0;
        const char *q = strstr(p, "\"seq\":");
        assert_non_null(q);
        assert_int_equal(sscanf(q, "\"seq\":%llu", &s), 1);
        assert_true(n < 32);
        seqs[n++] = s;
    }
    assert_int_equal(n, 17);
    for (int i = 0; i < 15; i++)
        assert_int_equal(seqs[i], 116 - (uint64_t)i);
    assert_int_equal(seqs[15], 101);
    assert_int_equal(seqs[16], 100);
    /* the fast calls with parameters say their args are unrecorded; the ENTER's call has them */
    assert_int_equal(count_of(text, "\"args_unrecorded\":true"), 9);   /* seq 100, 102, 104, ..., 116 */
    assert_non_null(strstr(text, "\"seq\":101,\"depth\":1,\"parent\":100,\"out\":null,\"flags\":9,\"unfinished\":true"));
    assert_non_null(strstr(text, "\"seq\":100,\"depth\":0,\"args_unrecorded\":true,\"unfinished\":true}}"));
    assert_non_null(strstr(text, "\"name\":\"cuNoArgs\",\"pid\":77,\"tid\":4242,\"ts\":6.500,\"dur\":0.100,"
                                 "\"args\":{\"seq\":115,\"depth\":15,\"parent\":114,\"unfinished\":true}}"));
    assert_non_null(strstr(text, "\"unfinished_unwritten\":5"));
    /* unfinished calls end at the latest time seen: the innermost written call's entry */
    assert_non_null(strstr(text, "\"ts\":5.000,\"dur\":1.600,\"args\":{\"seq\":100,"));
    assert_int_equal(count_of(text, "\"ph\":\"X\""), 17);
    free(text);
    rig_free(&r);
}

/* Entries that do not look whole (a thread caught mid-push, stale words) are skipped, never trusted. */
static void open_read_validates(void **state)
{
    rig r;
    tr_writer w;
    tr_open_copy out[TR_OPEN_MAX];
    uint64_t beyond = 0;
    static const struct { uint64_t seq, t, id; } e[] = {
        {5, 100, API_GET}, {6, 110, 999}, {7, 0, API_GET}, {0, 120, API_GET}, {4, 130, API_GET}, {9, 140, API_DEV},
    };
    (void)state;
    rig_init(&r, 1);
    memset(&w, 0, sizeof w);
    w.api_by_id = t_api;
    for (unsigned i = 0; i < sizeof e / sizeof e[0]; i++) {
        atomic_store(&r.tb->opens[i].seq, e[i].seq);
        atomic_store(&r.tb->opens[i].t, e[i].t);
        atomic_store(&r.tb->opens[i].id_depth, e[i].id);
    }
    atomic_store(&r.tb->nopen, 6);
    assert_int_equal(tw_open_read(&w, r.tb, out, &beyond), 2);   /* unknown api, no time, no seq, seq going back */
    assert_int_equal(out[0].seq, 5);
    assert_int_equal(out[1].seq, 9);
    assert_int_equal(out[1].api_id, API_DEV);
    assert_int_equal(beyond, 0);
    atomic_store(&r.tb->nopen, 1000);   /* a count past the stack: only its 16 entries are read */
    assert_int_equal(tw_open_read(&w, r.tb, out, &beyond), 2);
    assert_int_equal(beyond, 1000 - TR_OPEN_MAX);
    rig_free(&r);
}

/* The writer reading a running thread's stack (a flush at exit, a fatal signal) while it pushes and pops: no
   crash, no data race (TSan: the stack's words are atomics), and only entries that look whole come back. */
static atomic_int op_stop, op_done;

/* The CUPTI correlation map is bounded: two generations of TW_CORR_KEEP ids; the older are forgotten. */
static void corr_bounded(void **state)
{
    tr_writer *w = calloc(1, sizeof *w);
    uint64_t v = 0;
    (void)state;
    assert_non_null(w);
    for (uint64_t k = 1; k <= TW_CORR_KEEP + 100; k++)
        assert_int_equal(tw_corr_put(w, k, k * 2), 0);
    assert_true(tw_corr_get(w, 1, &v) && v == 2);                        /* in the generation before */
    assert_true(tw_corr_get(w, TW_CORR_KEEP + 100, &v) && v == 2 * (TW_CORR_KEEP + 100));
    assert_int_equal(w->corr.n, 100);
    for (uint64_t k = TW_CORR_KEEP + 101; k <= 2 * (uint64_t)TW_CORR_KEEP + 200; k++)
        assert_int_equal(tw_corr_put(w, k, k * 2), 0);
    assert_false(tw_corr_get(w, 1, &v));                                 /* two generations ago: forgotten */
    assert_true(tw_corr_get(w, TW_CORR_KEEP + 150, &v) && v == 2 * (TW_CORR_KEEP + 150));
    assert_true(w->corr.cap <= 2 * (uint64_t)TW_CORR_KEEP && w->corr_old.cap <= 2 * (uint64_t)TW_CORR_KEEP);
    tw_map_free(&w->corr);
    tw_map_free(&w->corr_old);
    free(w);
}

static void *op_producer(void *arg)
{
    tr_tbuf *tb = arg;
    frame f[24];
    uint64_t seq = 1, t0, kn;
    for (int round = 0; !atomic_load(&op_stop) && round < 200000; round++) {
        int depth = 1 + round % 21;
        for (int i = 0; i < depth; i++) {
            frame_init(&f[i], i % 2 ? API_NONE : API_GET, seq, seq * 10, i ? &f[i - 1] : NULL);
            seq++;
            tr_open_push(tb, &f[i].c, f[i].c.t_enter_ns, 0);
        }
        for (int i = depth - 1; i >= 0; i--)
            if (!tr_open_pop(tb, &f[i].c, f[i].c.t_enter_ns, 0, &t0, &kn)) {
                atomic_store(&op_done, 1);
                return (void *)1;
            }
    }
    atomic_store(&op_done, 1);
    return NULL;
}

static void open_read_while_running(void **state)
{
    rig r;
    tr_writer w;
    tr_open_copy out[TR_OPEN_MAX];
    pthread_t th;
    void *bad = NULL;
    uint64_t beyond, seen = 0;
    (void)state;
    rig_init(&r, 1);
    memset(&w, 0, sizeof w);
    w.api_by_id = t_api;
    atomic_store(&op_stop, 0);
    atomic_store(&op_done, 0);
    assert_int_equal(pthread_create(&th, NULL, op_producer, r.tb), 0);
    while (seen < 200000 && !atomic_load(&op_done)) {   /* until enough entries were read, or the producer ended */
        uint32_t n = tw_open_read(&w, r.tb, out, &beyond);
        assert_true(n <= TR_OPEN_MAX);
        for (uint32_t i = 0; i < n; i++) {
            assert_true(out[i].api_id == API_GET || out[i].api_id == API_NONE);
            assert_true(out[i].seq != 0 && out[i].t != 0);
            assert_true(out[i].depth < 21);
            if (i > 0)
                assert_true(out[i].seq > out[i - 1].seq);
        }
        seen += n;
    }
    atomic_store(&op_stop, 1);
    assert_int_equal(pthread_join(th, &bad), 0);
    assert_null(bad);   /* every pop found its call */
    assert_int_equal(atomic_load(&r.tb->nopen), 0);
    assert_true(seen > 0);
    rig_free(&r);
}

/* GPU records whose correlation never came wait in a ring of TW_GPU_PENDING_MAX: past it the oldest is written at
   once (unlinked), the rest at the end; every one is written once, oldest first, and the ring grows and wraps
   on the way (each record used to move the other 65,535 waiting ones). */
static void gpu_pending_ring(void **state)
{
    rig r;
    tr_writer w;
    char path[256];
    size_t n;
    char *text, *at, want[64];
    const uint32_t total = TW_GPU_PENDING_MAX + 1000;
    (void)state;
    rig_init(&r, 1);
    writer_open(&w, &r, path, sizeof path, "gpu");
    for (uint32_t i = 0; i < total; i++) {
        struct {
            tr_rec h;
            tr_gpu g;
            tr_blob b;
            char name[16];
        } rec;
        memset(&rec, 0, sizeof rec);
        rec.h.len = sizeof rec;
        rec.h.type = TR_REC_GPU;
        rec.h.t = 1000 + i;
        rec.g.start = 1000 + i;
        rec.g.end = 1001 + i;
        rec.g.kind = TR_GPU_KERNEL;
        rec.g.correlation = i + 1;   /* no correlation record for any: each waits */
        rec.b.len = (uint32_t)snprintf(rec.name, sizeof rec.name, "k%u", i);
        rec.b.count = rec.b.len;
        tw_on_gpu(&w, &rec.h, 0);
        assert_int_equal(w.gpu_npending, i < TW_GPU_PENDING_MAX ? i + 1 : TW_GPU_PENDING_MAX);
    }
    assert_int_equal(w.gpu_cap_pending, TW_GPU_PENDING_MAX);
    assert_int_equal(w.gpu_head, 1000);   /* 1000 written from the head: the ring wrapped */
    tw_finish(&w);                         /* the waiting ones, oldest first */
    assert_int_equal(w.gpu_npending, 0);
    tw_free(&w);
    text = slurp(path, &n);
    unlink(path);
    at = text;
    for (uint32_t i = 0; i < total; i++) {   /* each once, in order */
        snprintf(want, sizeof want, "\"name\":\"k%u\"", i);
        at = find_in(at, text + n, want);
        assert_non_null(at);
        at += strlen(want);
    }
    snprintf(want, sizeof want, "\"name\":\"k%u\"", 0u);
    at = find_in(text, text + n, want);
    assert_null(find_in(at + strlen(want), text + n, want));   /* the first written once */
    free(text);
    rig_free(&r);
}

/* ---- NVTX ranges of several domains ---- */

/* One NVTX record as tr_record2 lays it out: the message as blob 0, a named domain's name as blob 1; 'id' a
   start/end range's. */
static void nvtx_rec_id(tr_writer *w, tw_thr *t, uint16_t type, uint32_t dom, uint64_t ts, const char *msg,
                        const char *dom_name, uint64_t id)
{
    unsigned char buf[256];
    tr_rec h;
    tr_blob b;
    uint32_t off = sizeof h;
    memset(buf, 0, sizeof buf);
    memset(&h, 0, sizeof h);
    h.type = type;
    h.parent = dom;
    h.t = ts;
    h.seq = id;
    for (int i = 0; i < 2; i++) {
        const char *text = i == 0 ? msg : dom_name;
        if (text == NULL)
            continue;
        memset(&b, 0, sizeof b);
        b.param = (uint16_t)i;
        b.count = strlen(text);
        b.len = (uint32_t)b.count + 1;
        memcpy(buf + off, &b, sizeof b);
        memcpy(buf + off + sizeof b, text, b.count);
        off += (uint32_t)sizeof b + ((b.len + 7u) & ~7u);
    }
    h.len = off;
    memcpy(buf, &h, sizeof h);
    tw_on_nvtx(w, t, (const tr_rec *)buf);
}

static void nvtx_rec(tr_writer *w, tw_thr *t, uint16_t type, uint32_t dom, uint64_t ts, const char *msg,
                     const char *dom_name)
{
    nvtx_rec_id(w, t, type, dom, ts, msg, dom_name, 0);
}

/* Row 'style' 'range' of an nvtx_sum table: its count (0 if none), its total in *total. */
static uint64_t nvtx_row(tr_stats *st, const char *style, const char *range, uint64_t *total)
{
    tr_stat_row *rows = NULL;
    uint32_t n = tr_stats_rows(st, &rows);
    char key[600];
    uint64_t count = 0;
    snprintf(key, sizeof key, "%s%c%s", style, TR_STATS_STYLE_SEP, range);
    *total = 0;
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(rows[i].name, key) == 0) {
            count = rows[i].n;
            *total = rows[i].total;
        }
    free(rows);
    return count;
}

/* The NVTX events of the file 'path' (the writer's layout: one a line, names without escapes) through cushim
   stats' reader (tools/stats-nvtx.c) into 'out', initialised here. */
static void nvtx_file_stats(const char *path, tr_stats *out)
{
    sn_state *s = sn_new();
    size_t n;
    char *text = slurp(path, &n);
    const char *at = text, *end = text + n;
    assert_non_null(s);
    assert_non_null(text);
    tr_stats_init(out);
    while (at < end) {
        const char *nl = memchr(at, '\n', (size_t)(end - at)), *le = nl ? nl : end, *v;
        char name[64] = "", dom[64] = "";
        sn_ev e;
        memset(&e, 0, sizeof e);
        if (find_in(at, le, "\"cat\":\"nvtx\"") != NULL && (v = find_in(at, le, "\"ph\":\"")) != NULL) {
            e.ph = v[6];
            if ((v = find_in(at, le, "\"name\":\"")) != NULL)
                snprintf(name, sizeof name, "%.*s", (int)(strchr(v + 8, '"') - (v + 8)), v + 8);
            if ((v = find_in(at, le, "\"domain\":\"")) != NULL)
                snprintf(dom, sizeof dom, "%.*s", (int)(strchr(v + 10, '"') - (v + 10)), v + 10);
            if ((v = find_in(at, le, "\"tid\":")) != NULL)
                e.tid = strtoull(v + 6, NULL, 10);
            if ((v = find_in(at, le, "\"pid\":")) != NULL)
                e.pid = strtoull(v + 6, NULL, 10);
            if ((v = find_in(at, le, "\"id\":")) != NULL)
                e.id = strtoull(v + 5, NULL, 10);
            if ((v = find_in(at, le, "\"ts\":")) != NULL)
                e.ts = (uint64_t)(strtod(v + 5, NULL) * 1000.0 + 0.5);
            e.continued = find_in(at, le, "\"continued\":true") != NULL;
            e.name = name;
            e.domain = dom;
            sn_event(s, out, &e);
        }
        at = le + 1;
    }
    assert_int_equal(sn_file_end(s, out), 0);
    sn_free(s);
    free(text);
}

/* The nvtx events' phases and names in order ("B:A E: ..."), into 'out'. */
static void nvtx_seq(const char *text, size_t n, char *out, size_t cap)
{
    const char *at = text, *key = "\"cat\":\"nvtx\",\"name\":\"";
    size_t o = 0;
    out[0] = '\0';
    while ((at = find_in(at, text + n, key)) != NULL) {
        const char *name = at + strlen(key), *q = strchr(name, '"');
        char ph = at[-3];   /* ..."ph":"B","cat":... */
        const char *next = find_in(q, text + n, "{\"ph\"");
        o += (size_t)snprintf(out + o, cap - o, "%s%c:%.*s%s", o ? " " : "", ph, (int)(q - name), name,
                              find_in(q, next ? next : text + n, "continued") ? "+" : "");
        at = q;
        if (o >= cap)
            break;
    }
}

/* The NVTX tests' rig: a writer into a file named with 'tag', and thread 1's writer state. */
static void nvtx_begin(rig *r, tr_writer *w, tw_thr *t, char *path, size_t cap, const char *tag)
{
    rig_init(r, 1);
    memset(t, 0, sizeof *t);
    t->tid = 1;
    writer_open(w, r, path, cap, tag);
}

/* Finishes the file, frees the thread's ranges still open; returns the file's text (its length in *n). */
static char *nvtx_end(tr_writer *w, tw_thr *t, const char *path, size_t *n)
{
    char *text;
    tw_finish(w);
    tw_free(w);
    for (uint32_t i = 0; i < t->nvtx_depth; i++)
        free(t->nvtx[i]);
    free(t->nvtx);
    text = slurp(path, n);
    unlink(path);
    return text;
}

static void nvtx_domains_nest(void **state)
{
    (void)state;
    rig r;
    tr_writer w;
    tw_thr t;
    char path[256], seq[1024];
    size_t n;
    char *text;
    nvtx_begin(&r, &w, &t, path, sizeof path, "nvtx");
    nvtx_rec(&w, &t, TR_REC_NVTX_POP, 0, 5, "", NULL);   /* no push recorded: nothing */
    nvtx_rec(&w, &t, TR_REC_NVTX_PUSH, 0, 10, "A", NULL);
    nvtx_rec(&w, &t, TR_REC_NVTX_PUSH, 1, 20, "L", "lib");
    nvtx_rec(&w, &t, TR_REC_NVTX_PUSH, 0, 30, "B", NULL);
    nvtx_rec(&w, &t, TR_REC_NVTX_PUSH, 2, 40, "C", "x");
    nvtx_rec(&w, &t, TR_REC_NVTX_POP, 1, 50, "", "lib");   /* L ends under B and C: they end and open again */
    assert_int_equal(t.nvtx_depth, 3);
    nvtx_rec(&w, &t, TR_REC_NVTX_POP, 2, 60, "", "x");
    nvtx_rec(&w, &t, TR_REC_NVTX_POP, 0, 70, "", NULL);
    nvtx_rec(&w, &t, TR_REC_NVTX_POP, 1, 75, "", "lib");   /* lib has none open: nothing */
    nvtx_rec(&w, &t, TR_REC_NVTX_POP, 0, 80, "", NULL);
    assert_int_equal(t.nvtx_depth, 0);
    /* past the depth kept: counted, and closed in order */
    for (int i = 0; i < TW_NVTX_DEPTH + 4; i++)
        nvtx_rec(&w, &t, TR_REC_NVTX_PUSH, 0, 100 + (uint64_t)i, "d", NULL);
    assert_int_equal(t.nvtx_depth, TW_NVTX_DEPTH);
    assert_int_equal(t.nvtx_over, 4);
    for (int i = 0; i < TW_NVTX_DEPTH + 4; i++)
        nvtx_rec(&w, &t, TR_REC_NVTX_POP, 0, 1000 + (uint64_t)i, "", NULL);
    assert_int_equal(t.nvtx_depth, 0);
    assert_int_equal(t.nvtx_over, 0);
    nvtx_rec(&w, &t, TR_REC_NVTX_PUSH, 3, 2000, "left open", "y");   /* freed with the thread */
    /* start/end ranges: one ended after its start, one whose end is drained first, an end without a start */
    nvtx_rec_id(&w, &t, TR_REC_NVTX_START, 2, 3000, "s1", "x", 7);
    nvtx_rec_id(&w, &t, TR_REC_NVTX_END, 0, 3005, "", NULL, 8);
    nvtx_rec_id(&w, &t, TR_REC_NVTX_START, 0, 3001, "s2", NULL, 8);
    nvtx_rec_id(&w, &t, TR_REC_NVTX_END, 2, 3010, "", "x", 7);
    nvtx_rec_id(&w, &t, TR_REC_NVTX_END, 0, 3020, "", NULL, 9);   /* waits to the end, freed by tw_free */
    tw_finish(&w);
    {   /* nvtx_sum at exit, and as cushim stats reads it from the file (below): the ranges that ended, a split
           one (B) from its push to its pop; of the 260 nested "d" the 256 kept, each from push 100 + j to pop
           1004 + 255 - j; none of those left open */
        tr_stats fst;
        tr_stats *both[2] = {&w.nvtx, &fst};
        static const struct {
            const char *style, *range;
            uint64_t count, total;
        } want[] = {{"PushPop", ":A", 1, 70},       {"PushPop", "lib:L", 1, 30},
                    {"PushPop", ":B", 1, 40},       {"PushPop", "x:C", 1, 20},
                    {"PushPop", ":d", 256, 231424}, {"StartEnd", "x:s1", 1, 10},
                    {"StartEnd", ":s2", 1, 4}};
        tr_stat_row *rows = NULL;
        nvtx_file_stats(path, &fst);
        for (int k = 0; k < 2; k++) {
            for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
                uint64_t total;
                assert_int_equal(nvtx_row(both[k], want[i].style, want[i].range, &total), want[i].count);
                assert_int_equal(total, want[i].total);
            }
            assert_int_equal(tr_stats_rows(both[k], &rows), sizeof want / sizeof want[0]);
            free(rows);
        }
        tr_stats_free(&fst);
    }
    text = nvtx_end(&w, &t, path, &n);
    nvtx_seq(text, n, seq, sizeof seq);
    if (strncmp(seq, "B:A B:L B:B B:C E: E: E: B:B+ B:C+ E: E: E: B:d", 47) != 0)
        print_message("nvtx events: %.200s\n", seq);
    assert_true(strncmp(seq, "B:A B:L B:B B:C E: E: E: B:B+ B:C+ E: E: E: B:d", 47) == 0);
    assert_non_null(find_in(text, text + n, "\"name\":\"L\",\"pid\":77,\"tid\":1,\"ts\":0.020,\"args\":{\"domain\":\"lib\"}}"));
    assert_non_null(find_in(text, text + n, "\"name\":\"C\",\"pid\":77,\"tid\":1,\"ts\":0.051,\"args\":{\"domain\":\"x\",\"continued\":true}}"));
    {   /* B and E balanced: every B of the file ends */
        size_t nb = 0, ne = 0;
        for (const char *a = text; (a = find_in(a, text + n, "\"ph\":\"B\",\"cat\":\"nvtx\"")) != NULL; a++)
            nb++;
        for (const char *a = text; (a = find_in(a, text + n, "\"ph\":\"E\",\"cat\":\"nvtx\"")) != NULL; a++)
            ne++;
        assert_int_equal(nb, 4 + 2 + TW_NVTX_DEPTH + 4 + 1);
        assert_int_equal(ne, nb - 1);
    }
    free(text);
    rig_free(&r);
}

/* Random push/pop sequences over three domains against a model of NVTX's per-domain stacks: the file's B/E
   slices, joined where a range was split (args.continued, 1 ns after the end before), are exactly the model's
   ranges (each name once, its push's and its pop's time), and the ranges still open at the end are the
   slices left without an E. */
#define NP_OPS 3000
typedef struct np_range {
    uint64_t start, end;   /* ns; end 0: open */
    int dom;
    uint64_t first, last;  /* as found in the file: the first slice's start, the last slice's end (0: none) */
    int slices, unended;
} np_range;

static void nvtx_random_nesting(void **state)
{
    (void)state;
    static np_range rg[NP_OPS];
    int stack[3][NP_OPS], depth[3] = {0, 0, 0}, nr = 0, total = 0;
    static const char *const dom_name[3] = {NULL, "a", "b"};
    uint32_t seed = 12345;
    rig r;
    tr_writer w;
    tw_thr t;
    char path[256], name[32];
    size_t n;
    char *text;
    nvtx_begin(&r, &w, &t, path, sizeof path, "nvtxrand");
    for (int op = 0; op < NP_OPS; op++) {
        uint64_t ts = 1000 + 10 * (uint64_t)op;
        seed = seed * 1103515245u + 12345u;
        int d = (int)((seed >> 16) % 3), push = (seed >> 8) % 100 < (total < 24 ? 55 : 35);
        if (push) {
            snprintf(name, sizeof name, "r%d", nr);
            rg[nr].start = ts;
            rg[nr].dom = d;
            stack[d][depth[d]++] = nr++;
            total++;
            nvtx_rec(&w, &t, TR_REC_NVTX_PUSH, (uint32_t)d, ts, name, dom_name[d]);
        } else {
            if (depth[d] > 0) {
                rg[stack[d][--depth[d]]].end = ts;
                total--;
            }
            nvtx_rec(&w, &t, TR_REC_NVTX_POP, (uint32_t)d, ts, "", dom_name[d]);
        }
    }
    tw_finish(&w);
    {   /* nvtx_sum at exit and as cushim stats reads it from the file: each range that ended once, from its push
           to its pop, whatever splits the file has; none that is still open */
        tr_stats fst;
        tr_stats *both[2] = {&w.nvtx, &fst};
        tr_stat_row *rows = NULL;
        int ended = 0;
        nvtx_file_stats(path, &fst);
        for (int k = 0; k < 2; k++) {
            ended = 0;
            for (int i = 0; i < nr; i++) {
                uint64_t total;
                snprintf(name, sizeof name, "%s:r%d", dom_name[rg[i].dom] ? dom_name[rg[i].dom] : "", i);
                assert_int_equal(nvtx_row(both[k], "PushPop", name, &total), rg[i].end != 0);
                assert_int_equal(total, rg[i].end != 0 ? rg[i].end - rg[i].start : 0);
                ended += rg[i].end != 0;
            }
            assert_int_equal(tr_stats_rows(both[k], &rows), ended);
            free(rows);
        }
        assert_true(ended > 100);
        tr_stats_free(&fst);
    }
    text = nvtx_end(&w, &t, path, &n);
    {   /* the file's slices: B pushes its range, E ends the top one */
        int open_[NP_OPS], no = 0;
        const char *at = text, *key = "\"cat\":\"nvtx\",\"name\":\"";
        while ((at = find_in(at, text + n, key)) != NULL) {
            char ph = at[-3];
            const char *nm = at + strlen(key), *tsp = find_in(nm, text + n, "\"ts\":");
            char *endp;
            assert_non_null(tsp);
            double us = strtod(tsp + 5, &endp);
            uint64_t ts = (uint64_t)(us * 1000.0 + 0.5);
            if (ph == 'B') {
                int k = atoi(nm + 1);
                assert_true(k >= 0 && k < nr);
                const char *next = find_in(nm, text + n, "{\"ph\"");
                int cont = find_in(nm, next ? next : text + n, "continued") != NULL;
                if (rg[k].slices == 0) {
                    assert_false(cont);
                    rg[k].first = ts;
                } else {   /* opened again 1 ns after the end of its slice before */
                    assert_true(cont);
                    assert_int_equal(ts, rg[k].last + 1);
                }
                rg[k].slices++;
                rg[k].last = 0;
                open_[no++] = k;
            } else {
                assert_int_equal(ph, 'E');
                assert_true(no > 0);   /* never an E without a B */
                rg[open_[--no]].last = ts;
            }
            at = nm;
        }
        for (int i = 0; i < no; i++)
            rg[open_[i]].unended = 1;
    }
    for (int k = 0; k < nr; k++) {
        assert_int_equal(rg[k].first, rg[k].start);
        if (rg[k].end != 0) {
            assert_int_equal(rg[k].last, rg[k].end);
            assert_false(rg[k].unended);
        } else {
            assert_true(rg[k].unended);
        }
    }
    free(text);
    rig_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(call_renders_as_pair),     cmocka_unit_test(call_record_bytes),
        cmocka_unit_test(query_record_same),
        cmocka_unit_test(open_stack_overflow),      cmocka_unit_test(unfinished_from_open_stack),
        cmocka_unit_test(open_read_validates),      cmocka_unit_test(open_read_while_running),
        cmocka_unit_test(launch_renders_as_pair),   cmocka_unit_test(launch_record_bytes),
        cmocka_unit_test(unfinished_launch_named),  cmocka_unit_test(corr_bounded),
        cmocka_unit_test(gpu_pending_ring),         cmocka_unit_test(nvtx_domains_nest),
        cmocka_unit_test(nvtx_random_nesting),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
