/*
 * rt_internal.h - declarations shared by the modules of the runtime (libcushim.so).
 *
 * Module prefixes: rt_ dispatch core (dispatch.c), hk_ hook chains (hooks.c),
 * cnt_ call counter (counts.c), cfg_ configuration (config.c), log_ logging
 * (log.c), elf_ ELF symbol tables of loaded objects (elfsym.c), rl_ real
 * libraries and the real dlsym (reallib.c), dl_ the dlsym/dlvsym decision
 * (dlsym.c, dlsym_entry.c), gp_ cuGetProcAddress interposition (getproc.c),
 * api_ metadata look-ups (api.c). Nothing here is exported from the library.
 */
#ifndef RT_INTERNAL_H
#define RT_INTERNAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "cushim/cushim.h"
#include "cushim_api_ids.h"

#define RT_HIDDEN __attribute__((visibility("hidden")))
#define CUSHIM_EXPORT __attribute__((visibility("default")))
#define RT_LIKELY(x) __builtin_expect(!!(x), 1)
#define RT_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* ---- generated metadata (cushim_meta.c) ---- */
extern const cushim_api_info cushim_gen_apis[];
extern const uint32_t cushim_gen_api_count;
extern const uint16_t cushim_gen_by_name[];
extern const int16_t cushim_gen_index_of_id[CUSHIM_API_ID_LIMIT];

/* api.c */
int api_index_by_name(const char *name);          /* index into cushim_gen_apis or -1 */
const cushim_api_info *api_info(uint32_t id);      /* NULL if absent */

/* ---- hook chains (hooks.c) ---- */
typedef struct hk_entry {
    int priority;
    uint32_t seq;
    cushim_pre_fn pre;
    cushim_post_fn post;
    void *user;
} hk_entry;

/* Immutable once published; never freed while the process runs. */
typedef struct hk_chain {
    struct hk_chain *retired_next;   /* graveyard link                    */
    uint32_t n;                      /* number of hooks                    */
    uint32_t count;                  /* 1: the call counter is on          */
    hk_entry e[];
} hk_chain;

void hk_install_counting(void);      /* every API gets at least the counting chain */
void hk_lock(void);                  /* fork handlers */
void hk_unlock(void);
void hk_reset_after_fork(void);      /* fork child */

/* ---- dispatch (dispatch.c) ---- */
typedef struct rt_slot {
    _Atomic(void *) real;                  /* what the fast path tail-calls   */
    _Atomic(const hk_chain *) chain;       /* NULL: no hook, no counter       */
} rt_slot;

extern rt_slot rt_slots[CUSHIM_API_ID_LIMIT];
/* wrapper_table.c */
extern void *const rt_wrapper_of[CUSHIM_API_ID_LIMIT];   /* our exported wrapper       */
extern void *const rt_slow_of[CUSHIM_API_ID_LIMIT];      /* its slow path              */
/* What the wrapper tail-calls: slot.real when resolved and slot.chain is NULL,
   else rt_slow_of[id]. Written only under the hook mutex (rt_fast_update). */
extern _Atomic(void *) rt_fast[CUSHIM_API_ID_LIMIT];
void rt_fast_update(uint32_t id);          /* caller holds hk_lock() */

enum { RT_MODE_FAIL = 0, RT_MODE_DIRECT = 1, RT_MODE_HOOKED = 2 };

typedef struct rt_frame {
    int mode;
    uint32_t npre;                      /* pre hooks reached (post hooks run for these) */
    const hk_chain *chain;
    uint64_t slots[CUSHIM_MAX_HOOKS];
} rt_frame;

void rt_init(void);                       /* idempotent, any thread, any time */
void *rt_enter(uint32_t id, rt_frame *f); /* slow path prologue: returns the real */
int rt_pre(cushim_call *call, rt_frame *f);   /* 1 if a pre hook skipped */
void rt_post(cushim_call *call, rt_frame *f);
void *rt_resolve(uint32_t id);            /* slot real, resolving it once */
void *rt_lib_real(uint32_t id);           /* the library's own function */
void rt_record_real(uint32_t id, void *lib_fn);
int rt_depth_get(void);

