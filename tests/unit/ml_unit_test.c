/*
 * ml_unit_test.c - memlimit's host-free parts (plugins/memlimit): byte sizes and
 * limit lists, HAMi-core's environment with HAMi's meanings, CUDA_VISIBLE_DEVICES,
 * budget names; the budget region: threads each holding a slot of one shared
 * region race for the last bytes and the granted total never passes the limit,
 * credits never go below zero, a SIGKILLed owner's slot is reclaimed, a file that
 * is not a region is never touched, a program closing the region's descriptor and
 * reusing its number is never touched either; the pointer table through a million
 * puts and takes; memory by library: entries named once, the last one taking the
 * rest, credits never below zero, a dead owner's entries reclaimed; the caller's
 * library found past the skipped objects.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <pthread.h>
#include <sched.h>

#include "ml_budget.h"
#include "ml_caller.h"
#include "ml_limits.h"
#include "ml_oversub.h"
#include "ml_table.h"

static void test_bytes(void **state)
{
    uint64_t v;
    (void)state;
    assert_int_equal(ml_parse_bytes("4096", &v), 0);
    assert_int_equal(v, 4096);
    assert_int_equal(ml_parse_bytes("8GiB", &v), 0);
    assert_int_equal(v, 8ull << 30);
    assert_int_equal(ml_parse_bytes("512M", &v), 0);
    assert_int_equal(v, 512ull << 20);
    assert_int_equal(ml_parse_bytes("1.5G", &v), 0);
    assert_int_equal(v, 3ull << 29);
    assert_int_equal(ml_parse_bytes("8gb", &v), 0);
    assert_int_equal(v, 8ull << 30);
    assert_int_equal(ml_parse_bytes("0x1000", &v), 0);
    assert_int_equal(v, 4096);
    assert_int_equal(ml_parse_bytes("", &v), -1);
    assert_int_equal(ml_parse_bytes("-1G", &v), -1);
    assert_int_equal(ml_parse_bytes("8XB", &v), -1);
    assert_int_equal(ml_parse_bytes("99999999999T", &v), -1);
    /* whole numbers exactly, past a double's 53 bits (fuzz_limits: the decimal form of a parsed size reads back) */
    assert_int_equal(ml_parse_bytes("9007199254740993", &v), 0);
    assert_int_equal(v, 9007199254740993ull);
    assert_int_equal(ml_parse_bytes("18446744073709551615", &v), 0);
    assert_int_equal(v, UINT64_MAX);
    assert_int_equal(ml_parse_bytes("18446744073709551616", &v), -1);
    assert_int_equal(ml_parse_bytes("16777216T", &v), -1);   /* 2^64 */
    assert_int_equal(ml_parse_bytes("16777215TiB", &v), 0);
    assert_int_equal(v, 16777215ull << 40);
    /* strtod's other spellings are no sizes (fuzz_limits: "NAN" was converted to an integer: undefined) */
    assert_int_equal(ml_parse_bytes("NAN", &v), -1);
    assert_int_equal(ml_parse_bytes("nan(1)G", &v), -1);
    assert_int_equal(ml_parse_bytes("inf", &v), -1);
    assert_int_equal(ml_parse_bytes("Infinity", &v), -1);
    assert_int_equal(ml_parse_bytes(".5G", &v), 0);
    assert_int_equal(v, 1ull << 29);
    assert_int_equal(ml_parse_bytes("1e3", &v), 0);
    assert_int_equal(v, 1000);
    assert_int_equal(ml_parse_bytes(".", &v), -1);
}

