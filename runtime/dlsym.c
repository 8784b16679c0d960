/*
 * dlsym.c - what our dlsym/dlvsym overrides answer (the entries are in
 * dlsym_entry.c).
 *
 * Non-CUDA names, unwrapped names and CUSHIM_DISABLE: "forward" - the entry
 * jumps to glibc's function with the caller's own arguments and return
 * address, so the answer (RTLD_NEXT included) is exactly glibc's. No locks.
 *
 * A wrapped name: take the answer glibc gives for that handle. NULL stays
 * NULL (a program probing for CUDA without a driver sees no difference). A
 * function of the real libcuda/libcudart, or our own export, becomes our
 * wrapper, and the real pointer is recorded for the wrapper. Anything else
 * (another object's definition, e.g. a static cudart in the executable) is
 * returned unchanged. RTLD_DEFAULT looks past the shim: our exports alone
 * never make cuInit appear to exist (nor do they on dlopen(NULL) or any other
 * handle but the shim's own). RTLD_NEXT is answered for the caller's
 * position (dl_next_answer).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <string.h>

#include "rt_internal.h"

/*
 * 'name' in the scope of the object 'lm' (it and its dependencies). A link_map
 * is a valid dlsym() handle only for objects that were dlopen'ed: take a real
 * handle with RTLD_NOLOAD (no load, one reference, dropped again).
 */
static void *dl_sym_in_scope_of(const struct link_map *lm, const char *name)
{
    void *h = dlopen(lm->l_name[0] ? lm->l_name : NULL, RTLD_LAZY | RTLD_NOLOAD);
    if (h == NULL)
        return NULL;
    void *r = rl_dlsym(h, name);
    dlclose(h);
    return r;
}

/* The real answer for (handle, name[, version]) as the caller would get it. */
static void *dl_real_answer(void *handle, const char *name, const char *version, void *caller,
                            int *cls)
{
    void *r;
    if (version != NULL) {
        rl_dlvsym_fn fv = rl_real_dlvsym();
        r = fv ? fv(handle, name, version) : NULL;
    } else {
        r = rl_dlsym(handle, name);
    }
    *cls = rl_classify(r);
    if ((handle == RTLD_DEFAULT && r == NULL) ||
        (*cls == RL_SELF && handle != rl_self_handle() && !rl_is_dropin())) {
        /* Look past the shim (RTLD_DEFAULT, dlopen(NULL) and any handle whose
           scope holds the shim), then, for RTLD_DEFAULT, through the caller's
           own dependencies (a caller loaded RTLD_LOCAL with libcuda among them).
           The drop-in is libcuda: its own answers stand. */
        void *n = rl_dlsym_next(name);
        if (n == NULL && handle == RTLD_DEFAULT) {
            Dl_info di;
            struct link_map *lm = NULL;
            if (caller != NULL && dladdr1(caller, &di, (void **)&lm, RTLD_DL_LINKMAP) != 0 && lm != NULL)
                n = dl_sym_in_scope_of(lm, name);
        }
        r = n;
        *cls = rl_classify(r);
        if (*cls == RL_SELF)
            r = NULL, *cls = RL_NONE;
    }
    return r;
}

/*
 * RTLD_NEXT for 'caller', as glibc would answer without the shim. glibc can
 * only answer for its own caller (the return address), and forwarding would
 * find our exports when the caller precedes the shim. So: F = the first
 * definition in the global scope other than ours; if F's object comes after
 * the caller, F is the answer. Else, for a caller after F, the first
 * definition after the caller in load order (not ours). With no global
 * definition, the caller's own dependencies (a caller loaded RTLD_LOCAL);
 * an object loaded RTLD_LOCAL elsewhere stays invisible, as in glibc.
 */
