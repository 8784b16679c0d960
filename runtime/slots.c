/*
 * slots.c - the slots rt_slots[] and the only code that writes them.
 *
 * Per API id the wrapper tail-calls rt_slots[id].fast and the slow path calls
 * rt_slots[id].real (wrap.h). Both are functions of the slot's inputs, which
 * other modules hand in through the functions below and never store
 * themselves:
 *   published  the library's function, once the resolver publishes it
 *              (dispatch.c rt_resolve, rt_record_real); NULL until then
 *   handler    a hand-written function standing in for it (getproc.c: the
 *              cuGetProcAddress family), set at initialisation
 *   foreign    forwarded untouched: a copy of the library of another major,
 *              or one CUSHIM_LIBS leaves out (dispatch.c)
 *   chain      the hook chain, or the counter's (hooks.c)
 *   failed     failing closed (a required plugin did not load: plugins.c)
 * real = the handler when there is one and the slot is not foreign, else
 * the published function (NULL before). fast = real when real is known, the
 * slot has no chain or is foreign, and the shim has not failed closed or the
 * slot has a handler (the cuGetProcAddress family stays open); the first
 * entry while real is unknown; else the slow path.
 *
 * Recomputed lock-free by every writer after it changed an input (each input
 * store is seq_cst, and so are the loads and the stores below). Claim: once the
 * writers are done, .real and .fast are F of the final inputs. Take the last
 * store S to .fast (or to .real); its updater U left the loop, so its re-read R
 * after S saw the inputs it computed from. Any writer's final input store X
 * precedes that writer's own update, whose store to .fast precedes or is S,
 * which precedes R in the single total order of seq_cst operations; so R saw X
 * (or a later value, whose writer would store after S: impossible). Hence U
 * computed from the final inputs. Values that changed and changed back in
 * between do not matter: F depends on values only. No lock, so a signal
 * handler's first call of an API can publish while its thread holds the hook
 * mutex (issue #10 item 6a, rt_signal_test).
 */
#include <string.h>

#include "api.h"
#include "base.h"
#include "module.h"
#include "slots.h"
#include "wrapper_table.h"

#define CUSHIM_API(ID, NAME, RET, RETKIND, PROTO, ARGS, UNPACK) void rt_first_##NAME(void);
#include "cushim_apis.inc"
#undef CUSHIM_API

rt_slot rt_slots[CUSHIM_API_ID_LIMIT] = {
#define CUSHIM_API(ID, NAME, RET, RETKIND, PROTO, ARGS, UNPACK) [ID] = { .fast = (void *)rt_first_##NAME },
#include "cushim_apis.inc"
#undef CUSHIM_API
};

_Atomic int sl_failed_closed RT_HOT;
static _Atomic(void *) sl_published[CUSHIM_API_ID_LIMIT];
static _Atomic(void *) sl_handlers[CUSHIM_API_ID_LIMIT];
static char sl_why[768];

/* Every slot's index1 (initialisation). */
static void sl_init(void)
{
    for (uint32_t i = 0; i < cushim_gen_api_count; i++)
        if (cushim_gen_apis[i].id < CUSHIM_API_ID_LIMIT)
            rt_slots[cushim_gen_apis[i].id].index1 = (int16_t)(i + 1);
}

static void sl_update(uint32_t id)
{
    rt_slot *s = &rt_slots[id];
    for (;;) {
        void *lib = atomic_load(&sl_published[id]);
        void *h = atomic_load(&sl_handlers[id]);
        uint8_t foreign = atomic_load(&s->foreign);
        const struct hk_chain *ch = atomic_load(&s->chain);
        int failed = atomic_load(&sl_failed_closed);
        void *real = lib == NULL ? NULL : h != NULL && !foreign ? h : lib;
        int direct = real != NULL && (ch == NULL || foreign) && (!failed || h != NULL);
        atomic_store(&s->real, real);
        atomic_store(&s->fast, direct ? real : real == NULL ? rt_first_of[id] : rt_slow_of[id]);
        if (lib == atomic_load(&sl_published[id]) && h == atomic_load(&sl_handlers[id]) &&
            foreign == atomic_load(&s->foreign) && ch == atomic_load(&s->chain) &&
            failed == atomic_load(&sl_failed_closed))
            return;
    }
}

/* The first function published stays. Every caller recomputes the slot, the losers of the race too: a thread
   whose publish lost to another's that has not yet run sl_update would otherwise read .real still NULL right
   after and take the API for missing (e2e_firstcall, once under load: 799 of 800 first calls of cuInit). */
void sl_publish(uint32_t id, void *lib)
{
    void *expected = NULL;
    if (id >= CUSHIM_API_ID_LIMIT || lib == NULL)
        return;
    atomic_compare_exchange_strong(&sl_published[id], &expected, lib);
    sl_update(id);
}

void sl_set_handler(uint32_t id, void *fn)
{
    if (id >= CUSHIM_API_ID_LIMIT)
        return;
    atomic_store(&sl_handlers[id], fn);
    sl_update(id);
}

void *sl_handler(uint32_t id)
{
    return id < CUSHIM_API_ID_LIMIT ? atomic_load_explicit(&sl_handlers[id], memory_order_relaxed) : NULL;
}

void sl_set_foreign(uint32_t id)
{
    if (atomic_exchange(&rt_slots[id].foreign, 1) == 0)
        sl_update(id);
}

void sl_set_chain(uint32_t id, const struct hk_chain *chain)
{
    atomic_store(&rt_slots[id].chain, chain);
    sl_update(id);
}

int sl_set_chain_if_none(uint32_t id, const struct hk_chain *chain)
{
    const struct hk_chain *expected = NULL;
    int set = atomic_compare_exchange_strong(&rt_slots[id].chain, &expected, chain);
    sl_update(id);
    return set;
}

void sl_fail_closed(const char *why)
{
    if (atomic_load(&sl_failed_closed))
        return;
    strncpy(sl_why, why, sizeof sl_why - 1);
    atomic_store(&sl_failed_closed, 1);
    for (uint32_t i = 0; i < cushim_gen_api_count; i++)
        sl_update(cushim_gen_apis[i].id);
}

const char *sl_fail_reason(void)
{
    return sl_why;
}

LC_MODULE(slots, .level = LC_TABLES, .init = sl_init);
