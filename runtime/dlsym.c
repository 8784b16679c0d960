/*
 * dlsym.c - what our dlsym/dlvsym overrides answer (the entries are in
 * dlsym_entry.c).
 *
 * Non-CUDA names, unwrapped names and CUSHIM_DISABLE: "forward" - the entry
 * jumps, with the caller's own arguments and return address, to the next
 * dlsym/dlvsym in the chain of interposers (another interposer's loaded after
 * us, else glibc's); RTLD_NEXT look-ups always to glibc's, whose answer for
 * the caller is exact. No locks.
 *
 * A wrapped name: take the answer the next dlsym gives for that handle (an
 * interposer after us sees the look-up). NULL stays NULL (a program probing
 * for CUDA without a driver sees no difference). A dlvsym answer whose
 * definition does not carry the version asked for is NULL, as in glibc. Then:
 *   - a function of the real libcuda/libcudart becomes the function of the
 *     interposer preloaded before us that defines the name, if any (it leads
 *     to us; not for a caller that defines the name itself: that is such a
 *     layer looking for its own real), else our wrapper (its real is recorded
 *     when none is known yet); but an interposer loaded after us that asks for
 *     a name it defines itself gets the answer unchanged: our wrapper would
 *     lead back to it;
 *   - a function of the next layer (the interposer after us whose function is
 *     our real of that API, ly_next) becomes our wrapper;
 *   - our own export stays ours; anything else (an interposer before us, a
 *     static cudart in the executable) is returned unchanged.
 * RTLD_DEFAULT looks past the shim: our exports alone never make cuInit
 * appear to exist (nor do they on dlopen(NULL) or any other handle but the
 * shim's own). RTLD_NEXT is answered for the caller's position (dl_next_answer).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <string.h>

#include "api.h"
#include "base.h"
#include "config.h"
#include "copies.h"
#include "dispatch.h"
#include "dlsym.h"
#include "elfsym.h"
#include "layers.h"
#include "libs.h"
#include "lifecycle.h"
#include "objects.h"
#include "realdl.h"
#include "wrapper_table.h"

/* The next dlsym / dlvsym in the chain of interposers (elfsym.c), found once. */
static _Atomic(void *) dl_chain_p[2];

static void *dl_chain(int versioned)
{
    void *f = atomic_load_explicit(&dl_chain_p[versioned], memory_order_acquire);
    if (RT_LIKELY(f != NULL))
        return f;
    f = elf_chain_next(versioned ? "dlvsym" : "dlsym");
    if (f != NULL)
        atomic_store_explicit(&dl_chain_p[versioned], f, memory_order_release);
    return f;
}

/* Set while this thread runs another interposer's dlsym for us: if it calls our dlsym
   again (for a CUDA name), that look-up goes straight to glibc instead of back to it. */
static __thread int dl_in_chain __attribute__((tls_model("initial-exec")));

/* 'name' looked up on 'handle' by the next dlsym in the chain (glibc's: with the shim
   as the caller, for RTLD_DEFAULT's scope). */
static void *dl_chain_lookup(void *handle, const char *name, const char *version)
{
    void *next = dl_chain(version != NULL);
    void *glibc = version ? (void *)elf_real_dlvsym() : (void *)elf_real_dlsym();
    void *r;
    if (next == NULL || next == glibc || dl_in_chain) {
        if (version == NULL)
            return rd_dlsym(handle, name);
        elf_dlvsym_fn fv = rd_real_dlvsym();
        r = fv ? fv(handle, name, version) : NULL;
    } else {
        dl_in_chain = 1;
        r = version ? ((elf_dlvsym_fn)next)(handle, name, version) : ((elf_dlsym_fn)next)(handle, name);
        dl_in_chain = 0;
    }
    __asm__ volatile("" : : "r"(r) : "memory");   /* no tail call: glibc must see the shim as caller */
    return r;
}

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
    void *r = rd_dlsym(h, name);
    dlclose(h);
    return r;
}

