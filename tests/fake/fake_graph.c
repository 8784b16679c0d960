/*
 * fake_graph.c - stream capture and graphs of the fake driver, and the stream-ordered work they run.
 *
 * A created stream (not the NULL, legacy or per-thread one: CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED) can be
 * captured: between cuStreamBeginCapture[_v2] and cuStreamEndCapture, the copies, memsets and launches queued on
 * it (fake_mem.c, fake_module.c) are not run but appended to the capture's graph as nodes, each depending on the
 * one before (a linear capture: cuStreamGetCaptureInfo_v2/_v3 give the last node as the only dependency). Work
 * that fails its checks while captured invalidates the capture (CUDA_ERROR_STREAM_CAPTURE_INVALIDATED from
 * cuStreamEndCapture, no graph), as the driver's does. Graphs also take kernel and memset nodes added by hand
 * (cuGraphAddKernelNode_v2, cuGraphAddMemsetNode; 1D only); nodes run in the order they were added, which is a
 * topological order of their dependencies. An instantiated graph (cuGraphInstantiate*) is a copy of its nodes'
 * work: cuGraphExecKernelNodeSetParams_v2 changes the copy, cuGraphKernelNodeSetParams_v2 the graph. cuGraphLaunch
 * runs the copy's work in order on its stream.
 *
 * What work did runs through fk_work_run: copies and memsets change memory, launches are recorded (fake_module.c)
 * and "fk_add_i32__pii" (p, n, v) adds v to n ints at p. FAKE_CUDA_WORK_LOG=FILE appends one line per piece of work
 * run, "stream ..." or "graph ...", with the kernel's name, grid, block and arguments (pointers as 'p': device
 * addresses differ between runs), so that a test compares what two runs did, in order.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake_internal.h"

#define FK_MAGIC_GRAPH 0x48505247u
#define FK_MAGIC_GNODE 0x444f4e47u
#define FK_MAGIC_GEXEC 0x43455847u
#define FK_CAPTURES 64

struct CUgraphNode_st {
    uint32_t magic;
    struct CUgraph_st *graph;
    struct CUgraphNode_st *next;
    uint32_t index;            /* its place in the graph: the same in every instantiation */
    fk_work w;
    void *argp[FK_WORK_MAX_ARGS];   /* cuGraphKernelNodeGetParams_v2's kernelParams: into w.args */
};

struct CUgraph_st {
    uint32_t magic;
    struct CUgraphNode_st *head, *tail;
    uint32_t n;
};

struct CUgraphExec_st {
    uint32_t magic;
    uint32_t n;
    fk_work *w;                /* n pieces of work, in node order */
};

/* Streams being captured, under fk_lock. */
typedef struct fk_capture_rec {
    CUstream s;                /* NULL: free */
    CUgraph g;
    int invalidated;
    cuuint64_t id;
    CUgraphNode last;
} fk_capture_rec;

static fk_capture_rec fk_captures[FK_CAPTURES];
static cuuint64_t fk_capture_ids;
static _Thread_local CUstreamCaptureMode fk_capture_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;

static fk_capture_rec *fk_capture_of(CUstream s)
{
    for (int i = 0; i < FK_CAPTURES; i++)
        if (fk_captures[i].s == s && s != NULL)
            return &fk_captures[i];
    return NULL;
}

static int fk_special(CUstream s)
{
    return s == NULL || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD;
}

/* ---- the work ---------------------------------------------------------- */

CUresult fk_work_kernel(fk_work *w, CUfunction f, const unsigned grid[3], const unsigned block[3], void **params)
{
    memset(w, 0, sizeof *w);
    w->kind = FK_WORK_KERNEL;
    w->f = f;
    memcpy(w->grid, grid, sizeof w->grid);
    memcpy(w->block, block, sizeof w->block);
    const char *spec = strstr(f->name, "__");
    size_t off = 0, sz;
    for (uint32_t i = 0; spec != NULL && i < FK_WORK_MAX_ARGS &&
                         fk_param_info(f->name, i, &off, &sz) == CUDA_SUCCESS; i++) {
        if (off + sz > sizeof w->args)
            return CUDA_ERROR_INVALID_VALUE;
        if (params == NULL || params[i] == NULL)
            break;   /* arguments by 'extra', or none given: nothing recorded (the fake checks no more) */
        memcpy(w->args + off, params[i], sz);   /* copied now, as the driver does */
        w->spec[i] = spec[2 + i];
        w->off[i] = (uint32_t)off;
        w->nargs = i + 1;
    }
    return CUDA_SUCCESS;
}

