/*
 * fuzz_limits.c - libFuzzer harness for the quota plugins' configuration text: memlimit's byte
 * sizes, limit lists, HAMi-core's values and CUDA_VISIBLE_DEVICES (plugins/memlimit/ml_limits.c),
 * smlimit's percentage lists, HAMi-core's variables and the priorities' forms (plugins/smlimit/limitspec.c:
 * the option, CUDA_TASK_PRIORITY and 'cushim limit --priority'), memlimit's
 * oversubscribe= and on_full= values and the oversubscription bound (plugins/memlimit/ml_ovopts.c). The same
 * bytes go to each parser, and as the value of every environment variable the HAMi readers ask
 * for. Checked for every input: statuses are 0/-1 (or a count within bounds), a failure leaves a
 * reason (the log writes its control bytes as \xNN: runtime/log.c), parsed limits are in range,
 * and a parsed byte size reads back the same from its decimal form.
 */
#include <inttypes.h>

#include "fuzz_common.h"
#include "limitspec.h"
#include "shm.h"
#include "ml_limits.h"
#include "ml_oversub.h"
#include "visible.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *fz_value;

static const char *fz_getenv(const char *name)
{
    (void)name;
    return fz_value;
}

/* A failure's reason: set, and terminated within its buffer. */
static void check_reason(const char *err, size_t cap)
{
    FUZZ_CHECK(err[0] != '\0' && memchr(err, '\0', cap) != NULL);
}

/* smlimit's readers: 0 with every percentage in [0, 100], or -1 with a reason. */
static void check_pct(int rc, const double *pct, const char *err, size_t cap)
{
    FUZZ_CHECK(rc == 0 || rc == -1);
    if (rc != 0) {
        check_reason(err, cap);
        return;
    }
    for (int i = 0; i < SML_LIMIT_DEVICES; i++)
        FUZZ_CHECK(pct[i] >= 0 && pct[i] <= 100);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_cstr(data, size);
    char err[256];
    uint64_t v;
    ml_limits l;
    double pct[SML_LIMIT_DEVICES];
    int map[16], rc;

    if (ml_parse_bytes(s, &v) == 0) {
        char back[32];
        uint64_t w;
        snprintf(back, sizeof back, "%" PRIu64, v);
        FUZZ_CHECK(ml_parse_bytes(back, &w) == 0 && w == v);
    }
    memset(&l, 0, sizeof l);
    err[0] = '\0';
    rc = ml_parse_spec(s, &l, err, sizeof err);
    FUZZ_CHECK(rc == 0 || rc == -1);
    if (rc != 0)
        check_reason(err, sizeof err);
    {
        uint64_t hv;
        rc = ml_hami_value(s, &hv);
        FUZZ_CHECK(rc == 0 || (rc == -1 && hv == 0));
    }
    {
        /* oversubscribe=: off, or a ratio within [1, 64] in thousandths; on_full=: fail or a wait of at most a
           day; the bound never below its base (a ratio of at least 1) and saturating rather than wrapping */
        uint32_t milli = 12345, ms = 12345;
        rc = ml_oversub_parse_ratio(s, &milli);
        FUZZ_CHECK(rc == 0 || rc == -1);
        if (rc == 0) {
            FUZZ_CHECK(milli == 0 || (milli >= 1000 && milli <= ML_OVERSUB_MAX_MILLI));
            if (milli != 0 && ml_parse_bytes(s, &v) == 0) {
                uint64_t b = ml_oversub_bound(v, 0, milli);
                FUZZ_CHECK(v == 0 ? b == 0 : b >= v);
            }
        }
        rc = ml_oversub_parse_wait(s, &ms);
        FUZZ_CHECK(rc == 0 || rc == -1);
        if (rc == 0)
            FUZZ_CHECK(ms <= ML_WAIT_MAX_MS);
        FUZZ_CHECK(ml_oversub_hami(s) == (strcmp(s, "true") == 0));
    }
    rc = ml_visible_devices(s, map, 16);
    FUZZ_CHECK(rc >= -1 && rc <= 16);
    for (int i = 0; i < rc; i++)
        FUZZ_CHECK(map[i] >= 0);
    /* the same variable as memlimit's and smlimit's regions read it (plugins/common/visible.c): the identity when
       empty, else what the list's own reading gives by position, none past it */
    for (int i = -1; i < 18; i++) {
        int p = vis_physical(s, i);
        FUZZ_CHECK(p >= -1);
        if (rc > 0 && i >= 0 && i < rc)
            FUZZ_CHECK(p == map[i]);
        if (rc < 0 || i < 0)
            FUZZ_CHECK(p == -1);
    }
    fz_value = s;
    memset(&l, 0, sizeof l);
    err[0] = '\0';
    rc = ml_from_hami_env(fz_getenv, &l, err, sizeof err);
    FUZZ_CHECK(rc == 0 || rc == 1 || rc == -1);
    if (rc == -1)
        check_reason(err, sizeof err);

    err[0] = '\0';
    check_pct(sml_parse_limits(s, pct, err, sizeof err), pct, err, sizeof err);
    err[0] = '\0';
    check_pct(sml_env_limits(fz_getenv, pct, err, sizeof err), pct, err, sizeof err);
    {   /* a priority: a level or untouched, and 1 only for nothing given */
        int lv = -7, prc = sml_parse_priority(s, &lv);
        FUZZ_CHECK(prc == 0 || prc == -1 || prc == 1);
        FUZZ_CHECK(prc == 1 ? s[0] == '\0' : 1);
        FUZZ_CHECK(prc == 0 ? (lv == SML_PRIO_LOW || lv == SML_PRIO_NORMAL || lv == SML_PRIO_HIGH) : lv == -7);
        FUZZ_CHECK(strcmp(sml_priority_name(lv), prc == 0 ? sml_priority_name(lv) : "none") == 0);
    }
    free(s);
    return 0;
}
