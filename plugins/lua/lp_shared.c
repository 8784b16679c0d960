/*
 * lp_shared.c - state every thread's Lua state shares, kept on the C side
 * (Lua values cannot cross states), and kept across reloads.
 *
 *   cushim.shared.add(key [, n])      atomic counter += n (default 1); the new value
 *   cushim.shared.counter(key)        its value (0 if never added to)
 *   cushim.shared.counters([prefix])  { key = value, ... } of the counters
 *   cushim.shared.set(key, value)     key/value table: nil, boolean, number, string
 *   cushim.shared.get(key)            its value or nil
 *
 * Counters: an open-addressing table of LP_NCTR slots, lock-free (a slot's key
 * is published once by compare-and-swap and never removed; the value is one
 * atomic). The key/value table: LP_NSTRIPE mutexes over chained buckets; a
 * lock is held only to copy one value in or out, never across Lua code.
 *
 * Bounded like a Lua state: the bytes held for the policy - every key and
 * string value, plus LP_KV_OVERHEAD per entry or counter - count against mem=,
 * once for the process (lp_shared_bytes). What would pass it is refused with
 * an error the policy sees; deleting a key gives its bytes back.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "lp_engine.h"
#include "lp_load.h"
#include "lp_shared.h"

#define LP_NCTR 8192            /* counters (power of two)                 */
#define LP_NSTRIPE 64
#define LP_NBUCKET 4096         /* key/value buckets (multiple of stripes) */
#define LP_KV_MAX_ENTRIES (1u << 20)
#define LP_KV_MAX_VALUE (64u << 10)
#define LP_KV_OVERHEAD 96u      /* bytes counted per entry or counter besides its key and value:
                                   the record and two allocations' headers */

typedef struct lp_ctr {
    _Atomic(char *) key;
    _Atomic int64_t value;
} lp_ctr;

static lp_ctr lp_ctrs[LP_NCTR];

typedef struct lp_kv {
    struct lp_kv *next;
    char *key;
    int type;               /* LUA_TBOOLEAN, LUA_TNUMBER, LUA_TSTRING */
    int isint;
    lua_Integer i;
    lua_Number n;
    size_t len;
    char *s;
    size_t cost;            /* counted against mem= (lp_shared_bytes) */
} lp_kv;

static _Atomic uint64_t lp_shared_bytes;   /* held for keys and values, against mem= */

/* Takes 'n' more bytes from mem= for the shared table, never past it: 0, or -1 when they do not fit.
   No Lua here (a lock may be held). */
static int lp_shared_take(uint64_t n)
{
    uint64_t cur = atomic_load_explicit(&lp_shared_bytes, memory_order_relaxed);
    do {
        if (cur > lp_eng.o.mem || n > lp_eng.o.mem - cur)
            return -1;
    } while (!atomic_compare_exchange_weak_explicit(&lp_shared_bytes, &cur, cur + n, memory_order_relaxed,
                                                    memory_order_relaxed));
    return 0;
}

static void lp_shared_give(uint64_t n)
{
    atomic_fetch_sub_explicit(&lp_shared_bytes, n, memory_order_relaxed);
}

static int lp_shared_full(lua_State *L, const char *fn, uint64_t n)
{
    return luaL_error(L, "cushim.shared.%s: %I more bytes would pass mem=%I, which bounds the shared table "
                      "(keys and values of every thread: %I bytes held); delete keys with set(key, nil)", fn,
                      (lua_Integer)n, (lua_Integer)lp_eng.o.mem,
                      (lua_Integer)atomic_load_explicit(&lp_shared_bytes, memory_order_relaxed));
}

static lp_kv *lp_buckets[LP_NBUCKET];
static pthread_mutex_t lp_stripes[LP_NSTRIPE];
static _Atomic uint32_t lp_kv_entries;
static pthread_once_t lp_stripes_once = PTHREAD_ONCE_INIT;

static void lp_stripes_init(void)
{
    for (int i = 0; i < LP_NSTRIPE; i++)
        pthread_mutex_init(&lp_stripes[i], NULL);
}

void lp_shared_fork_child(void)
{
    for (int i = 0; i < LP_NSTRIPE; i++)
        pthread_mutex_init(&lp_stripes[i], NULL);
}

static uint64_t lp_hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

static const char *lp_key(lua_State *L, size_t *len)
{
    const char *k = luaL_checklstring(L, 1, len);
    if (*len == 0 || *len > 1024 || memchr(k, '\0', *len) != NULL)
        luaL_argerror(L, 1, "a key is 1 to 1024 bytes without NUL");
    return k;
}