static const char *fk_work_log_path;   /* FAKE_CUDA_WORK_LOG, read once; NULL: no log */
static pthread_once_t fk_work_log_once = PTHREAD_ONCE_INIT;

static void fk_work_log_init(void)
{
    const char *p = getenv("FAKE_CUDA_WORK_LOG");
    fk_work_log_path = p != NULL && *p != '\0' ? p : NULL;
}

int fk_work_wants_args(CUstream s, CUfunction f)
{
    pthread_once(&fk_work_log_once, fk_work_log_init);
    if (fk_work_log_path != NULL || strcmp(f->name, "fk_add_i32__pii") == 0)
        return 1;
    if (fk_special(s))
        return 0;
    pthread_mutex_lock(&fk_lock);
    int capturing = fk_capture_of(s) != NULL;
    pthread_mutex_unlock(&fk_lock);
    return capturing;
}

static void fk_work_log(const fk_work *w, const char *how)
{
    const char *path;
    char line[512];
    int n = 0, fd;
    pthread_once(&fk_work_log_once, fk_work_log_init);
    if ((path = fk_work_log_path) == NULL)
        return;
    if (w->kind == FK_WORK_KERNEL) {
        n = snprintf(line, sizeof line, "%s kernel %s %ux%ux%u %ux%ux%u", how, w->f->name, w->grid[0], w->grid[1],
                     w->grid[2], w->block[0], w->block[1], w->block[2]);
        for (uint32_t i = 0; i < w->nargs && n > 0 && (size_t)n < sizeof line - 40; i++) {
            const uint8_t *a = w->args + w->off[i];
            int32_t i32;
            int64_t i64;
            float f32;
            double f64;
            switch (w->spec[i]) {
            case 'i': memcpy(&i32, a, 4); n += snprintf(line + n, sizeof line - (size_t)n, " %d", i32); break;
            case 'l': memcpy(&i64, a, 8); n += snprintf(line + n, sizeof line - (size_t)n, " %lld", (long long)i64); break;
            case 'f': memcpy(&f32, a, 4); n += snprintf(line + n, sizeof line - (size_t)n, " %g", (double)f32); break;
            case 'd': memcpy(&f64, a, 8); n += snprintf(line + n, sizeof line - (size_t)n, " %g", f64); break;
            default: n += snprintf(line + n, sizeof line - (size_t)n, " p"); break;
            }
        }
    } else if (w->kind == FK_WORK_COPY) {
        n = snprintf(line, sizeof line, "%s copy %zu", how, w->n);
    } else {
        n = snprintf(line, sizeof line, "%s set %zu %zu %u", how, w->elem, w->n, w->value);
    }
    if (n <= 0 || (size_t)n >= sizeof line - 1)
        return;
    line[n++] = '\n';
    if ((fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600)) < 0)
        return;
    if (write(fd, line, (size_t)n) != n) {
        /* a test's log: a short line shows there */
    }
    close(fd);
}

void fk_work_run(const fk_work *w, CUstream s, const char *how)
{
    fk_work_log(w, how);
    switch (w->kind) {
    case FK_WORK_KERNEL:
        fk_kernel_record(w, s);
        if (strcmp(w->f->name, "fk_add_i32__pii") == 0) {
            uintptr_t p;
            int32_t n, v;
            memcpy(&p, w->args + w->off[0], 8);
            memcpy(&n, w->args + w->off[1], 4);
            memcpy(&v, w->args + w->off[2], 4);
            if (n > 0 && fk_dev_range(p, (size_t)n * 4))
                for (int32_t i = 0; i < n; i++)
                    ((int32_t *)p)[i] += v;
        }
        break;
    case FK_WORK_COPY:
        memmove((void *)w->dst, (const void *)w->src, w->n);
        break;
    case FK_WORK_SET:
        fk_set_run(w->dst, w->value, w->elem, w->n);
        break;
    default:
        break;
    }
}