static void test_spec(void **state)
{
    ml_limits l;
    char err[256];
    (void)state;
    memset(&l, 0, sizeof l);
    assert_int_equal(ml_parse_spec("8GiB", &l, err, sizeof err), 0);
    assert_int_equal(ml_limit_of(&l, 0), 8ull << 30);
    assert_int_equal(ml_limit_of(&l, 5), 8ull << 30);
    memset(&l, 0, sizeof l);
    assert_int_equal(ml_parse_spec("0:8GiB,1:4GiB", &l, err, sizeof err), 0);
    assert_int_equal(ml_limit_of(&l, 0), 8ull << 30);
    assert_int_equal(ml_limit_of(&l, 1), 4ull << 30);
    assert_int_equal(ml_limit_of(&l, 2), 0);
    memset(&l, 0, sizeof l);
    assert_int_equal(ml_parse_spec("1:1G,*:2G", &l, err, sizeof err), 0);
    assert_int_equal(ml_limit_of(&l, 1), 1ull << 30);
    assert_int_equal(ml_limit_of(&l, 3), 2ull << 30);
    assert_int_equal(ml_parse_spec("x:1G", &l, err, sizeof err), -1);
    assert_non_null(strstr(err, "bad device 'x'"));
    assert_int_equal(ml_parse_spec("16:1G", &l, err, sizeof err), -1);
    assert_int_equal(ml_parse_spec("0:lots", &l, err, sizeof err), -1);
    assert_non_null(strstr(err, "bad size 'lots'"));
}

static const char *fake_env[16][2];
static const char *get(const char *name)
{
    for (int i = 0; i < 16 && fake_env[i][0]; i++)
        if (!strcmp(fake_env[i][0], name))
            return fake_env[i][1];
    return NULL;
}

static uint64_t hv(const char *s)
{
    uint64_t v = 12345;
    assert_int_equal(ml_hami_value(s, &v), 0);
    return v;
}

static void test_hami_values(void **state)
{
    uint64_t v;
    (void)state;
    /* HAMi: digits (strtoul base 0) with one optional suffix letter G/M/K, either case */
    assert_int_equal(hv("4G"), 4ull << 30);
    assert_int_equal(hv("4g"), 4ull << 30);
    assert_int_equal(hv("3000m"), 3000ull << 20);
    assert_int_equal(hv("1024k"), 1ull << 20);
    assert_int_equal(hv("1048576"), 1ull << 20);
    assert_int_equal(hv("0x100000"), 1ull << 20);
    assert_int_equal(hv("0"), 0);   /* 0: no limit */
    assert_int_equal(hv(""), 0);
    assert_int_equal(hv(NULL), 0);
    /* ours: what our own limit= takes, never read as HAMi's leading number (3MiB was 3 bytes, or nothing) */
    assert_int_equal(hv("3MiB"), 3ull << 20);
    assert_int_equal(hv("4GiB"), 4ull << 30);
    assert_int_equal(hv("1.5GiB"), 3ull << 29);
    /* unreadable: -1, never "no limit" */
    assert_int_equal(ml_hami_value("abc", &v), -1);
    assert_int_equal(ml_hami_value("-1", &v), -1);
    assert_int_equal(ml_hami_value("-4G", &v), -1);
    assert_int_equal(ml_hami_value("3 m", &v), -1);
    assert_int_equal(ml_hami_value("3mb!", &v), -1);
    assert_int_equal(ml_hami_value("18446744073709551616", &v), -1);   /* 2^64 */
    assert_int_equal(ml_hami_value("99999999999999999999G", &v), -1);
    assert_int_equal(ml_hami_value("17179869184G", &v), -1);   /* 2^34 GiB = 2^64 bytes */
}

