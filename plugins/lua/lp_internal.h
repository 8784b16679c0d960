/*
 * lp_internal.h - the Lua policy engine's modules and their shared types.
 *
 *   lua.c        the plugin: options, init/flush/fork, threads' records
 *   lp_gen.c     generations (load, index, publish, references) and the file watcher
 *   lp_state.c   one Lua state: allocator cap, the script run; the C hooks
 *   lp_sandbox.c the sandbox and the instruction budget with its guards
 *   lp_pattern.c string.find, match, gmatch, gsub charged to the budget (lp_pattern.h)
 *   lp_pmatch.c  their pattern matcher
 *   lp_bridge.c  the 'cushim' module: declarations, skip, clock, log, options, real calls
 *   lp_call.c    the call object, struct views, metadata tables (lp_bridge.h)
 *   lp_values.c  C <-> Lua values: parameter descriptors, results, enums, constants
 *   lp_shared.c  state shared by all threads (counters, key/value table)
 *   lp_load.c    liblua 5.4, opened privately (lp_lua.h)
 *
 * A generation is one successful compilation of the policy file. The current
 * generation is one atomic pointer; each thread runs its own Lua state of the
 * generation it last saw (lp_thread), rebuilt when the pointer changes and the
 * thread is not in the middle of a hooked call.
 */
#ifndef LP_INTERNAL_H
#define LP_INTERNAL_H

#include <pthread.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <cushim/cushim.h>

#include "lp_lua.h"

#define LP_HIDDEN __attribute__((visibility("hidden")))
#define LP_MAX_DEPTH 8          /* nested hooked calls on one thread with a call object each */
#define LP_MAX_HOOKS 65535      /* hook declarations per policy (indices are 16 bits)        */
#define LP_SEVERAL UINT32_MAX   /* lp_gen.one: more than one function for the stage          */

/* The fixed bottom of each running state's stack (lp_state_build), below every hook call:
   the message handler of every protected call, the call objects, then each hook's functions
   (nil where it has none): a hook call pushes its function and call object with lua_pushvalue. */
#define LP_SLOT_TRACEBACK 1
#define LP_SLOT_PROXY(d) (2 + (int)(d))
#define LP_SLOT_FN(k, after) (2 + LP_MAX_DEPTH + 2 * (int)(k) + (int)(after))

/* allow= words */
#define LP_ALLOW_OS 1u
#define LP_ALLOW_IO 2u
#define LP_ALLOW_DEBUG 4u
#define LP_ALLOW_REQUIRE 8u     /* package/require of Lua modules               */
#define LP_ALLOW_CMODULES 16u   /* require of C modules (implies require)       */
#define LP_ALLOW_BYTECODE 32u   /* load() of precompiled chunks                 */

typedef struct lp_opts {
    char *script;               /* the policy file                               */
    int fail_open;              /* errors let calls pass (else they fail)        */
    uint32_t allow;             /* LP_ALLOW_*                                    */
    int64_t budget;             /* instructions per hook call                    */
    uint64_t mem;               /* bytes per Lua state                           */
    int reload;                 /* watch the file                                */
    int64_t reload_ms;          /* poll period                                   */
    int64_t error_rate;         /* error log lines per second                    */
    char **keys, **values;      /* the policy's own options (opt=KEY=VALUE)      */
    uint32_t nopts;
} lp_opts;

/* One hook declared by the policy: a selector and its before/after functions. */
typedef struct lp_hookdef {
    char *select;
    char *where;                /* "policy.lua:12:" of the declaration           */
    uint8_t before, after;      /* which functions it has                        */
    uint8_t table_form;         /* cushim.before.SEL / cushim.after.SEL (one entry per SEL) */
} lp_hookdef;

typedef struct lp_gen {
    uint64_t number;            /* 1, 2, ... in load order                       */
    char *source;               /* the policy text                               */
    size_t len;
    lp_hookdef *hooks;
    uint32_t nhooks;
    uint32_t id_limit;
    uint32_t *first;            /* per API id: index into 'list' ...             */
    uint16_t *count;            /* ... and how many hooks apply                  */
    uint16_t *list;             /* hook indices, in declaration order            */
    uint32_t *one[2];           /* per API id and stage (0 before, 1 after): 0 no function,
                                   k + 1 only hook k's, LP_SEVERAL more than one     */
    uint32_t *dense;            /* per API id: 1.. for each hooked API, 0 others   */
    uint32_t nhooked;           /* hooked APIs (the largest 'dense')               */
    char *select_all;           /* union of the selectors (host hook group)      */
    uint64_t group;
    int registered;
    int refs;                   /* under lp_gen_lock: states + 1 while current   */
} lp_gen;