/* ---- graphs ------------------------------------------------------------ */

static int fk_graph_ok(CUgraph g)
{
    return g != NULL && g->magic == FK_MAGIC_GRAPH;
}

static int fk_node_ok(CUgraphNode n)
{
    return n != NULL && n->magic == FK_MAGIC_GNODE;
}

static CUgraph fk_graph_new(void)
{
    CUgraph g = fk_obj_alloc(sizeof *g);
    if (g != NULL)
        g->magic = FK_MAGIC_GRAPH;
    return g;
}

/* Under fk_lock. */
static CUgraphNode fk_node_add(CUgraph g, const fk_work *w)
{
    CUgraphNode n = fk_obj_alloc(sizeof *n);
    if (n == NULL)
        return NULL;
    n->magic = FK_MAGIC_GNODE;
    n->graph = g;
    n->index = g->n++;
    n->w = *w;
    if (g->tail != NULL)
        g->tail->next = n;
    else
        g->head = n;
    g->tail = n;
    return n;
}

static CUresult fk_deps_ok(CUgraph g, const CUgraphNode *deps, size_t n)
{
    if (n != 0 && deps == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < n; i++)
        if (!fk_node_ok(deps[i]) || deps[i]->graph != g)
            return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

CUresult cuGraphCreate(CUgraph *phGraph, unsigned int flags)
{
    FAKE_ENTER(cuGraphCreate);
    FK_REQUIRE_INIT();
    if (phGraph == NULL || flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fk_lock);
    CUgraph g = fk_graph_new();
    pthread_mutex_unlock(&fk_lock);
    if (g == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *phGraph = g;
    return CUDA_SUCCESS;
}

CUresult cuGraphDestroy(CUgraph hGraph)
{
    FAKE_ENTER(cuGraphDestroy);
    FK_REQUIRE_INIT();
    pthread_mutex_lock(&fk_lock);
    CUresult r = fk_graph_ok(hGraph) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS) {
        for (CUgraphNode n = hGraph->head; n != NULL; n = n->next)
            n->magic = FK_MAGIC_DEAD;
        hGraph->magic = FK_MAGIC_DEAD;
    }
    pthread_mutex_unlock(&fk_lock);
    return r;
}

static CUresult fk_kernel_node_work(fk_work *w, const CUDA_KERNEL_NODE_PARAMS *p)
{
    CUfunction f;
    if (p == NULL || p->extra != NULL)
        return CUDA_ERROR_INVALID_VALUE;
    f = p->func != NULL ? p->func : p->kern != NULL ? ((struct CUkern_st *)(void *)p->kern)->func : NULL;
    if (p->func == NULL && p->kern != NULL && ((struct CUkern_st *)(void *)p->kern)->magic != FK_MAGIC_KERNEL)
        return CUDA_ERROR_INVALID_HANDLE;
    if (f == NULL || f->magic != FK_MAGIC_FUNC)
        return CUDA_ERROR_INVALID_HANDLE;
    if (p->gridDimX == 0 || p->gridDimY == 0 || p->gridDimZ == 0 || p->blockDimX == 0 || p->blockDimY == 0 ||
        p->blockDimZ == 0 || (unsigned long long)p->blockDimX * p->blockDimY * p->blockDimZ > 1024)
        return CUDA_ERROR_INVALID_VALUE;
    return fk_work_kernel(w, f, (const unsigned[3]){ p->gridDimX, p->gridDimY, p->gridDimZ },
                          (const unsigned[3]){ p->blockDimX, p->blockDimY, p->blockDimZ }, p->kernelParams);
}

static CUresult fk_add_node(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t ndeps, const fk_work *w)
{
    CUresult r;
    if (out == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fk_lock);
    if (!fk_graph_ok(g))
        r = CUDA_ERROR_INVALID_VALUE;
    else if ((r = fk_deps_ok(g, deps, ndeps)) == CUDA_SUCCESS && (*out = fk_node_add(g, w)) == NULL)
        r = CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_unlock(&fk_lock);
    return r;
}

CUresult cuGraphAddKernelNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                 size_t numDependencies, const CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
    FAKE_ENTER(cuGraphAddKernelNode_v2);
    FK_REQUIRE_INIT();
    fk_work w;
    if (phGraphNode == NULL || !fk_graph_ok(hGraph))   /* before the parameters are read */
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fk_kernel_node_work(&w, nodeParams);
    return r != CUDA_SUCCESS ? r : fk_add_node(phGraphNode, hGraph, dependencies, numDependencies, &w);
}