static void test_hami_env(void **state)
{
    ml_limits l;
    (void)state;
    memset(&l, 0, sizeof l);
    memset(fake_env, 0, sizeof fake_env);
    char err[256];
    assert_int_equal(ml_from_hami_env(get, &l, err, sizeof err), 0);
    assert_int_equal(l.any, 0);
    fake_env[0][0] = "CUDA_DEVICE_MEMORY_LIMIT";
    fake_env[0][1] = "2G";
    fake_env[1][0] = "CUDA_DEVICE_MEMORY_LIMIT_1";
    fake_env[1][1] = "1g";
    fake_env[2][0] = "CUDA_DEVICE_MEMORY_LIMIT_3";
    fake_env[2][1] = "0";   /* 0 per device: falls back to the general limit, as in HAMi */
    assert_int_equal(ml_from_hami_env(get, &l, err, sizeof err), 1);
    assert_int_equal(ml_limit_of(&l, 0), 2ull << 30);
    assert_int_equal(ml_limit_of(&l, 1), 1ull << 30);
    assert_int_equal(ml_limit_of(&l, 3), 2ull << 30);
    memset(&l, 0, sizeof l);
    memset(fake_env, 0, sizeof fake_env);
    fake_env[0][0] = "CUDA_DEVICE_MEMORY_LIMIT_0";
    fake_env[0][1] = "512m";
    assert_int_equal(ml_from_hami_env(get, &l, err, sizeof err), 1);
    assert_int_equal(ml_limit_of(&l, 0), 512ull << 20);
    assert_int_equal(ml_limit_of(&l, 1), 0);
    /* a typo fails closed, naming the variable (a quota turned off by '3MiB' or 'abc' before) */
    memset(&l, 0, sizeof l);
    fake_env[1][0] = "CUDA_DEVICE_MEMORY_LIMIT_2";
    fake_env[1][1] = "abc";
    assert_int_equal(ml_from_hami_env(get, &l, err, sizeof err), -1);
    assert_non_null(strstr(err, "CUDA_DEVICE_MEMORY_LIMIT_2='abc'"));
    fake_env[1][1] = "-1";
    assert_int_equal(ml_from_hami_env(get, &l, err, sizeof err), -1);
    fake_env[1][1] = "3MiB";
    assert_int_equal(ml_from_hami_env(get, &l, err, sizeof err), 1);
    assert_int_equal(ml_limit_of(&l, 2), 3ull << 20);
}

static void test_visible(void **state)
{
    int map[16];
    (void)state;
    assert_int_equal(ml_visible_devices(NULL, map, 16), 0);
    assert_int_equal(ml_visible_devices("", map, 16), 0);
    assert_int_equal(ml_visible_devices("2,0", map, 16), 2);
    assert_int_equal(map[0], 2);
    assert_int_equal(map[1], 0);
    assert_int_equal(ml_visible_devices(" 3 , 1 ", map, 16), 2);
    assert_int_equal(map[0], 3);
    assert_int_equal(ml_visible_devices("GPU-1234-abcd", map, 16), -1);
}

static void test_budget_names(void **state)
{
    char p[256];
    (void)state;
    assert_int_equal(ml_budget_path("tenant-a", p, sizeof p), 0);
    assert_string_equal(p, "/dev/shm/cushim-budget-tenant-a");
    assert_int_equal(ml_budget_path("/tmp/x.cache", p, sizeof p), 0);
    assert_string_equal(p, "/tmp/x.cache");
    assert_int_equal(ml_budget_path("../etc", p, sizeof p), -1);
    assert_int_equal(ml_budget_path("a/b", p, sizeof p), -1);
    assert_int_equal(ml_budget_path("", p, sizeof p), -1);
}

static char region[256];

static void fresh_region(void)
{
    snprintf(region, sizeof region, "%s/ml_unit.%d.region", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
             (int)getpid());
    unlink(region);
}

#define RACE_LIMIT (1u << 20)
static _Atomic uint64_t granted;
static _Atomic int over;

static void *racer(void *arg)
{
    ml_budget b;
    char err[256];
    unsigned seed = (unsigned)(uintptr_t)arg;
    (void)arg;
    if (ml_budget_open(&b, region, err, sizeof err) != 0) {
        atomic_fetch_add(&over, 1000);
        return NULL;
    }
    for (int i = 0; i < 20000; i++) {
        uint64_t n = 1 + rand_r(&seed) % (RACE_LIMIT / 4);
        if (ml_budget_charge(&b, 0, n, RACE_LIMIT) == 0) {
            /* counted only between the grant and the credit: never above the limit */
            if (atomic_fetch_add(&granted, n) + n > RACE_LIMIT)
                atomic_fetch_add(&over, 1);
            sched_yield();   /* hold it a moment: grants overlap */
            atomic_fetch_sub(&granted, n);
            ml_budget_credit(&b, 0, n);
        }
    }
    ml_budget_close(&b);
    return NULL;
}