typedef struct lp_mem {
    size_t used, cap;
    int over;                   /* an allocation was refused                     */
} lp_mem;

/* The call object handed to hooks: a full userdata per nesting depth. */
typedef struct lp_proxy {
    cushim_call *call;          /* NULL outside a hook                           */
    struct lp_thread *t;
    int after;                  /* 0 in before hooks, 1 in after hooks           */
    int vouched;                /* the real call vouched for the pointers (lp_trusted) */
    int state_ref;              /* per-call table (LUA_NOREF until used)         */
    struct lp_pnames *pn;       /* the parameter names of the API it last served  */
} lp_proxy;

typedef struct lp_thread {
    struct lp_thread *prev, *next;   /* every lp_thread, under lp_threads_lock (not the hot path) */
    lua_State *L;
    lp_gen *gen;                /* the generation L runs (a reference)           */
    lp_mem mem;
    int *fn_before, *fn_after;  /* registry refs per hook index (LUA_NOREF)      */
    int proxy_ref[LP_MAX_DEPTH];
    lp_proxy *proxy[LP_MAX_DEPTH];
    int exit_ref;               /* table of cushim.at_exit functions             */
    int broken;                 /* the state could not be built for 'gen'        */
    uint32_t pending;           /* before stages awaiting their after stage      */
    uint64_t last_seq;          /* the call whose before stage ran last          */
    int loading;                /* the script's top level is running             */
    int validating;             /* the state only checks a new generation        */
    lp_gen *declaring;          /* hooks collected while loading (validation)    */
    lp_hookdef *decl;
    uint32_t ndecl, capdecl;
    int exiting;                /* at_exit functions are running                 */
    int64_t used, limit;        /* instructions charged to the run, and its budget (lp_sandbox.c) */
    int spent;                  /* the run went past 'limit': every instruction raises until it ends */
    void *entry;                /* the one argument the plugin's next own C function takes (lp_enter) */
    int top;                    /* the height of the fixed stack (LP_SLOT_*)     */
    struct lp_pnames **pnames;  /* per gen->dense index: parameter names as this
                                   state's strings (lp_call.c), built on first use */
} lp_thread;

/* The engine (one per process: the plugin's name is unique). */
typedef struct lp_engine {
    const cushim_host *host;
    cushim_plugin *self;
    lp_opts o;
    lp_lua_lib lib;
    _Atomic(lp_gen *) current;
    pthread_mutex_t gen_lock;   /* generation references; never on the hot path  */
    uint64_t next_number;
    uint32_t tls_key;
    uint32_t id_limit;
    int32_t fail_cu, fail_rt;   /* what a call failed by an error returns        */
    int32_t nomem_cu, nomem_rt;
    _Atomic int64_t live_states, live_gens, reloads, failed_reloads, errors, errors_logged;
    _Atomic int64_t log_window, log_in_window;
    pthread_t watcher;
    int watching;
    _Atomic int stop;
    pthread_mutex_t stop_lock;
    pthread_cond_t stop_cond;
    uint64_t file_sig[4];       /* dev, ino, size, mtime ns of the loaded file   */
} lp_engine;

extern lp_engine lp_eng LP_HIDDEN;

/* lua.c */
void lp_log_error(const char *fmt, ...) LP_HIDDEN __attribute__((format(printf, 1, 2)));
/* print() and cushim.report: 'n' bytes (whole lines) to report= (default stderr), any thread */
void lp_report_write(const char *s, size_t n) LP_HIDDEN;
extern _Atomic int lp_restart_watcher LP_HIDDEN;   /* after fork: start the watcher again */
lp_thread *lp_thread_first(void) LP_HIDDEN;        /* a new thread's record, or NULL */
void lp_thread_switch(lp_thread *t) LP_HIDDEN;     /* to the current generation */