CUresult cuGraphKernelNodeSetParams_v2(CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
    FAKE_ENTER(cuGraphKernelNodeSetParams_v2);
    FK_REQUIRE_INIT();
    fk_work w;
    if (!fk_node_ok(hNode))
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fk_kernel_node_work(&w, nodeParams);
    if (r != CUDA_SUCCESS)
        return r;
    pthread_mutex_lock(&fk_lock);
    if (!fk_node_ok(hNode) || hNode->w.kind != FK_WORK_KERNEL)
        r = CUDA_ERROR_INVALID_VALUE;
    else
        hNode->w = w;
    pthread_mutex_unlock(&fk_lock);
    return r;
}

CUresult cuGraphKernelNodeGetParams_v2(CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
    FAKE_ENTER(cuGraphKernelNodeGetParams_v2);
    FK_REQUIRE_INIT();
    if (nodeParams == NULL || !fk_node_ok(hNode))
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fk_lock);
    CUresult r = fk_node_ok(hNode) && hNode->w.kind == FK_WORK_KERNEL ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS) {
        const fk_work *w = &hNode->w;
        for (uint32_t i = 0; i < w->nargs; i++)
            hNode->argp[i] = hNode->w.args + w->off[i];
        memset(nodeParams, 0, sizeof *nodeParams);
        nodeParams->func = w->f;
        nodeParams->gridDimX = w->grid[0], nodeParams->gridDimY = w->grid[1], nodeParams->gridDimZ = w->grid[2];
        nodeParams->blockDimX = w->block[0], nodeParams->blockDimY = w->block[1], nodeParams->blockDimZ = w->block[2];
        nodeParams->kernelParams = w->nargs ? hNode->argp : NULL;   /* the driver's own memory */
    }
    pthread_mutex_unlock(&fk_lock);
    return r;
}

CUresult cuGraphAddMemsetNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                              size_t numDependencies, const CUDA_MEMSET_NODE_PARAMS *memsetParams, CUcontext ctx)
{
    FAKE_ENTER(cuGraphAddMemsetNode);
    FK_REQUIRE_INIT();
    (void)ctx;
    const CUDA_MEMSET_NODE_PARAMS *p = memsetParams;
    if (phGraphNode == NULL || !fk_graph_ok(hGraph) || p == NULL || p->height != 1 || (p->elementSize != 1 && p->elementSize != 2 && p->elementSize != 4) ||
        p->dst % p->elementSize != 0 || !fk_dev_range((uintptr_t)p->dst, p->width * p->elementSize))
        return CUDA_ERROR_INVALID_VALUE;
    fk_work w = { .kind = FK_WORK_SET, .dst = (uintptr_t)p->dst, .value = p->value, .elem = p->elementSize,
                  .n = p->width };
    return fk_add_node(phGraphNode, hGraph, dependencies, numDependencies, &w);
}

/* ---- instantiation and launches ---------------------------------------- */

static CUresult fk_instantiate(CUgraphExec *out, CUgraph g)
{
    CUresult r = CUDA_SUCCESS;
    if (out == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fk_lock);
    CUgraphExec e = NULL;
    if (!fk_graph_ok(g)) {
        r = CUDA_ERROR_INVALID_VALUE;
    } else if ((e = fk_obj_alloc(sizeof *e)) == NULL ||
               (e->w = calloc(g->n ? g->n : 1, sizeof *e->w)) == NULL) {
        r = CUDA_ERROR_OUT_OF_MEMORY;
    } else {
        e->magic = FK_MAGIC_GEXEC;
        for (CUgraphNode n = g->head; n != NULL; n = n->next)
            e->w[e->n++] = n->w;
        *out = e;
    }
    pthread_mutex_unlock(&fk_lock);
    return r;
}