/* oversubscribe= and on_full= values, HAMi's CUDA_OVERSUBSCRIBE, the bound (ml_ovopts.c). */
static void test_oversub_options(void **state)
{
    uint32_t v = 7;
    (void)state;
    assert_int_equal(ml_oversub_parse_ratio("true", &v), 0);
    assert_int_equal(v, ML_OVERSUB_DEFAULT_MILLI);
    assert_int_equal(ml_oversub_parse_ratio("", &v), 0);
    assert_int_equal(v, 2000);
    assert_int_equal(ml_oversub_parse_ratio("1.5", &v), 0);
    assert_int_equal(v, 1500);
    assert_int_equal(ml_oversub_parse_ratio("1", &v), 0);
    assert_int_equal(v, 1000);
    assert_int_equal(ml_oversub_parse_ratio("64", &v), 0);
    assert_int_equal(v, 64000);
    assert_int_equal(ml_oversub_parse_ratio("false", &v), 0);
    assert_int_equal(v, 0);
    assert_int_equal(ml_oversub_parse_ratio("0", &v), 0);
    assert_int_equal(v, 0);
    assert_int_equal(ml_oversub_parse_ratio("0.5", &v), -1);    /* below 1: less than the quota itself */
    assert_int_equal(ml_oversub_parse_ratio("65", &v), -1);
    assert_int_equal(ml_oversub_parse_ratio("2x", &v), -1);
    assert_int_equal(ml_oversub_parse_ratio("nan", &v), -1);
    assert_int_equal(ml_oversub_parse_ratio("-2", &v), -1);
    assert_int_equal(ml_oversub_parse_wait("fail", &v), 0);
    assert_int_equal(v, 0);
    assert_int_equal(ml_oversub_parse_wait("wait", &v), 0);
    assert_int_equal(v, ML_WAIT_DEFAULT_MS);
    assert_int_equal(ml_oversub_parse_wait("wait:0.3", &v), 0);
    assert_int_equal(v, 300);
    assert_int_equal(ml_oversub_parse_wait("wait:86400", &v), 0);
    assert_int_equal(v, 86400000);
    assert_int_equal(ml_oversub_parse_wait("wait:86401", &v), -1);
    assert_int_equal(ml_oversub_parse_wait("wait:", &v), -1);
    assert_int_equal(ml_oversub_parse_wait("wait:-1", &v), -1);
    assert_int_equal(ml_oversub_parse_wait("sleep", &v), -1);
    assert_int_equal(ml_oversub_hami("true"), 1);
    assert_int_equal(ml_oversub_hami("TRUE"), 0);   /* HAMi's device plugin writes "true" */
    assert_int_equal(ml_oversub_hami(NULL), 0);
    assert_true(ml_oversub_bound(8 << 20, 0, 2000) == 16u << 20);
    assert_true(ml_oversub_bound(0, 64 << 20, 1500) == 96u << 20);   /* no quota: the device's memory */
    assert_true(ml_oversub_bound(0, 0, 2000) == 0);
    assert_true(ml_oversub_bound(UINT64_MAX / 2, 0, 64000) == UINT64_MAX);   /* saturates */
}

/* The host-backed pool: charged within the bound (used + spilled), credited apart from 'used'. */
static void test_budget_spill(void **state)
{
    ml_budget b;
    char err[256];
    (void)state;
    memset(&b, 0, sizeof b);
    assert_int_equal(ml_budget_open(&b, NULL, err, sizeof err), 0);
    assert_int_equal(ml_budget_charge(&b, 0, 6, 8), 0);
    assert_int_equal(ml_budget_spill_charge(&b, 0, 8, 16), 0);
    assert_int_equal(ml_budget_spill_charge(&b, 0, 3, 16), -1);   /* 6 + 8 + 3 > 16 */
    assert_true(ml_budget_spilled(&b, 0) == 8 && ml_budget_used(&b, 0) == 6);
    assert_int_equal(ml_budget_spill_charge(&b, 0, 2, 16), 0);
    ml_budget_spill_credit(&b, 0, 4);
    assert_true(ml_budget_spilled(&b, 0) == 6 && ml_budget_used(&b, 0) == 6);
    ml_budget_spill_credit(&b, 0, 100);   /* never below zero */
    assert_true(ml_budget_spilled(&b, 0) == 0);
    assert_int_equal(ml_budget_spill_charge(&b, ML_MAX_DEVICES, 1, 0), -1);   /* beyond what is tracked */
    ml_budget_close(&b);
}

