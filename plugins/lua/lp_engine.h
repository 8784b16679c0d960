/*
 * lp_engine.h - the Lua policy engine's state and its shared types, at the bottom
 * of the plugin's layers (docs/lua-policies.md, "Layers"): the engine 'lp_eng'
 * (the host, options, liblua, counters), a thread's record (lp_thread) and its
 * call objects (lp_proxy); the error log.
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

/* A generation and one hook it declares: lp_gen.h. */
typedef struct lp_gen lp_gen;
typedef struct lp_hookdef lp_hookdef;

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
    uint32_t tls_key;
    uint32_t id_limit;
    int32_t fail_cu, fail_rt;   /* what a call failed by an error returns        */
    /* counters (cushim.stats), each written by one module: live_states lp_state.c, live_gens lp_gen.c,
       reloads and failed_reloads lp_watch.c, the others the error log (lp_engine.c) */
    _Atomic int64_t live_states, live_gens, reloads, failed_reloads, errors, errors_logged;
    _Atomic int64_t log_window, log_in_window;
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