CUresult cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph, unsigned long long flags)
{
    FAKE_ENTER(cuGraphInstantiateWithFlags);
    FK_REQUIRE_INIT();
    (void)flags;
    return fk_instantiate(phGraphExec, hGraph);
}

static CUresult fk_instantiate_params(CUgraphExec *e, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
    if (p == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fk_instantiate(e, g);
    p->hErrNode_out = NULL;
    p->result_out = r == CUDA_SUCCESS ? CUDA_GRAPH_INSTANTIATE_SUCCESS : CUDA_GRAPH_INSTANTIATE_ERROR;
    return r;
}

CUresult cuGraphInstantiateWithParams(CUgraphExec *phGraphExec, CUgraph hGraph,
                                      CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams)
{
    FAKE_ENTER(cuGraphInstantiateWithParams);
    FK_REQUIRE_INIT();
    return fk_instantiate_params(phGraphExec, hGraph, instantiateParams);
}

CUresult cuGraphInstantiateWithParams_ptsz(CUgraphExec *phGraphExec, CUgraph hGraph,
                                           CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams)
{
    FAKE_ENTER(cuGraphInstantiateWithParams_ptsz);
    FK_REQUIRE_INIT();
    return fk_instantiate_params(phGraphExec, hGraph, instantiateParams);
}

CUresult cuGraphExecDestroy(CUgraphExec hGraphExec)
{
    FAKE_ENTER(cuGraphExecDestroy);
    FK_REQUIRE_INIT();
    pthread_mutex_lock(&fk_lock);
    CUresult r = hGraphExec != NULL && hGraphExec->magic == FK_MAGIC_GEXEC ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS) {
        hGraphExec->magic = FK_MAGIC_DEAD;
        free(hGraphExec->w);
        hGraphExec->w = NULL;
    }
    pthread_mutex_unlock(&fk_lock);
    return r;
}

CUresult cuGraphExecKernelNodeSetParams_v2(CUgraphExec hGraphExec, CUgraphNode hNode,
                                           const CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
    FAKE_ENTER(cuGraphExecKernelNodeSetParams_v2);
    FK_REQUIRE_INIT();
    fk_work w;
    if (hGraphExec == NULL || hGraphExec->magic != FK_MAGIC_GEXEC || !fk_node_ok(hNode))
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = fk_kernel_node_work(&w, nodeParams);
    if (r != CUDA_SUCCESS)
        return r;
    pthread_mutex_lock(&fk_lock);
    if (hGraphExec == NULL || hGraphExec->magic != FK_MAGIC_GEXEC || !fk_node_ok(hNode) ||
        hNode->index >= hGraphExec->n || hGraphExec->w[hNode->index].kind != FK_WORK_KERNEL)
        r = CUDA_ERROR_INVALID_VALUE;
    else
        hGraphExec->w[hNode->index] = w;
    pthread_mutex_unlock(&fk_lock);
    return r;
}

static CUresult fk_graph_launch(CUgraphExec e, CUstream s, int run)
{
    CUresult r = fk_stream_check(s);
    if (r != CUDA_SUCCESS)
        return r;
    pthread_mutex_lock(&fk_lock);
    int ok = e != NULL && e->magic == FK_MAGIC_GEXEC;
    uint32_t n = ok ? e->n : 0;
    fk_work *w = n ? malloc(n * sizeof *w) : NULL;
    if (w != NULL)
        memcpy(w, e->w, n * sizeof *w);
    pthread_mutex_unlock(&fk_lock);
    if (!ok || (n != 0 && w == NULL)) {
        free(w);
        return ok ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_INVALID_VALUE;
    }
    for (uint32_t i = 0; run && i < n; i++)
        fk_work_run(&w[i], s, "graph");
    free(w);
    return CUDA_SUCCESS;
}

CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
    FAKE_ENTER(cuGraphLaunch);
    return fk_graph_launch(hGraphExec, hStream, 1);
}