/* ---- call counter (counts.c) ---- */
extern int cnt_enabled;
void cnt_init(void);
void cnt_add(uint32_t id);
uint64_t cnt_get(uint32_t id);
void cnt_write(void);
void cnt_after_fork_child(void);
/* Where a CUSHIM_COUNTS path sends its lines (cnt_init): CNT_KIND_FD for one of the
   process's own descriptors (*fd set: /dev/stderr, /dev/fd/N, /proc/self/fd/N, or a
   link to one), CNT_KIND_APPEND for another non-regular or /proc path (opened and
   appended to at exit), CNT_KIND_FILE for a regular file (claimed, may be created),
   CNT_KIND_BAD when it cannot be used (*err set: a directory, a missing device). */
enum { CNT_KIND_FILE = 0, CNT_KIND_FD = 1, CNT_KIND_APPEND = 2, CNT_KIND_BAD = 3 };
int cnt_path_kind(const char *path, int *fd, int *err);

/* ---- configuration (config.c) ---- */
enum { LOG_DEBUG = 0, LOG_INFO = 1, LOG_WARN = 2, LOG_ERROR = 3, LOG_OFF = 4 };
enum { CFG_DISABLE_ENV = 1, CFG_DISABLE_PEER = 2 };   /* rt_config.disable, non-zero: why */
typedef struct rt_config {
    int disable;                /* CUSHIM_DISABLE=1, or another copy of cushim came first */
    int log_level;              /* CUSHIM_LOG */
    int log_fd;                 /* CUSHIM_LOG_FILE or stderr */
    const char *counts_path;    /* CUSHIM_COUNTS or NULL ("-" when counts_fd is set) */
    const char *real_libcuda;   /* CUSHIM_REAL_LIBCUDA or NULL */
    int counts_fd;              /* CUSHIM_COUNTS=-: fd 2 as it was at start (dup, CLOEXEC), or -1 */
} rt_config;
const rt_config *cfg_get(void);
/* Where log lines go: log_fd while it still is the CUSHIM_LOG_FILE opened at load
   (a program that closed it may have reused the number), else stderr. */
int cfg_log_target(void);
/* Secure-execution mode (AT_SECURE: setuid, setgid, file capabilities). */
int cfg_secure(void);
/* getenv for a variable that names a file or code (CUSHIM_REAL_LIBCUDA, CUSHIM_COUNTS,
   CUSHIM_LOG_FILE, CUSHIM_PLUGINS, ...): NULL in secure-execution mode, with one log
   line per variable that was set. Every such variable must be read through this. */
const char *cfg_env_path(const char *name);
/* The value parser behind cfg_get, pure (no environment, no files): checks 'value'
   of variable 'var' (CFG_VAR_*). Returns 0 when accepted (*out: the boolean, the log
   level, or for a path CFG_PATH_STDERR / CFG_PATH_FILE), -1 when not: then 'msg'
   holds the one line to log (variable, quoted value, reason, what happens instead)
   and *out the default. Exposed for the fuzz harness (tests/fuzz/). */
enum { CFG_VAR_DISABLE, CFG_VAR_LOG, CFG_VAR_LOG_FILE, CFG_VAR_COUNTS, CFG_VAR_REAL_LIBCUDA,
       CFG_VAR_COUNT_ };
enum { CFG_PATH_FILE = 1, CFG_PATH_STDERR = 2 };
#define CFG_PATH_MAX 4096            /* longest accepted path value, NUL included */
int cfg_parse(int var, const char *value, int *out, char *msg, size_t cap);
/* 'value' quoted for a log line: non-printable bytes as \xNN, cut at 'cap'. */
void cfg_quote(const char *value, char *buf, size_t cap);

