/*
 * fuzz_select.c - libFuzzer harness for API selectors (sel_select / sel_match, runtime/select.c): the
 * text of a hook group's 'select', host->api_select and the trace plugin's --trace-filter, matched
 * against this build's real generated metadata (cushim_meta.c). Checked for every input:
 *   - an error is a negative code with a reason terminated inside the buffer (the reason quotes the
 *     selector raw; the log escapes it when it is printed, runtime/log.c);
 *   - a result lists valid API ids, ascending and unique, at most every API, and the count does not
 *     depend on the buffer's size (a NULL buffer counts the same);
 *   - sel_match agrees with sel_select for every id listed and for a spread of ids not listed;
 *   - union and intersection commute: with the input split at its first ',' (or, in a selector with
 *     no ',', at its first '&') the swapped selector succeeds or fails alike and selects the same set.
 */
#include "fuzz_common.h"
#include "rt_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FZ_MAX CUSHIM_API_ID_LIMIT

static int fz_select(const char *sel, uint32_t *ids, uint8_t *set)
{
    char err[256];
    memset(err, 'x', sizeof err);
    int n = sel_select(sel, ids, FZ_MAX, err, sizeof err);
    if (n < 0) {
        FUZZ_CHECK(strnlen(err, sizeof err) < sizeof err && err[0] != '\0');
        return n;
    }
    FUZZ_CHECK(n <= (int)cushim_gen_api_count);
    FUZZ_CHECK(sel_select(sel, NULL, 0, NULL, 0) == n);
    if (n == 0)   /* nothing matched: a reason all the same, for the caller that treats that as an error */
        FUZZ_CHECK(strnlen(err, sizeof err) < sizeof err && err[0] != '\0');
    memset(set, 0, FZ_MAX);
    for (int i = 0; i < n; i++) {
        FUZZ_CHECK(ids[i] > 0 && ids[i] < FZ_MAX && api_info(ids[i]) != NULL);
        FUZZ_CHECK(i == 0 || ids[i] > ids[i - 1]);
        set[ids[i]] = 1;
    }
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint32_t ids[FZ_MAX], ids2[FZ_MAX];
    static uint8_t set[FZ_MAX], set2[FZ_MAX];
    if (size > 4096)   /* longer selectors only repeat what shorter ones reach; sel_match below compiles each */
        return 0;
    char *sel = fuzz_cstr(data, size);
    int n = fz_select(sel, ids, set);
    if (n >= 0) {
        for (int i = 0; i < n; i++)
            FUZZ_CHECK(sel_match(sel, ids[i]) == 1);
        for (uint32_t id = 1 + (size % 7); id < FZ_MAX; id += 97)
            FUZZ_CHECK(sel_match(sel, id) == (set[id] && api_info(id) != NULL));
    } else {
        FUZZ_CHECK(sel_match(sel, 1) < 0);
    }

    /* commutation: A,B = B,A; with no ',', A&B = B&A */
    char sep = strchr(sel, ',') != NULL ? ',' : '&';
    char *cut = strchr(sel, sep);
    if (cut != NULL) {
        size_t len = strlen(sel), a = (size_t)(cut - sel);
        char *swapped = malloc(len + 1);
        FUZZ_CHECK(swapped != NULL);
        memcpy(swapped, cut + 1, len - a - 1);
        swapped[len - a - 1] = sep;
        memcpy(swapped + len - a, sel, a);
        swapped[len] = '\0';
        int m = fz_select(swapped, ids2, set2);
        FUZZ_CHECK((n < 0) == (m < 0));
        if (n >= 0) {
            FUZZ_CHECK(n == m);
            FUZZ_CHECK(memcmp(set, set2, FZ_MAX) == 0);
        }
        free(swapped);
    }
    free(sel);
    return 0;
}