CUresult cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
    FAKE_ENTER(cuGraphLaunch_ptsz);
    return fk_graph_launch(hGraphExec, hStream, 1);
}

CUresult cuGraphUpload(CUgraphExec hGraphExec, CUstream hStream)
{
    FAKE_ENTER(cuGraphUpload);
    return fk_graph_launch(hGraphExec, hStream, 0);
}

CUresult cuGraphUpload_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
    FAKE_ENTER(cuGraphUpload_ptsz);
    return fk_graph_launch(hGraphExec, hStream, 0);
}

/* ---- capture ----------------------------------------------------------- */

int fk_capture(CUstream s, const fk_work *w, CUresult *r)
{
    if (fk_special(s))
        return 0;
    pthread_mutex_lock(&fk_lock);
    fk_capture_rec *c = fk_capture_of(s);
    if (c != NULL) {
        CUgraphNode n = c->invalidated ? NULL : fk_node_add(c->g, w);
        if (n != NULL)
            c->last = n;
        else
            c->invalidated = 1;
        *r = n != NULL ? CUDA_SUCCESS : CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    }
    pthread_mutex_unlock(&fk_lock);
    return c != NULL;
}

void fk_capture_fail(CUstream s)
{
    pthread_mutex_lock(&fk_lock);
    fk_capture_rec *c = fk_special(s) ? NULL : fk_capture_of(s);
    if (c != NULL)
        c->invalidated = 1;
    pthread_mutex_unlock(&fk_lock);
}

static CUresult fk_begin_capture(CUstream s, CUstreamCaptureMode mode)
{
    CUresult r = fk_stream_check(s);
    if (r != CUDA_SUCCESS)
        return r;
    if ((unsigned)mode > CU_STREAM_CAPTURE_MODE_RELAXED)
        return CUDA_ERROR_INVALID_VALUE;
    if (fk_special(s))
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    pthread_mutex_lock(&fk_lock);
    fk_capture_rec *c = fk_capture_of(s), *slot = NULL;
    if (c != NULL)
        r = CUDA_ERROR_ILLEGAL_STATE;
    for (int i = 0; i < FK_CAPTURES && slot == NULL && c == NULL; i++)
        if (fk_captures[i].s == NULL)
            slot = &fk_captures[i];
    if (r == CUDA_SUCCESS && slot == NULL)
        r = CUDA_ERROR_OUT_OF_MEMORY;
    if (r == CUDA_SUCCESS) {
        *slot = (fk_capture_rec){ .s = s, .g = fk_graph_new(), .id = ++fk_capture_ids };
        if (slot->g == NULL) {
            slot->s = NULL;
            r = CUDA_ERROR_OUT_OF_MEMORY;
        }
    }
    pthread_mutex_unlock(&fk_lock);
    return r;
}

CUresult cuStreamBeginCapture(CUstream hStream)
{
    FAKE_ENTER(cuStreamBeginCapture);
    return fk_begin_capture(hStream, CU_STREAM_CAPTURE_MODE_GLOBAL);
}

CUresult cuStreamBeginCapture_ptsz(CUstream hStream)
{
    FAKE_ENTER(cuStreamBeginCapture_ptsz);
    return fk_begin_capture(hStream, CU_STREAM_CAPTURE_MODE_GLOBAL);
}

CUresult cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode)
{
    FAKE_ENTER(cuStreamBeginCapture_v2);
    return fk_begin_capture(hStream, mode);
}

CUresult cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode)
{
    FAKE_ENTER(cuStreamBeginCapture_v2_ptsz);
    return fk_begin_capture(hStream, mode);
}

static CUresult fk_end_capture(CUstream s, CUgraph *out)
{
    CUresult r = fk_stream_check(s);
    if (r != CUDA_SUCCESS)
        return r;
    if (out == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fk_lock);
    fk_capture_rec *c = fk_special(s) ? NULL : fk_capture_of(s);
    if (c == NULL) {
        r = CUDA_ERROR_ILLEGAL_STATE;
    } else {
        if (c->invalidated) {
            c->g->magic = FK_MAGIC_DEAD;
            *out = NULL;
            r = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
        } else {
            *out = c->g;
        }
        memset(c, 0, sizeof *c);
    }
    pthread_mutex_unlock(&fk_lock);
    return r;
}