static void test_budget_race(void **state)
{
    pthread_t t[8];
    ml_budget b;
    char err[256];
    (void)state;
    fresh_region();
    for (int i = 0; i < 8; i++)
        pthread_create(&t[i], NULL, racer, (void *)(uintptr_t)(i + 1));
    for (int i = 0; i < 8; i++)
        pthread_join(t[i], NULL);
    assert_int_equal(atomic_load(&over), 0);
    assert_int_equal(ml_budget_open(&b, region, err, sizeof err), 0);
    assert_int_equal(ml_budget_used(&b, 0), 0);
    /* the whole limit is there, and one byte more is not */
    assert_int_equal(ml_budget_charge(&b, 0, RACE_LIMIT, RACE_LIMIT), 0);
    assert_int_equal(ml_budget_charge(&b, 0, 1, RACE_LIMIT), -1);
    /* credits never take a slot below zero */
    ml_budget_credit(&b, 0, 2 * (uint64_t)RACE_LIMIT);
    assert_int_equal(ml_budget_used(&b, 0), 0);
    ml_budget_close(&b);
    unlink(region);
}

static void test_budget_dead_owner(void **state)
{
    ml_budget b;
    char err[256];
    int fds[2];
    pid_t pid;
    char c;
    (void)state;
    fresh_region();
    assert_int_equal(pipe(fds), 0);
    pid = fork();
    if (pid == 0) {
        ml_budget cb;
        if (ml_budget_open(&cb, region, err, sizeof err) != 0 || ml_budget_charge(&cb, 0, 1000, 1000) != 0)
            _exit(1);
        (void)!write(fds[1], "x", 1);
        pause();   /* killed holding its charge and its slot */
        _exit(0);
    }
    assert_int_equal(read(fds[0], &c, 1), 1);
    assert_int_equal(ml_budget_open(&b, region, err, sizeof err), 0);
    assert_int_equal(ml_budget_used(&b, 0), 1000);
    assert_int_equal(ml_budget_charge(&b, 0, 1, 1000), -1);   /* the owner is alive: the budget is full */
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    /* the dead owner's lock is gone: its charge is reclaimed when room is needed */
    assert_int_equal(ml_budget_charge(&b, 0, 1000, 1000), 0);
    assert_int_equal(ml_budget_used(&b, 0), 1000);
    for (uint32_t i = 0; i < atomic_load(&b.r->hiwater); i++)
        if ((int)i != b.slot)
            assert_int_equal(atomic_load(&b.r->slots[i].pid), 0);
    ml_budget_close(&b);
    close(fds[0]);
    close(fds[1]);
    unlink(region);
}

/* Memory by library (ml_budget_lib): an entry per (name, device), found again by both; when all but the last are
   taken, the last is named "(other)" for every device and takes every new name; a credit never goes below zero;
   a killed owner's entries go with its slot when it is reclaimed. */
