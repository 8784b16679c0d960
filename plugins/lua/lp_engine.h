/*
 * lp_engine.h - the Lua policy engine's state and its shared types, at the bottom
 * of the plugin's layers (docs/lua-policies.md, "Layers"): the engine 'lp_eng'
 * (options, the current generation, counters), a generation (lp_gen), a thread's
 * record (lp_thread) and its call objects (lp_proxy); the error log.
 *
 * A generation is one successful compilation of the policy file. The current
 * generation is one atomic pointer; each thread runs its own Lua state of the
 * generation it last saw (lp_thread), rebuilt when the pointer changes and the
 * thread is not in the middle of a hooked call.
 */
#ifndef LP_ENGINE_H
#define LP_ENGINE_H

#include <pthread.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <cushim/cushim.h>

#include "lp_load.h"

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
    int64_t used, limit;        /* instructions charged to the run, and its budget (lp_budget.c)  */
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

/* Hook errors: at most error_rate= lines a second; the rest are counted. */
void lp_log_error(const char *fmt, ...) LP_HIDDEN __attribute__((format(printf, 1, 2)));
const char *lp_script_base(void) LP_HIDDEN;   /* the policy file's name without its directory */

/* The thread record of a Lua state, from any of its coroutines: kept in the main thread's extra
   space (lp_state_build), which Lua copies into every coroutine the state creates. */
static inline lp_thread *lp_state_thread(lua_State *L)
{
    return *(lp_thread **)lua_getextraspace(L);
}

#endif /* LP_ENGINE_H */