/* peer.c (config level): another copy of cushim loaded first. */
/* 1 when an object loaded before this one (link-map order) exports
   cushim_api_id_limit, i.e. is another copy of cushim: its file name is copied to
   'peer' and ours to 'self' (cap bytes each). No libc look-up, no allocation: safe
   from any constructor, before ours. */
int peer_find(char *peer, char *self, size_t cap);

/* ---- logging (log.c) ---- */
void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)
/* One line 'text' at 'level' to 'fd', unfiltered: for config.c, which cannot call
   cfg_get while it is loading the configuration. */
void log_line(int fd, int level, const char *text);

/* ---- ELF symbol tables (elfsym.c) ---- */
typedef void *(*rl_dlsym_fn)(void *, const char *);
typedef void *(*rl_dlvsym_fn)(void *, const char *, const char *);
rl_dlsym_fn elf_real_dlsym(void);     /* glibc's; safe before any initialisation */
rl_dlvsym_fn elf_real_dlvsym(void);
void *elf_find_in_libc(const char *name);   /* default-version definition in libc.so.6 / libdl.so.2 */
/* Objects after the one loaded at 'after_addr' named 'after_name' (its l_addr and
   l_name), in load order, except the one at 'skip_addr': the first that defines
   'name'. Returns its symbol address (an IFUNC's resolver) or NULL. */
void *elf_next_definer(uintptr_t after_addr, const char *after_name, uintptr_t skip_addr,
                       const char *name);
void *elf_next_definer_obj(uintptr_t after_addr, const char *after_name, uintptr_t skip_addr,
                           const char *name, uintptr_t *def_addr, const char **def_name);
int elf_loaded_after(uintptr_t a, uintptr_t b);   /* object at a comes after object at b */
const char *elf_object_symbol(uintptr_t base, uint32_t k, void **addr);   /* k-th export, NULL past the end */
void *elf_chain_next(const char *name);     /* next "dlsym"/"dlvsym" after us (an interposer's or libc's) */
int elf_object_defines(uintptr_t base, const char *name);        /* the object loaded at base */
int elf_object_defines_at(const void *addr, const char *name);   /* the object containing addr */
int elf_version_matches(const void *addr, const char *name, const char *version);   /* as glibc's dlvsym */

/* ---- real libraries (reallib.c) ---- */
enum { RL_NONE = 0, RL_SELF = 1, RL_DRIVER = 2, RL_RUNTIME = 3, RL_OTHER = 4 };
rl_dlsym_fn rl_real_dlsym(void);
rl_dlvsym_fn rl_real_dlvsym(void);
void *rl_dlsym(void *handle, const char *name);   /* glibc's, caller = the shim */
void *rl_dlsym_next(const char *name);            /* RTLD_NEXT relative to the shim */
void *rl_driver_handle(void);                     /* NULL if no driver (searched again after a load) */
void *rl_next_layer(const char *name);            /* another interposer's 'name' after us, or NULL */
void *rl_prev_layer(const char *name);            /* a preloaded interposer's 'name' before us, or NULL */
void *rl_driver_real(const char *name);           /* the next layer's, else the driver's; pinned */
void rl_pin(const void *fn);                      /* keep fn's object loaded for good */
void *rl_runtime_real(const char *name);
/* N of the libcudart.so.N defining 'fn', 0 when it is not such a library. */
int rl_runtime_major(const void *fn);
int rl_classify(const void *addr);
int rl_object_of(const void *addr, uintptr_t *base, const char **name);
uintptr_t rl_self_base(void);
void *rl_self_handle(void);                       /* our link_map = our dlopen handle */
int rl_is_dropin(void);

/* ---- cuGetProcAddress family (getproc.c) ---- */
void *gp_handler_for(uint32_t id);          /* hand-written "real", or NULL */
uint64_t gp_passthrough_count(void);
void gp_lock(void);
void gp_unlock(void);
void gp_reset_after_fork(void);      /* fork child */

#endif /* RT_INTERNAL_H */