CUresult cuStreamEndCapture(CUstream hStream, CUgraph *phGraph)
{
    FAKE_ENTER(cuStreamEndCapture);
    return fk_end_capture(hStream, phGraph);
}

CUresult cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph)
{
    FAKE_ENTER(cuStreamEndCapture_ptsz);
    return fk_end_capture(hStream, phGraph);
}

/* The capture's state; deps/edges/ndeps may be NULL (the _v2/_v3 forms' outputs). */
static CUresult fk_capture_info(CUstream s, CUstreamCaptureStatus *status, cuuint64_t *id, CUgraph *graph,
                                const CUgraphNode **deps, const CUgraphEdgeData **edges, size_t *ndeps)
{
    static const CUgraphEdgeData no_edge;   /* the default edge: all zero */
    CUresult r = fk_stream_check(s);
    if (r != CUDA_SUCCESS)
        return r;
    if (status == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fk_lock);
    fk_capture_rec *c = fk_special(s) ? NULL : fk_capture_of(s);
    *status = c == NULL ? CU_STREAM_CAPTURE_STATUS_NONE :
              c->invalidated ? CU_STREAM_CAPTURE_STATUS_INVALIDATED : CU_STREAM_CAPTURE_STATUS_ACTIVE;
    if (c != NULL && !c->invalidated) {
        if (id != NULL)
            *id = c->id;
        if (graph != NULL)
            *graph = c->g;
        if (deps != NULL)
            *deps = c->last != NULL ? &c->last : NULL;   /* valid until the stream's next capture call */
        if (edges != NULL)
            *edges = c->last != NULL ? &no_edge : NULL;
        if (ndeps != NULL)
            *ndeps = c->last != NULL;
    }
    pthread_mutex_unlock(&fk_lock);
    return CUDA_SUCCESS;
}

CUresult cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{
    FAKE_ENTER(cuStreamIsCapturing);
    return fk_capture_info(hStream, captureStatus, NULL, NULL, NULL, NULL, NULL);
}

CUresult cuStreamIsCapturing_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{
    FAKE_ENTER(cuStreamIsCapturing_ptsz);
    return fk_capture_info(hStream, captureStatus, NULL, NULL, NULL, NULL, NULL);
}

CUresult cuStreamGetCaptureInfo(CUstream hStream, CUstreamCaptureStatus *captureStatus_out, cuuint64_t *id_out)
{
    FAKE_ENTER(cuStreamGetCaptureInfo);
    return fk_capture_info(hStream, captureStatus_out, id_out, NULL, NULL, NULL, NULL);
}

CUresult cuStreamGetCaptureInfo_v2(CUstream hStream, CUstreamCaptureStatus *captureStatus_out, cuuint64_t *id_out,
                                   CUgraph *graph_out, const CUgraphNode **dependencies_out,
                                   size_t *numDependencies_out)
{
    FAKE_ENTER(cuStreamGetCaptureInfo_v2);
    return fk_capture_info(hStream, captureStatus_out, id_out, graph_out, dependencies_out, NULL, numDependencies_out);
}

CUresult cuStreamGetCaptureInfo_v3(CUstream hStream, CUstreamCaptureStatus *captureStatus_out, cuuint64_t *id_out,
                                   CUgraph *graph_out, const CUgraphNode **dependencies_out,
                                   const CUgraphEdgeData **edgeData_out, size_t *numDependencies_out)
{
    FAKE_ENTER(cuStreamGetCaptureInfo_v3);
    return fk_capture_info(hStream, captureStatus_out, id_out, graph_out, dependencies_out, edgeData_out,
                           numDependencies_out);
}

CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
    FAKE_ENTER(cuThreadExchangeStreamCaptureMode);
    FK_REQUIRE_INIT();
    if (mode == NULL || (unsigned)*mode > CU_STREAM_CAPTURE_MODE_RELAXED)
        return CUDA_ERROR_INVALID_VALUE;
    CUstreamCaptureMode old = fk_capture_mode;
    fk_capture_mode = *mode;
    *mode = old;
    return CUDA_SUCCESS;
}