static void test_budget_libs(void **state)
{
    ml_budget b;
    char err[256], name[32];
    int fds[2], idx;
    pid_t pid;
    char c;
    (void)state;
    fresh_region();
    assert_int_equal(ml_budget_open(&b, region, err, sizeof err), 0);
    ml_slot *s = &b.r->slots[b.slot];
    assert_int_equal(ml_budget_lib(&b, "libx.so", 0), 0);
    assert_int_equal(ml_budget_lib(&b, "liby.so", 0), 1);
    assert_int_equal(ml_budget_lib(&b, "libx.so", 1), 2);
    assert_int_equal(ml_budget_lib(&b, "libx.so", 0), 0);
    assert_string_equal(s->libs[2].name, "libx.so");
    assert_int_equal(s->libs[2].dev, 1);
    ml_budget_lib_add(&b, 0, 100);
    ml_budget_lib_sub(&b, 0, 30);
    assert_int_equal(atomic_load(&s->libs[0].used), 70);
    ml_budget_lib_sub(&b, 0, 1000);   /* never below zero */
    assert_int_equal(atomic_load(&s->libs[0].used), 0);
    for (int i = 3; i < ML_SLOT_LIBS - 1; i++) {
        snprintf(name, sizeof name, "lib%d.so", i);
        assert_int_equal(ml_budget_lib(&b, name, 0), i);
    }
    idx = ml_budget_lib(&b, "libfull.so", 3);
    assert_int_equal(idx, ML_SLOT_LIBS - 1);
    assert_string_equal(s->libs[idx].name, ML_LIB_OTHER);
    assert_int_equal(s->libs[idx].dev, -1);
    assert_int_equal(ml_budget_lib(&b, "libfull2.so", 0), ML_SLOT_LIBS - 1);
    assert_int_equal(ml_budget_lib(&b, "lib5.so", 0), 5);   /* named ones are still found */
    ml_budget_close(&b);

    fresh_region();
    assert_int_equal(pipe(fds), 0);
    pid = fork();
    if (pid == 0) {
        ml_budget cb;
        if (ml_budget_open(&cb, region, err, sizeof err) != 0 || ml_budget_charge(&cb, 0, 1000, 1000) != 0 ||
            ml_budget_lib(&cb, "libdead.so", 0) != 0)
            _exit(1);
        ml_budget_lib_add(&cb, 0, 1000);
        (void)!write(fds[1], "x", 1);
        pause();
        _exit(0);
    }
    assert_int_equal(read(fds[0], &c, 1), 1);
    assert_int_equal(ml_budget_open(&b, region, err, sizeof err), 0);
    assert_int_equal(atomic_load(&b.r->slots[0].libs[0].named), 1);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    assert_int_equal(ml_budget_charge(&b, 0, 1000, 1000), 0);   /* reclaims the dead slot */
    assert_int_equal(atomic_load(&b.r->slots[0].libs[0].named), 0);
    assert_int_equal(atomic_load(&b.r->slots[0].libs[0].used), 0);
    assert_int_equal(b.r->slots[0].libs[0].name[0], '\0');
    ml_budget_close(&b);
    close(fds[0]);
    close(fds[1]);
    unlink(region);
}

/* The caller's library (ml_caller): called from this program, "(program)"; with this program skipped (as the
   plugin skips the shim and itself), the next frame's object, cmocka's shared library, by its name cut after
   ".so". Two call sites: the cache is by return address. */
static __attribute__((noinline)) int caller_site_a(void)
{
    return ml_caller();
}

static __attribute__((noinline)) int caller_site_b(void)
{
    return ml_caller();
}

static void test_caller(void **state)
{
    const void *self[1] = {(const void *)caller_site_b};
    int id;
    (void)state;
    ml_caller_init(NULL, 0);
    id = caller_site_a();
    assert_int_equal(id, ML_CALLER_PROGRAM);
    assert_string_equal(ml_caller_name(id), "(program)");
    assert_int_equal(caller_site_a(), ML_CALLER_PROGRAM);   /* cached */
    ml_caller_init(self, 1);
    id = caller_site_b();
    assert_string_equal(ml_caller_name(id), "libcmocka.so");
    assert_string_equal(ml_caller_name(9999), "(unknown)");
}

/* Live limits (ml_budget_set_live, 'cushim limit'): a change through a second, slot-less opening of the region (the
   tool's) is seen by a member: the generation moves, each device gets what was asked (a size, no limit, or left as
   it was), and dropping it restores "none"; the tool takes no slot. */