/* The real answer for (handle, name[, version]) as the caller would get it. */
static void *dl_real_answer(void *handle, const char *name, const char *version, void *caller,
                            int *cls)
{
    void *r = dl_chain_lookup(handle, name, version);
    *cls = ob_classify(r);
    if ((handle == RTLD_DEFAULT && r == NULL) ||
        (*cls == OB_SELF && handle != ob_self_handle() && !ob_is_dropin())) {
        /* Look past the shim (RTLD_DEFAULT, dlopen(NULL) and any handle whose
           scope holds the shim), then, for RTLD_DEFAULT, through the caller's
           own dependencies (a caller loaded RTLD_LOCAL with libcuda among them).
           The drop-in is libcuda: its own answers stand. */
        void *n = rd_dlsym_next(name);
        if (n == NULL && handle == RTLD_DEFAULT) {
            Dl_info di;
            struct link_map *lm = NULL;
            if (caller != NULL && dladdr1(caller, &di, (void **)&lm, RTLD_DL_LINKMAP) != 0 && lm != NULL)
                n = dl_sym_in_scope_of(lm, name);
        }
        r = n;
        *cls = ob_classify(r);
        if (*cls == OB_SELF)
            r = NULL, *cls = OB_NONE;
    }
    return r;
}

/*
 * Is the object loaded at 'base' in the global scope (loaded at start-up, or
 * dlopen'ed RTLD_GLOBAL)? glibc has no query for it, so ask its look-ups about
 * the object's own exports: if RTLD_DEFAULT - or, for names the shim defines
 * too, RTLD_NEXT from the shim - finds one of them in this object, it is in the
 * global scope. An object loaded RTLD_LOCAL is never found that way. Names
 * other objects define first say nothing; after DL_GLOBAL_PROBES of those the
 * answer is "global" (the old behaviour: an object with no export of its own
 * is rare, and a wrong "global" costs less than a wrong "not there").
 */
#define DL_GLOBAL_PROBES 64

static int dl_caller_is_inner_layer(void *caller, const char *name);

static int dl_object_is_global(uintptr_t base)
{
    int tried = 0;
    void *addr = NULL;
    const char *sym;
    for (uint32_t k = 0; tried < DL_GLOBAL_PROBES && (sym = elf_object_symbol(base, k, &addr)) != NULL; k++) {
        uintptr_t b;
        void *r = rd_dlsym(RTLD_DEFAULT, sym);
        if (r != NULL && ob_classify(r) == OB_SELF)
            r = rd_dlsym_next(sym);
        tried++;
        if (r == NULL || !elf_object_of(r, &b, NULL, 0))
            return 0;   /* its own export is not visible at all: not in the global scope */
        if (b == base)
            return 1;
    }
    return 1;
}

/*
 * RTLD_NEXT for 'caller', as glibc would answer without the shim. glibc can
 * only answer for its own caller (the return address), and forwarding would
 * find our exports when the caller precedes the shim. So: F = the first
 * definition in the global scope other than ours; if F's object comes after
 * the caller, F is the answer. Else, for a caller after F, the first
 * definition after the caller in load order (not ours) whose object is in the
 * global scope: one loaded RTLD_LOCAL by someone else is passed over, as glibc
 * never sees it - except for an interposer after us asking for a name it
 * defines itself: we made its function our real, so it gets calls it would
 * never get without us (through cuGetProcAddress pointers of a driver that
 * cudart loaded RTLD_LOCAL); it must find the driver to pass them on. With no
 * global definition, the caller's own dependencies (a caller loaded
 * RTLD_LOCAL); an object loaded RTLD_LOCAL elsewhere stays invisible, as in
 * glibc.
 */