static void *dl_next_answer(const char *name, void *caller)
{
    Dl_info di;
    struct link_map *lm = NULL;
    if (caller == NULL || dladdr1(caller, &di, (void **)&lm, RTLD_DL_LINKMAP) == 0 || lm == NULL)
        return NULL;
    int dropin = rl_is_dropin();   /* the drop-in is libcuda: its definitions count */
    uintptr_t skip = dropin ? UINTPTR_MAX : rl_self_base();
    void *f = rl_dlsym(RTLD_DEFAULT, name);
    if (!dropin && rl_classify(f) == RL_SELF)
        f = rl_dlsym_next(name);
    uintptr_t fbase;
    const char *fname;
    if (f != NULL && rl_object_of(f, &fbase, &fname)) {
        if (fbase != lm->l_addr && elf_loaded_after(fbase, lm->l_addr))
            return f;
        return elf_next_definer(lm->l_addr, lm->l_name, skip, name);
    }
    void *x = dl_sym_in_scope_of(lm, name);
    uintptr_t xbase;
    const char *xname;
    if (x == NULL || (!dropin && rl_classify(x) == RL_SELF) || !rl_object_of(x, &xbase, &xname) ||
        xbase == lm->l_addr)
        return NULL;
    return x;
}

/*
 * dlerror() after our answer must agree with it, as after glibc's: NULL comes
 * with an error message (callers that test dlerror() rather than the pointer
 * would otherwise call NULL), a symbol with none. Our own look-ups on the way
 * (a successful dlopen/dlclose clears the message, a failed internal one sets
 * it) say nothing about the answer. A NULL answer gets "<object>: undefined
 * symbol: <name>" from a look-up that must fail: RTLD_NEXT from the shim, or
 * libc's own handle (libc defines no CUDA name; the handle is kept open).
 */
__attribute__((noinline)) static void dl_set_missing(const char *name, const char *version)
{
    static _Atomic(void *) libc_h;
    rl_dlvsym_fn fv = version ? rl_real_dlvsym() : NULL;
    void *r = fv ? fv(RTLD_NEXT, name, version) : rl_dlsym_next(name);
    if (r == NULL)
        return;
    void *h = atomic_load_explicit(&libc_h, memory_order_acquire);
    if (h == NULL) {
        h = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
        void *expected = NULL;
        if (h != NULL && !atomic_compare_exchange_strong(&libc_h, &expected, h)) {
            dlclose(h);
            h = expected;
        }
    }
    if (h != NULL)
        r = fv ? fv(h, name, version) : rl_dlsym(h, name);
    __asm__ volatile("" : : "r"(r) : "memory");   /* no tail call: the caller must be the shim */
}

static void *dl_answer(void *handle, const char *name, const char *version, void *caller, uint32_t id);

void *dl_decide(void *handle, const char *name, const char *version, void *caller, void **fwd)
{
    /* Until 'name' is known to be ours: no libc call, no instrumentation (elfsym.c). */
    void *real_fn = version ? (void *)elf_real_dlvsym() : (void *)elf_real_dlsym();
    *fwd = real_fn;
    if (real_fn == NULL) {
        *fwd = NULL;
        return NULL;
    }
    if (name == NULL || name[0] != 'c' || name[1] != 'u')
        return NULL;
    int idx = api_index_by_name(name);
    if (idx < 0 || cfg_get()->disable)
        return NULL;
    uint32_t id = cushim_gen_apis[idx].id;
    rt_init();
    *fwd = NULL;
    void *r = dl_answer(handle, name, version, caller, id);
    if (r == NULL)
        dl_set_missing(name, version);
    else
        (void)dlerror();   /* clear what our own look-ups left */
    return r;
}

static void *dl_answer(void *handle, const char *name, const char *version, void *caller, uint32_t id)
{
    if (handle == RTLD_NEXT) {
        void *next = dl_next_answer(name, caller);
        int cls = rl_classify(next);
        if (cls == RL_DRIVER || cls == RL_RUNTIME) {
            rt_record_real(id, next);
            return rt_wrapper_of[id];
        }
        return next;
    }

    int cls;
    void *r = dl_real_answer(handle, name, version, caller, &cls);
    if (r == NULL)
        return NULL;
    switch (cls) {
    case RL_SELF:
        return r;
    case RL_DRIVER:
    case RL_RUNTIME:
        rt_record_real(id, r);
        return rt_wrapper_of[id];
    default:
        return r;
    }
}