static void test_budget_live(void **state)
{
    ml_budget b, admin;
    char err[256];
    uint64_t live[ML_MAX_DEVICES] = {0};
    (void)state;
    fresh_region();
    assert_int_equal(ml_budget_open(&b, region, err, sizeof err), 0);
    assert_int_equal(ml_budget_live_gen(&b), 0);
    assert_int_equal(ml_budget_admin(&admin, region, -1, err, sizeof err), 0);
    assert_int_equal(admin.slot, -1);
    live[0] = 16 << 20;
    live[1] = ML_LIVE_UNLIMITED;
    assert_int_equal(ml_budget_set_live(&admin, live), 1);
    assert_int_equal(ml_budget_live_gen(&b), 1);
    assert_int_equal(atomic_load(&b.r->live[0]), 16 << 20);
    assert_true(atomic_load(&b.r->live[1]) == ML_LIVE_UNLIMITED);
    assert_int_equal(atomic_load(&b.r->live[2]), 0);   /* not named: as it was */
    assert_true(atomic_load(&b.r->live_when) > 0);
    /* a second change names device 2 only: 0 and 1 keep theirs */
    memset(live, 0, sizeof live);
    live[2] = 1 << 20;
    assert_int_equal(ml_budget_set_live(&admin, live), 2);
    assert_int_equal(atomic_load(&b.r->live[0]), 16 << 20);
    assert_int_equal(atomic_load(&b.r->live[2]), 1 << 20);
    /* dropped: none anywhere, the generation moves again */
    for (int d = 0; d < ML_MAX_DEVICES; d++)
        live[d] = ML_LIVE_DROP;
    assert_int_equal(ml_budget_set_live(&admin, live), 3);
    for (int d = 0; d < ML_MAX_DEVICES; d++)
        assert_int_equal(atomic_load(&b.r->live[d]), 0);
    /* the tool held no slot: only the member's is in use */
    for (uint32_t i = 0; i < atomic_load(&b.r->hiwater); i++)
        if ((int)i != b.slot)
            assert_int_equal(atomic_load(&b.r->slots[i].pid), 0);
    ml_budget_close(&admin);
    ml_budget_close(&b);
    unlink(region);
}

/* The program closes every descriptor (a daemon's start-up) and gets the region's number for a file of its own:
   our slot stays locked (the mapping holds the lock), no lock operation and no close goes to the program's file,
   and reclaiming a dead owner's slot still works (the region is reopened by path). */
static void test_budget_program_closes_fd(void **state)
{
    ml_budget b;
    char err[256], victim[sizeof region + 8];
    int fds[2], num, v, st;
    pid_t pid;
    char c;
    struct flock fl;
    (void)state;
    fresh_region();
    assert_int_equal(pipe(fds), 0);
    pid = fork();
    if (pid == 0) {   /* a dead owner-to-be, holding the whole limit */
        ml_budget cb;
        if (ml_budget_open(&cb, region, err, sizeof err) != 0 || ml_budget_charge(&cb, 0, 1000, 1000) != 0)
            _exit(1);
        (void)!write(fds[1], "x", 1);
        pause();
        _exit(0);
    }
    assert_int_equal(read(fds[0], &c, 1), 1);
    assert_int_equal(ml_budget_open(&b, region, err, sizeof err), 0);
    num = b.rg.fd;
    /* the program: closes it, and its own file lands on the number */
    snprintf(victim, sizeof victim, "%s.victim", region);
    assert_int_equal(close(num), 0);
    v = open(victim, O_RDWR | O_CREAT | O_TRUNC, 0644);
    assert_true(v >= 0);
    if (v != num) {
        assert_int_equal(dup2(v, num), num);
        close(v);
    }
    /* another process still sees our slot alive */
    pid_t q = fork();
    if (q == 0) {
        ml_budget cb;
        if (ml_budget_attach(&cb, region, err, sizeof err) != 0)
            _exit(2);
        _exit(ml_budget_slot_alive(&cb, b.slot) ? 0 : 1);
    }
    assert_int_equal(waitpid(q, &st, 0), q);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    /* the dead owner's slot is reclaimed through a reopened descriptor */
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    assert_int_equal(ml_budget_charge(&b, 0, 1000, 1000), 0);
    assert_true(b.rg.fd != num);
    /* nothing locked on the program's file, and its descriptor survives our close */
    q = fork();
    if (q == 0) {   /* OFD locks are per description: a new one sees every other's */
        int o = open(victim, O_RDWR);
        for (int i = 0; i < 4; i++) {
            memset(&fl, 0, sizeof fl);
            fl.l_type = F_WRLCK;
            fl.l_whence = SEEK_SET;
            fl.l_start = ML_LOCK_BASE + i;
            fl.l_len = 1;
            if (o < 0 || fcntl(o, F_OFD_GETLK, &fl) != 0 || fl.l_type != F_UNLCK)
                _exit(1);
        }
        _exit(0);
    }
    assert_int_equal(waitpid(q, &st, 0), q);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    ml_budget_close(&b);
    assert_true(fcntl(num, F_GETFD) >= 0);   /* still the program's */
    assert_int_equal(write(num, "ok", 2), 2);
    close(num);
    close(fds[0]);
    close(fds[1]);
    unlink(victim);
    unlink(region);
}