static void *dl_next_answer(const char *name, void *caller)
{
    Dl_info di;
    struct link_map *lm = NULL;
    if (caller == NULL || dladdr1(caller, &di, (void **)&lm, RTLD_DL_LINKMAP) == 0 || lm == NULL)
        return NULL;
    int dropin = ob_is_dropin();   /* the drop-in is libcuda: its definitions count */
    uintptr_t skip = dropin ? UINTPTR_MAX : ob_self_base();
    void *f = rd_dlsym(RTLD_DEFAULT, name);
    if (!dropin && ob_classify(f) == OB_SELF)
        f = rd_dlsym_next(name);
    uintptr_t fbase;
    if (f != NULL && elf_object_of(f, &fbase, NULL, 0)) {
        if (fbase != lm->l_addr && elf_loaded_after(fbase, lm->l_addr))
            return f;
        uintptr_t after = lm->l_addr, dbase;
        const char *after_name = lm->l_name, *dname;
        int exact = !dl_caller_is_inner_layer(caller, name);
        for (int guard = 0; guard < 64; guard++) {
            void *w = elf_next_definer(after, after_name, skip, name, &dbase, &dname);
            if (w == NULL || !exact || dl_object_is_global(dbase))
                return w;
            after = dbase, after_name = dname;
        }
        return NULL;
    }
    void *x = dl_sym_in_scope_of(lm, name);
    uintptr_t xbase;
    if (x == NULL || (!dropin && ob_classify(x) == OB_SELF) || !elf_object_of(x, &xbase, NULL, 0) ||
        xbase == lm->l_addr)
        return NULL;
    return x;
}

/*
 * dlerror() after our answer must agree with it, as after glibc's: NULL comes
 * with an error message (callers that test dlerror() rather than the pointer
 * would otherwise call NULL), a symbol with none. Our own look-ups on the way
 * (a successful dlopen/dlclose clears the message, a failed internal one sets
 * it) say nothing about the answer. A NULL answer gets glibc's own message
 * for the caller's handle ("<its library>: undefined symbol: <name>") when
 * that look-up fails too, as it does when the library lacks the name; else
 * "<object>: undefined symbol: <name>" from a look-up that must fail: RTLD_NEXT
 * from the shim, or libc's own handle (libc defines no CUDA name; the handle
 * is kept open).
 */
__attribute__((noinline)) static void dl_set_missing(void *handle, const char *name, const char *version)
{
    static _Atomic(void *) libc_h;
    elf_dlvsym_fn fv = version ? rd_real_dlvsym() : NULL;
    void *r;
    if (handle != RTLD_DEFAULT && handle != RTLD_NEXT &&
        (fv ? fv(handle, name, version) : rd_dlsym(handle, name)) == NULL)
        return;   /* the message names the library the caller asked */
    r = fv ? fv(RTLD_NEXT, name, version) : rd_dlsym_next(name);
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
        r = fv ? fv(h, name, version) : rd_dlsym(h, name);
    __asm__ volatile("" : : "r"(r) : "memory");   /* no tail call: the caller must be the shim */
}

static void *dl_answer(void *handle, const char *name, const char *version, void *caller, uint32_t id);

void *dl_decide(void *handle, const char *name, const char *version, void *caller, void **fwd)
{
    /* Until 'name' is known to be ours: no libc call, no instrumentation (elfsym.c).
       RTLD_NEXT goes to glibc's own function: only it can answer for the caller. */
    void *glibc = version ? (void *)elf_real_dlvsym() : (void *)elf_real_dlsym();
    void *next = handle == RTLD_NEXT || dl_in_chain ? glibc : dl_chain(version != NULL);
    *fwd = next;
    if (next == NULL) {
        *fwd = NULL;
        return NULL;
    }
    if (!lb_name_may_be_ours(name))   /* the descriptors' name prefixes */
        return NULL;
    int idx = api_index_by_name(name);
    if (idx < 0 || cfg_get()->disable)
        return NULL;
    if (dl_in_chain) {   /* another interposer, asked by us, asks again: no second round */
        *fwd = glibc;
        return NULL;
    }
    /* The drop-in is libcuda only: its runtime wrappers are linked in but hidden, and
       libcudart's own functions are handed out untouched (forwarded). */
    if ((cushim_gen_apis[idx].library != CUSHIM_LIB_DRIVER && ob_is_dropin()) ||
        !lb_chosen(cushim_gen_apis[idx].library))   /* not interposed (CUSHIM_LIBS) */
        return NULL;
    uint32_t id = cushim_gen_apis[idx].id;
    rt_init();
    *fwd = NULL;
    void *r = dl_answer(handle, name, version, caller, id);
    if (r == NULL)
        dl_set_missing(handle, name, version);
    else
        (void)dlerror();   /* clear what our own look-ups left */
    return r;
}

