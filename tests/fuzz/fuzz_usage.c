/*
 * fuzz_usage.c - libFuzzer harness for what 'cushim usage' reads: a memlimit budget region whose bytes are its
 * writers' word (plugins/memlimit/usage.c ml_usage_print over ml_budget_attach). The input is the region's
 * first bytes (the rest zeros); when its first byte is odd the file is written as given (any size: the layout
 * check must refuse it with one line), else it is made a region of exactly the layout's size with the magic set,
 * so that the printer reads every header and slot field (memory by library's entries included: names, devices,
 * bytes). Every output, the table with and without --by-library and the Prometheus text, must
 * be valid UTF-8 with no control byte but '\n', and memory stays bounded (the region is mapped, never copied).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_common.h"
#include "ml_budget.h"
#include "shm.h"

void ml_usage_print(FILE *f, ml_budget *b, const char *path, unsigned flags, const sml_region *const *sm, int nsm);

/* Valid UTF-8 (no overlong form, no surrogate, nothing past U+10FFFF) with no control character but '\n'. */
static int clean_utf8(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        size_t k;
        uint32_t cp;
        if (c < 0x80) {
            if ((c < 0x20 && c != '\n') || c == 0x7f)
                return 0;
            i++;
            continue;
        }
        if (c >= 0xc2 && c <= 0xdf)
            k = 2, cp = c & 0x1f;
        else if (c >= 0xe0 && c <= 0xef)
            k = 3, cp = c & 0x0f;
        else if (c >= 0xf0 && c <= 0xf4)
            k = 4, cp = c & 0x07;
        else
            return 0;
        if (i + k > n)
            return 0;
        for (size_t j = 1; j < k; j++) {
            if ((s[i + j] & 0xc0) != 0x80)
                return 0;
            cp = (cp << 6) | (s[i + j] & 0x3f);
        }
        if ((k == 3 && cp < 0x800) || (k == 4 && (cp < 0x10000 || cp > 0x10ffff)) || (cp >= 0xd800 && cp <= 0xdfff) ||
            (cp >= 0x80 && cp < 0xa0))
            return 0;
        i += k;
    }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[64];
    static unsigned char *region;
    static sml_region *smr;   /* smlimit's region, as the input's bytes give it (after the memlimit header) */
    ml_budget b;
    char err[512];
    if (path[0] == '\0')
        snprintf(path, sizeof path, "/tmp/fuzz_usage.%d.region", (int)getpid());
    if (region == NULL && (region = malloc(sizeof(ml_region))) == NULL)
        return 0;
    if (smr == NULL && (smr = malloc(sizeof *smr)) == NULL)
        return 0;
    memset(smr, 0, sizeof *smr);
    if (size > 1)   /* the same bytes from the second on: slot pids and start times may match memlimit's */
        memcpy((char *)smr + 8, data + 1, size - 1 < sizeof *smr - 8 ? size - 1 : sizeof *smr - 8);
    int raw = size > 0 && (data[0] & 1);
    size_t n = raw ? size : sizeof(ml_region);
    if (!raw) {
        uint64_t magic = ML_BUDGET_MAGIC;
        memset(region, 0, sizeof(ml_region));
        memcpy(region, data, size < sizeof(ml_region) ? size : sizeof(ml_region));
        memcpy(region, &magic, sizeof magic);
    }
    unlink(path);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    FUZZ_CHECK(fd >= 0);
    FUZZ_CHECK(write(fd, raw ? (const void *)data : (const void *)region, n) == (ssize_t)n);
    close(fd);
    if (ml_budget_attach(&b, path, err, sizeof err) != 0) {
        FUZZ_CHECK(raw);   /* a region of the layout's size with its magic is always attached */
        fuzz_check_line(err, sizeof err);
        unlink(path);
        return 0;
    }
    for (unsigned flags = 0; flags < 4; flags++) {   /* ML_USAGE_PROM 1, ML_USAGE_BYLIB 2 */
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        FUZZ_CHECK(f != NULL);
        const sml_region *sm[1] = {smr};
        ml_usage_print(f, &b, path, flags, sm, 1);
        fclose(f);
        FUZZ_CHECK(clean_utf8((const unsigned char *)text, len));
        /* bounded: per slot, a line per device and per library entry (names cut at ML_LIB_NAME), plus headers */
        FUZZ_CHECK(len < (size_t)ML_BUDGET_SLOTS * (ML_MAX_DEVICES * 2 + ML_SLOT_LIBS) * 600 + 4096);
        free(text);
    }
    ml_budget_close(&b);
    unlink(path);
    return 0;
}