/* The counter of 'key', or NULL: none (!create), or none could be made - *full is then 1 where mem= has
   no room for its key, else the table is full or memory ran out. */
static lp_ctr *lp_ctr_find(const char *key, size_t len, int create, int *full)
{
    uint64_t h = lp_hash(key, len);
    for (uint32_t probe = 0; probe < LP_NCTR; probe++) {
        lp_ctr *c = &lp_ctrs[(h + probe) & (LP_NCTR - 1)];
        char *k = atomic_load_explicit(&c->key, memory_order_acquire);
        if (k == NULL) {
            char *dup;
            if (!create)
                return NULL;
            if (lp_shared_take(len + 1 + LP_KV_OVERHEAD) != 0) {
                *full = 1;
                return NULL;
            }
            dup = strndup(key, len);
            if (dup == NULL) {
                lp_shared_give(len + 1 + LP_KV_OVERHEAD);
                return NULL;
            }
            if (atomic_compare_exchange_strong_explicit(&c->key, &k, dup, memory_order_acq_rel,
                                                        memory_order_acquire))
                return c;
            free(dup);   /* another thread took the slot: 'k' is its key */
            lp_shared_give(len + 1 + LP_KV_OVERHEAD);
        }
        if (strcmp(k, key) == 0)
            return c;
    }
    return NULL;
}

static int lp_s_add(lua_State *L)
{
    size_t len;
    const char *key = lp_key(L, &len);
    lua_Integer n = luaL_optinteger(L, 2, 1);
    int full = 0;
    lp_ctr *c = lp_ctr_find(key, len, 1, &full);
    if (c == NULL && full)
        return lp_shared_full(L, "add", len + 1 + LP_KV_OVERHEAD);
    if (c == NULL)
        return luaL_error(L, "cushim.shared: the counter table is full (%d keys)", LP_NCTR);
    /* wraps around, as the atomic add does (a signed overflow of '+' would be undefined) */
    lua_pushinteger(L, (lua_Integer)((uint64_t)atomic_fetch_add_explicit(&c->value, (int64_t)n, memory_order_relaxed) +
                                     (uint64_t)n));
    return 1;
}

static int lp_s_counter(lua_State *L)
{
    size_t len;
    const char *key = lp_key(L, &len);
    lp_ctr *c = lp_ctr_find(key, len, 0, NULL);
    lua_pushinteger(L, c ? (lua_Integer)atomic_load_explicit(&c->value, memory_order_relaxed) : 0);
    return 1;
}

static int lp_s_counters(lua_State *L)
{
    size_t plen = 0;
    const char *prefix = luaL_optlstring(L, 1, "", &plen);
    lua_newtable(L);
    for (uint32_t i = 0; i < LP_NCTR; i++) {
        char *k = atomic_load_explicit(&lp_ctrs[i].key, memory_order_acquire);
        if (k != NULL && strncmp(k, prefix, plen) == 0) {
            lua_pushinteger(L, (lua_Integer)atomic_load_explicit(&lp_ctrs[i].value, memory_order_relaxed));
            lua_setfield(L, -2, k);
        }
    }
    return 1;
}

static void lp_kv_free(lp_kv *e)
{
    free(e->key);
    free(e->s);
    free(e);
}