static void test_budget_foreign_file(void **state)
{
    ml_budget b;
    char err[256], buf[64];
    FILE *f;
    (void)state;
    fresh_region();
    f = fopen(region, "w");
    assert_non_null(f);
    fputs("HAMi-core's own cache, not ours", f);
    fclose(f);
    assert_int_equal(ml_budget_open(&b, region, err, sizeof err), -1);   /* refused; a private budget */
    assert_non_null(strstr(err, "of this layout"));   /* another program's file: refused, never written */
    assert_non_null(b.r);
    assert_int_equal(ml_budget_charge(&b, 0, 10, 100), 0);
    ml_budget_close(&b);
    f = fopen(region, "r");
    assert_non_null(fgets(buf, sizeof buf, f));
    fclose(f);
    assert_string_equal(buf, "HAMi-core's own cache, not ours");   /* untouched */
    /* a few zero bytes and then other data: another program's too, never written nor grown */
    f = fopen(region, "w");
    assert_non_null(f);
    fwrite("\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 1, 16, f);
    fputs("other data", f);
    fclose(f);
    assert_int_equal(ml_budget_open(&b, region, err, sizeof err), -1);
    assert_non_null(strstr(err, "of this layout"));   /* another program's file: refused, never written */
    {
        struct stat fst;
        char back[32];
        FILE *g = fopen(region, "r");
        assert_int_equal(stat(region, &fst), 0);
        assert_int_equal(fst.st_size, 26);
        assert_non_null(g);
        assert_int_equal(fread(back, 1, sizeof back, g), 26);
        fclose(g);
        assert_memory_equal(back + 16, "other data", 10);
    }
    ml_budget_close(&b);
    unlink(region);
}

static void test_table(void **state)
{
    ml_table t;
    ml_rec r, out;
    (void)state;
    ml_table_init(&t);
    memset(&r, 0, sizeof r);
    for (uint64_t i = 1; i <= 1000000; i++) {
        r.key = 0x7f0000000000ull + (i % 977) * 4096 + (i & 1) * 64;
        r.bytes = i;
        r.refs = 1;
        assert_int_equal(ml_table_put(&t, &r, NULL), 0);
        if (i % 3 != 0)
            assert_int_equal(ml_table_take(&t, 0, r.key, &out), 1);
    }
    /* whatever is left is found, each exactly once, and the table empties */
    while (ml_table_count(&t) > 0) {
        size_t before = ml_table_count(&t);
        for (size_t i = 0; i < t.cap; i++)
            if (t.cells[i].key) {
                assert_int_equal(ml_table_take(&t, t.cells[i].ns, t.cells[i].key, &out), 1);
                break;
            }
        assert_int_equal(ml_table_count(&t), before - 1);
    }
    /* namespaces: a VMM handle and a pointer with the same value are two records */
    r.key = 42;
    r.ns = 0;
    ml_table_put(&t, &r, NULL);
    r.ns = 1;
    r.refs = 2;
    ml_table_put(&t, &r, NULL);
    assert_int_equal(ml_table_release(&t, 1, 42, &out), 1);   /* one reference dropped */
    assert_int_equal(ml_table_release(&t, 1, 42, &out), 2);   /* the last: removed */
    assert_int_equal(ml_table_release(&t, 1, 42, &out), 0);
    assert_int_equal(ml_table_take(&t, 0, 42, &out), 1);
    ml_table_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bytes),         cmocka_unit_test(test_spec),
        cmocka_unit_test(test_hami_values),   cmocka_unit_test(test_hami_env),
        cmocka_unit_test(test_visible),       cmocka_unit_test(test_budget_names),
        cmocka_unit_test(test_budget_race),   cmocka_unit_test(test_budget_dead_owner),
        cmocka_unit_test(test_oversub_options), cmocka_unit_test(test_budget_spill),
        cmocka_unit_test(test_budget_foreign_file), cmocka_unit_test(test_budget_program_closes_fd),
        cmocka_unit_test(test_budget_live),
        cmocka_unit_test(test_budget_libs),   cmocka_unit_test(test_caller),
        cmocka_unit_test(test_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
