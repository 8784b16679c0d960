/*
 * lp_load.c - finds liblua 5.4 and binds the plugin's Lua API table to it,
 * privately.
 *
 * Where: the 'lualib=PATH' option, else "liblua5.4.so.0" by the loader's
 * search, else liblua5.4.so.0 in the plugin's own directory (the GPU bundle
 * puts a copy there: that machine has no Lua). A path that is not a regular
 * file (a FIFO) is refused, never waited on.
 *
 * How, so that neither the host's Lua/LuaJIT nor ours sees the other:
 *   deepbind   dlopen(RTLD_LOCAL | RTLD_DEEPBIND): liblua's own calls between
 *              its functions (through its PLT: lauxlib calls lapi) bind inside
 *              liblua before the global scope, where a host's LuaJIT or an
 *              unversioned lua_* of the program would otherwise win.
 *   namespace  dlmopen(LM_ID_NEWLM): liblua (and a libc of its own) in a new
 *              link-map namespace that sees nothing of the program. Used when a
 *              sanitizer runtime is present: ASan and TSan abort on
 *              RTLD_DEEPBIND. Memory still comes from our allocator (lp_state.c
 *              passes it to lua_newstate), so one malloc serves every state.
 *   plain      dlopen(RTLD_LOCAL): no isolation; only for experiments.
 * 'auto' (the default) is namespace under a sanitizer, else deepbind.
 * The API table is filled with dlsym on that handle, never by name lookup in
 * the global scope.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cushim/cushim_io.h"
#include "lp_load.h"

lp_lua_api lp_lua;

static void *lp_handle;
static lp_lua_lib lp_lib;

static int lp_sanitized(void)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    return 1;
#else
    return dlsym(RTLD_DEFAULT, "__asan_init") != NULL || dlsym(RTLD_DEFAULT, "__tsan_init") != NULL ||
           dlsym(RTLD_DEFAULT, "__msan_init") != NULL;
#endif
}

static void *lp_open_one(const char *path, const char *how, char *err, size_t errlen)
{
    void *h;
    /* A path (lualib=PATH, the copy beside the plugin) must be a regular file: dlopen of a FIFO waits for a
       writer forever, in the program's first CUDA call. Looked at without blocking, then dlopened by name: a
       file replaced in between is left (runtime/loader.c says why the descriptor is not dlopened). */
    if (strchr(path, '/') != NULL) {
        int fd = cushim_open_regular(path, O_RDONLY, 0, err, errlen);
        if (fd < 0 && errno == EINVAL)
            return NULL;   /* else (missing, no permission) dlopen says why, as it always did */
        if (fd >= 0)
            close(fd);
    }
    if (!strcmp(how, "namespace"))
        h = dlmopen(LM_ID_NEWLM, path, RTLD_NOW | RTLD_LOCAL);
    else if (!strcmp(how, "deepbind"))
        h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    else
        h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        const char *e = dlerror();
        snprintf(err, errlen, "%s", e ? e : path);
    }
    return h;
}

/* The directory of this plugin's file, with a trailing '/'; "" if unknown. */
static void lp_own_dir(char *out, size_t n)
{
    Dl_info info;
    out[0] = '\0';
    if (dladdr((void *)&lp_own_dir, &info) == 0 || info.dli_fname == NULL)
        return;
    const char *slash = strrchr(info.dli_fname, '/');
    if (slash == NULL || (size_t)(slash - info.dli_fname) + 2 > n)
        return;
    memcpy(out, info.dli_fname, (size_t)(slash - info.dli_fname) + 1);
    out[slash - info.dli_fname + 1] = '\0';
}

static int lp_bind(void *h, char *err, size_t errlen)
{
#define LP_LUA_BIND(n)                                                                      \
    *(void **)&lp_lua.p_##n = dlsym(h, #n);                                                     \
    if (lp_lua.p_##n == NULL) {                                                                 \
        snprintf(err, errlen, "the library lacks %s: not a Lua 5.4 C library", #n);       \
        return -1;                                                                          \
    }
    LP_LUA_FUNCS(LP_LUA_BIND)
#undef LP_LUA_BIND
    if (lua_version(NULL) != LUA_VERSION_NUM) {
        snprintf(err, errlen, "the library is Lua %d, not %d", (int)lua_version(NULL), LUA_VERSION_NUM);
        return -1;
    }
    return 0;
}

int lp_lua_open(const char *explicit_path, const char *isolation, lp_lua_lib *out, char *err, size_t errlen)
{
    char dir[480], local[512], e1[256] = "", e2[256] = "";
    const char *how = isolation;
    void *h = NULL;
    if (lp_handle != NULL) {
        *out = lp_lib;
        return 0;
    }
    if (how == NULL || !strcmp(how, "auto"))
        how = lp_sanitized() ? "namespace" : "deepbind";
    else if (strcmp(how, "deepbind") && strcmp(how, "namespace") && strcmp(how, "plain")) {
        snprintf(err, errlen, "isolate=%s: expected auto, deepbind, namespace or plain", isolation);
        return -1;
    }
    if (explicit_path != NULL && explicit_path[0] != '\0') {
        h = lp_open_one(explicit_path, how, e1, sizeof e1);
        snprintf(lp_lib.path, sizeof lp_lib.path, "%s", explicit_path);
        if (h == NULL) {
            snprintf(err, errlen, "cannot load lualib=%s: %s", explicit_path, e1);
            return -1;
        }
    } else {
        h = lp_open_one("liblua5.4.so.0", how, e1, sizeof e1);
        snprintf(lp_lib.path, sizeof lp_lib.path, "liblua5.4.so.0");
        if (h == NULL) {
            lp_own_dir(dir, sizeof dir);
            snprintf(local, sizeof local, "%sliblua5.4.so.0", dir);
            if (dir[0] != '\0')
                h = lp_open_one(local, how, e2, sizeof e2);
            snprintf(lp_lib.path, sizeof lp_lib.path, "%s", local);
        }
        if (h == NULL) {
            snprintf(err, errlen, "cannot load Lua 5.4 (install Debian's liblua5.4-0, copy liblua5.4.so.0 "
                     "next to the plugin, or give lualib=PATH): %s%s%s", e1, e2[0] ? "; " : "", e2);
            return -1;
        }
    }
    if (lp_bind(h, err, errlen) != 0) {
        memset(&lp_lua, 0, sizeof lp_lua);
        dlclose(h);
        return -1;
    }
    lp_lib.isolation = how;
    lp_handle = h;   /* never closed: states may live until the process ends */
    *out = lp_lib;
    return 0;
}