static int lp_s_set(lua_State *L)
{
    size_t len, vlen = 0;
    const char *key = lp_key(L, &len);
    uint64_t h = lp_hash(key, len);
    uint32_t b = (uint32_t)(h % LP_NBUCKET);
    pthread_mutex_t *m = &lp_stripes[b % LP_NSTRIPE];
    lp_kv *e = NULL, **pp;
    int type = lua_type(L, 2);
    pthread_once(&lp_stripes_once, lp_stripes_init);
    if (type != LUA_TNIL && type != LUA_TNONE) {
        if (type != LUA_TBOOLEAN && type != LUA_TNUMBER && type != LUA_TSTRING)
            return luaL_argerror(L, 2, "a shared value is nil, a boolean, a number or a string");
        e = calloc(1, sizeof *e);
        if (e == NULL || (e->key = strndup(key, len)) == NULL) {
            free(e);
            return luaL_error(L, "out of memory");
        }
        e->type = type;
        if (type == LUA_TBOOLEAN) {
            e->i = lua_toboolean(L, 2);
        } else if (type == LUA_TNUMBER) {
            e->isint = lua_isinteger(L, 2);
            if (e->isint)
                e->i = lua_tointegerx(L, 2, NULL);
            else
                e->n = lua_tonumberx(L, 2, NULL);
        } else {
            const char *s = lua_tolstring(L, 2, &vlen);
            if (vlen > LP_KV_MAX_VALUE) {
                lp_kv_free(e);
                return luaL_argerror(L, 2, "a shared string is at most 64 KiB");
            }
            e->s = malloc(vlen + 1);
            if (e->s == NULL) {
                lp_kv_free(e);
                return luaL_error(L, "out of memory");
            }
            memcpy(e->s, s, vlen);
            e->s[vlen] = '\0';
            e->len = vlen;
            e->cost = vlen + 1;
        }
        e->cost += LP_KV_OVERHEAD + len + 1;
    }
    pthread_mutex_lock(m);
    for (pp = &lp_buckets[b]; *pp != NULL; pp = &(*pp)->next)
        if (strcmp((*pp)->key, e ? e->key : key) == 0)
            break;
    if (*pp != NULL) {
        lp_kv *old = *pp;
        if (e != NULL && e->cost > old->cost && lp_shared_take(e->cost - old->cost) != 0) {
            size_t more = e->cost - old->cost;
            pthread_mutex_unlock(m);
            lp_kv_free(e);
            return lp_shared_full(L, "set", more);
        }
        size_t back = e == NULL ? old->cost : e->cost < old->cost ? old->cost - e->cost : 0;
        if (e != NULL) {
            e->next = old->next;
            *pp = e;   /* another thread may replace and free it once unlocked */
        } else {
            *pp = old->next;
            atomic_fetch_sub(&lp_kv_entries, 1);
        }
        pthread_mutex_unlock(m);
        lp_shared_give(back);
        lp_kv_free(old);
        return 0;
    }
    if (e != NULL) {
        if (lp_shared_take(e->cost) != 0) {
            size_t more = e->cost;
            pthread_mutex_unlock(m);
            lp_kv_free(e);
            return lp_shared_full(L, "set", more);
        }
        if (atomic_fetch_add(&lp_kv_entries, 1) >= LP_KV_MAX_ENTRIES) {
            lp_shared_give(e->cost);
            atomic_fetch_sub(&lp_kv_entries, 1);
            pthread_mutex_unlock(m);
            lp_kv_free(e);
            return luaL_error(L, "cushim.shared: the key/value table is full (%d keys)", (int)LP_KV_MAX_ENTRIES);
        }
        e->next = lp_buckets[b];
        lp_buckets[b] = e;
    }
    pthread_mutex_unlock(m);
    return 0;
}

/* A string value is copied out under the lock into a buffer Lua owns (so that a
   memory error raised by Lua leaks nothing); when the value grew meanwhile,
   again with the larger size. */
static int lp_s_get(lua_State *L)
{
    size_t len, cap = 256;
    const char *key = lp_key(L, &len);
    uint64_t h = lp_hash(key, len);
    uint32_t b = (uint32_t)(h % LP_NBUCKET);
    pthread_mutex_t *m = &lp_stripes[b % LP_NSTRIPE];
    pthread_once(&lp_stripes_once, lp_stripes_init);
    for (;;) {
        char *buf = lua_newuserdatauv(L, cap, 0);
        lp_kv v = {0};
        int found = 0;
        pthread_mutex_lock(m);
        for (lp_kv *e = lp_buckets[b]; e != NULL; e = e->next)
            if (strcmp(e->key, key) == 0) {
                v = *e;
                found = 1;
                if (e->type == LUA_TSTRING && e->len <= cap)
                    memcpy(buf, e->s, e->len);
                break;
            }
        pthread_mutex_unlock(m);
        if (!found)
            return 0;
        switch (v.type) {
        case LUA_TBOOLEAN:
            lua_pushboolean(L, (int)v.i);
            return 1;
        case LUA_TNUMBER:
            if (v.isint)
                lua_pushinteger(L, v.i);
            else
                lua_pushnumber(L, v.n);
            return 1;
        default:
            if (v.len > cap) {
                cap = v.len;
                lua_pop(L, 1);
                continue;
            }
            lua_pushlstring(L, buf, v.len);
            return 1;
        }
    }
}

void lp_shared_open(lua_State *L)
{
    static const luaL_Reg funcs[] = {
        {"add", lp_s_add}, {"counter", lp_s_counter}, {"counters", lp_s_counters},
        {"set", lp_s_set}, {"get", lp_s_get},         {NULL, NULL},
    };
    pthread_once(&lp_stripes_once, lp_stripes_init);
    lua_newtable(L);
    luaL_setfuncs(L, funcs, 0);
}