/* lp_gen.c */
void lp_gen_release(lp_gen *g) LP_HIDDEN;
lp_gen *lp_gen_acquire(void) LP_HIDDEN;          /* the current one, referenced; or NULL */
lp_gen *lp_gen_load(char *err, size_t errlen) LP_HIDDEN;   /* read, compile, validate */
int lp_publish(lp_gen *g) LP_HIDDEN;             /* make it current (its reference becomes current's) */
void lp_reload(void) LP_HIDDEN;
void lp_watch_start(void) LP_HIDDEN;
void lp_watch_stop(void) LP_HIDDEN;

/* The thread record of a Lua state, from any of its coroutines: kept in the main thread's extra
   space (lp_state_build), which Lua copies into every coroutine the state creates. */
static inline lp_thread *lp_state_thread(lua_State *L)
{
    return *(lp_thread **)lua_getextraspace(L);
}

/* lp_sandbox.c */
void lp_sandbox_open(lua_State *L) LP_HIDDEN;   /* the libraries and the guards, in a protected call */
void lp_budget_hook(lua_State *L, lua_Debug *ar) LP_HIDDEN;
void lp_budget_charge(lua_State *L, int64_t n) LP_HIDDEN;   /* n more instructions; raises past the budget */
#define LP_TICK 1000   /* instructions between two count events of a run's main thread */
/* A run of at most 'limit' instructions starts on the state's main thread: the count restarts. */
static inline void lp_budget_start(lua_State *L, lp_thread *t, int64_t limit)
{
    t->used = 0;
    t->limit = limit;
    t->spent = 0;
    lua_sethook(L, lp_budget_hook, LUA_MASKCOUNT, LP_TICK);
}

/* lp_pattern.c */
void lp_pattern_open(lua_State *L) LP_HIDDEN;   /* find, match, gmatch, gsub into the table at -1 */

/* lp_state.c */
lp_thread *lp_thread_new(void) LP_HIDDEN;
void lp_thread_free(lp_thread *t) LP_HIDDEN;
void lp_threads_fork_child(void) LP_HIDDEN;
const char *lp_script_base(void) LP_HIDDEN;   /* the policy file's name without its directory */
/* Builds t's state for 'g' (validating: collects the hooks into t->decl).
   0, or -1 with the error text in 'err'. */
int lp_state_build(lp_thread *t, lp_gen *g, int validating, char *err, size_t errlen) LP_HIDDEN;
void lp_state_close(lp_thread *t) LP_HIDDEN;
int lp_pre(cushim_call *call, void *user, uint64_t *slot) LP_HIDDEN;     /* the hooks */
void lp_post(cushim_call *call, void *user, uint64_t *slot) LP_HIDDEN;
void lp_state_run_exit(lp_thread *t) LP_HIDDEN;

/* lp_call.c */
void lp_pnames_free(lp_thread *t) LP_HIDDEN;   /* with the state: the parameter-name cache */

/* lp_bridge.c */
int lp_bridge_init(void) LP_HIDDEN;                         /* at init, one thread */
void lp_bridge_open(lua_State *L, lp_thread *t) LP_HIDDEN;   /* inside a protected call */
void lp_proxy_new(lua_State *L, lp_thread *t, int depth) LP_HIDDEN; /* sets t->proxy[depth] and its ref */
extern char lp_skip_key LP_HIDDEN;                            /* cushim.skip's first value */
int lp_result_code(lua_State *L, int idx, uint32_t ret_kind, int32_t *code) LP_HIDDEN;
/* cushim_mem_readable, kept in one file (lp_values.c): each file that calls cushim_io.h's safe reads has its own
   copy of their thread-local state, and the plugins' static TLS is budgeted (ctest plugin_tls_budget). */
int lp_mem_readable(const void *p, size_t n) LP_HIDDEN;
int lp_code_of(lua_State *L, int idx, uint32_t ret_kind, int32_t *code, char *err, size_t errlen) LP_HIDDEN;
const char *lp_result_name(uint32_t kind, int32_t code) LP_HIDDEN;

/* lp_shared.c */
void lp_shared_open(lua_State *L) LP_HIDDEN;   /* pushes the cushim.shared table */
void lp_shared_fork_child(void) LP_HIDDEN;

#endif /* LP_INTERNAL_H */
