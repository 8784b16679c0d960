/*
 * fake_paraminfo.c - cuFuncGetParamInfo of the fake driver: the offset and size of each kernel parameter,
 * read from the '.entry NAME(...)' signature in the PTX the function's module was loaded from, as the real
 * driver answers from the compiled kernel. The remoting's client sizes kernel arguments with it
 * (docs/remote.md). A module loaded from anything but PTX text (the e2e tests' "fake image", a cubin)
 * answers from the function's name instead (fake_module.c fk_param_info: "scale__pfi"; none: NOT_SUPPORTED);
 * an index past the last parameter CUDA_ERROR_INVALID_VALUE.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "fake_internal.h"

#define FK_PTX_MAX (4u << 20)

char *fk_ptx_copy(const void *image)
{
    const unsigned char *b = image;
    if (b == NULL || b[0] == 0x7f || b[0] == 0x50)   /* ELF, fatbin (0xba55ed50): not text */
        return NULL;
    size_t n = strnlen(image, FK_PTX_MAX);
    if (n == FK_PTX_MAX || memmem(image, n, ".entry", 6) == NULL)
        return NULL;
    return strndup(image, n);
}

static const char *fk_skip_space(const char *p)
{
    while (*p && isspace((unsigned char)*p))
        p++;
    return p;
}

/* The size of a PTX parameter type (.u32, .b64, .f16 ...), 0 if unknown. */
static unsigned fk_type_size(const char *t)
{
    if (t[0] != '.' || !strchr("usbf", t[1]))
        return 0;
    int bits = atoi(t + 2);
    return bits == 8 || bits == 16 || bits == 32 || bits == 64 ? (unsigned)bits / 8 : 0;
}

/* The parameters of entry 'name': offsets and sizes of parameter 'index'. 1 found, 0 past the last,
   -1 no such entry or a signature it cannot read. */
static int fk_ptx_param(const char *ptx, const char *name, size_t index, size_t *off, size_t *size)
{
    size_t nl = strlen(name), at = 0, i = 0;
    const char *p = ptx;
    for (;;) {
        p = strstr(p, ".entry");
        if (p == NULL)
            return -1;
        p = fk_skip_space(p + 6);
        if (strncmp(p, name, nl) == 0 && (isspace((unsigned char)p[nl]) || p[nl] == '('))
            break;
    }
    p = fk_skip_space(p + nl);
    if (*p++ != '(')
        return -1;
    for (;; i++) {
        p = fk_skip_space(p);
        if (*p == ')')
            return 0;
        if (strncmp(p, ".param", 6) != 0)
            return -1;
        p = fk_skip_space(p + 6);
        unsigned align = 0, tsize;
        if (strncmp(p, ".align", 6) == 0) {
            align = (unsigned)strtoul(p + 6, (char **)&p, 10);
            p = fk_skip_space(p);
        }
        if ((tsize = fk_type_size(p)) == 0)
            return -1;
        while (*p && !isspace((unsigned char)*p))
            p++;
        p = fk_skip_space(p);
        while (*p && (isalnum((unsigned char)*p) || *p == '_' || *p == '$'))
            p++;
        size_t count = 1;
        if (*p == '[') {
            count = strtoul(p + 1, (char **)&p, 10);
            if (*p++ != ']')
                return -1;
        }
        unsigned a = align ? align : tsize;
        at = (at + a - 1) / a * a;
        if (i == index) {
            *off = at;
            *size = tsize * count;
            return 1;
        }
        at += tsize * count;
        p = fk_skip_space(p);
        if (*p == ',')
            p++;
    }
}

CUresult cuFuncGetParamInfo(CUfunction func, size_t paramIndex, size_t *paramOffset, size_t *paramSize)
{
    FAKE_ENTER(cuFuncGetParamInfo);
    FK_REQUIRE_INIT();
    if (paramOffset == NULL || paramSize == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (func == NULL || func->magic != FK_MAGIC_FUNC)
        return CUDA_ERROR_INVALID_HANDLE;
    if (func->module == NULL || func->module->ptx == NULL)   /* no PTX: the layout its name spells, if any */
        return fk_param_info(func->name, paramIndex, paramOffset, paramSize);
    size_t off = 0, size = 0;
    int r = fk_ptx_param(func->module->ptx, func->name, paramIndex, &off, &size);
    if (r < 0)
        return CUDA_ERROR_NOT_SUPPORTED;
    if (r == 0)
        return CUDA_ERROR_INVALID_VALUE;
    *paramOffset = off;
    *paramSize = size;
    return CUDA_SUCCESS;
}