/* The caller is an interposer loaded after us that defines 'name' itself: it is
   looking for what lies below it, and our wrapper would lead back to it. */
static int dl_caller_is_inner_layer(void *caller, const char *name)
{
    uintptr_t base;
    if (caller == NULL || !elf_object_of(caller, &base, NULL, 0) || base == ob_self_base())
        return 0;
    return elf_loaded_after(base, ob_self_base()) && elf_object_defines(base, name);
}

/* The caller's object defines 'name' itself. */
static int dl_caller_defines(void *caller, const char *name)
{
    return caller != NULL && elf_object_defines_at(caller, name);
}

static int dl_same_object(const void *a, const void *b)
{
    uintptr_t ba, bb;
    return elf_object_of(a, &ba, NULL, 0) && elf_object_of(b, &bb, NULL, 0) && ba == bb;
}

/* The real answer 'r' for API 'id' -> what the caller gets ('next': an RTLD_NEXT look-up). */
static void *dl_map(uint32_t id, const char *name, void *r, void *caller, int next)
{
    int cls = ob_classify(r);
    switch (cls) {
    case OB_SELF:
        return r;
    case OB_DRIVER:
    case OB_RUNTIME:
    case OB_LIBRARY: {
        const cushim_api_info *info = api_info(id);
        const lb_library *lib = info != NULL ? lb_by_value(info->library) : NULL;
        if (cls != OB_DRIVER && lib != NULL) {
            cp_scan(lib);
            if (!cp_is_ours(lib, r))
                return r;   /* a copy of another major: its own function, untouched (never our prototype) */
        }
        /* An interposer preloaded before us defines the name, but the look-up went to the
           library itself (a handle): the caller gets that layer's function, which leads to us
           (its real comes from us) - unless the caller defines the name: then it is that
           layer (or one like it) looking for its own real, and gets our wrapper. */
        void *prev = next ? NULL : ly_prev(name);
        if (prev != NULL && !dl_caller_defines(caller, name))
            return prev;
        void *real = rt_lib_real(id);
        if (real == NULL) {   /* a library our own search does not find: its answer is the real */
            ob_pin(r);
            rt_record_real(id, r);
            real = rt_lib_real(id);
        }
        if (real != r && dl_caller_is_inner_layer(caller, name))
            return r;
        if (cls != OB_DRIVER && real != NULL && real != r && ob_classify(real) == cls && !dl_same_object(real, r))
            return r;   /* another copy of the same major (two NCCL builds): its own function, untouched */
        return real != NULL ? rt_wrapper_of[id] : r;
    }
    default: {
        uintptr_t base;
        /* The next layer's function (an interposer after us): our wrapper leads to it. */
        if (elf_object_of(r, &base, NULL, 0) && elf_loaded_after(base, ob_self_base()) && ly_next(name) == r) {
            ob_pin(r);
            rt_record_real(id, r);
            if (rt_lib_real(id) == r)
                return rt_wrapper_of[id];
        }
        return r;
    }
    }
}

static void *dl_answer(void *handle, const char *name, const char *version, void *caller, uint32_t id)
{
    void *r;
    if (handle == RTLD_NEXT) {
        r = dl_next_answer(name, caller);
    } else {
        int cls;
        r = dl_real_answer(handle, name, version, caller, &cls);
    }
    /* Look-ups past the shim and the RTLD_NEXT emulation ask without a version:
       the definition found must carry the one asked for, as glibc requires. */
    if (r == NULL || (version != NULL && !elf_version_matches(r, name, version)))
        return NULL;
    return dl_map(id, name, r, caller, handle == RTLD_NEXT);
}
