/*
 * rt_select_test.c - the selector grammar of cushim.h, through host->api_select
 * and host->api_match: every atom kind, unions and intersections, white space,
 * id order and the cap, malformed selectors (CUSHIM_EINVAL with a reason) and
 * selectors naming nothing of this build (0 matches; hooks_add: ENOMATCH).
 */
#include <fnmatch.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "rt_internal.h"
#include "rt_test_host.h"

static uint32_t ids[CUSHIM_API_ID_LIMIT];

static int sel(const char *s)
{
    return rt_host()->api_select(s, ids, CUSHIM_API_ID_LIMIT, NULL, 0);
}

static int has(int n, uint32_t id)
{
    for (int i = 0; i < n; i++)
        if (ids[i] == id)
            return 1;
    return 0;
}

/* How many APIs satisfy 'pred' (the expected size of a selection). */
static int count_where(int (*pred)(const cushim_api_info *))
{
    int n = 0;
    for (uint32_t i = 0; i < cushim_gen_api_count; i++)
        n += pred(&cushim_gen_apis[i]);
    return n;
}

static int api_lib_of(uint32_t id)
{
    for (uint32_t i = 0; i < cushim_gen_api_count; i++)
        if (cushim_gen_apis[i].id == id)
            return (int)cushim_gen_apis[i].library;
    return -1;
}

static int is_driver(const cushim_api_info *a) { return a->library == CUSHIM_LIB_DRIVER; }
static int is_runtime(const cushim_api_info *a) { return a->library == CUSHIM_LIB_RUNTIME; }
static int is_alloc_or_free(const cushim_api_info *a) { return (a->categories & (CUSHIM_CAT_ALLOC | CUSHIM_CAT_FREE)) != 0; }
static int is_driver_alloc(const cushim_api_info *a) { return is_driver(a) && (a->categories & CUSHIM_CAT_ALLOC); }
static int is_cumem(const cushim_api_info *a) { return fnmatch("cuMem*", a->name, 0) == 0; }
static int base_memcpy(const cushim_api_info *a) { return strcmp(a->base_name, "cudaMemcpy") == 0 || strcmp(a->name, "cudaMemcpy") == 0; }

static void test_atoms(void **state)
{
    (void)state;
    assert_int_equal(sel("all"), (int)cushim_gen_api_count);
    int n = sel("id:89");
    assert_int_equal(n, 1);
    assert_int_equal(ids[0], 89);
    assert_int_equal(sel("name:cuMemAlloc_v2"), 1);
    assert_int_equal(ids[0], CUSHIM_API_cuMemAlloc_v2);
    /* base: every ABI variant: cuMemAlloc and cuMemAlloc_v2. */
    n = sel("base:cuMemAlloc");
    assert_int_equal(n, 2);
    assert_true(has(n, CUSHIM_API_cuMemAlloc) && has(n, CUSHIM_API_cuMemAlloc_v2));
    assert_true(ids[0] < ids[1]);   /* id order */
    /* A bare base name is base:, a bare exported name is name:. */
    assert_int_equal(sel("cuMemAlloc"), 2);
    assert_int_equal(sel("cuMemAlloc_v2"), 1);
    /* Runtime per-thread variants share the base name. */
    n = sel("cudaMemcpy");
    assert_int_equal(n, count_where(base_memcpy));
    assert_true(has(n, CUSHIM_API_cudaMemcpy) && has(n, CUSHIM_API_cudaMemcpy_ptds));
    assert_int_equal(sel("glob:cuMem*"), count_where(is_cumem));
    assert_int_equal(sel("cuMem*"), count_where(is_cumem));
    assert_int_equal(sel("cuMemAlloc?v2"), 1);
    assert_int_equal(sel("cuMemAlloc[_]v2"), 1);
    assert_int_equal(sel("lib:driver"), count_where(is_driver));
    assert_int_equal(sel("lib:runtime"), count_where(is_runtime));
    {   /* every API in exactly one of the tree's libraries; each universal library with its size (the 13.0
           tree has all six, 13.5 driver, runtime and NVML, 12.9 and 11.8 two); one the tree lacks: an error */
        static const struct { const char *word; int min; } universal[] = {
            {"lib:nvml", 100}, {"lib:nccl", 10}, {"lib:cublas", 100}, {"lib:cublaslt", 10}};
        int sum = 0;
        char word[64];
        for (unsigned k = 0; k < lb_nlibraries; k++) {
            snprintf(word, sizeof word, "lib:%s", lb_libraries[k].name);
            sum += sel(word);
        }
        assert_int_equal(sum, (int)cushim_gen_api_count);
        for (unsigned u = 0; u < sizeof universal / sizeof universal[0]; u++) {
            int present = 0;
            for (unsigned k = 0; k < lb_nlibraries; k++)
                present |= strcmp(universal[u].word + 4, lb_libraries[k].name) == 0;
            if (present)
                assert_true(sel(universal[u].word) > universal[u].min);
            else
                assert_true(sel(universal[u].word) < 0);
        }
    }
    assert_int_equal(sel("cat:alloc+free"), count_where(is_alloc_or_free));
    assert_true(count_where(is_alloc_or_free) > 10);
}

static void test_terms(void **state)
{
    (void)state;
    assert_int_equal(sel("lib:driver & cat:alloc"), count_where(is_driver_alloc));
    int n = sel(" cuInit ,  cuDriverGetVersion,id:89 ");
    assert_int_equal(n, 3);
    assert_true(has(n, CUSHIM_API_cuInit) && has(n, CUSHIM_API_cuDriverGetVersion) && has(n, 89));
    /* Union of overlapping terms counts each API once. */
    assert_int_equal(sel("cuMemAlloc,cuMemAlloc_v2,base:cuMemAlloc"), 2);
    /* '!' negates an atom: everything but the driver's allocations; a union with a negation. */
    assert_int_equal(sel("all&!lib:driver"), (int)cushim_gen_api_count - count_where(is_driver));
    assert_int_equal(sel("lib:driver&!cat:alloc"), count_where(is_driver) - count_where(is_driver_alloc));
    n = sel("! cuInit & lib:driver & ! base:cuMemAlloc");
    assert_int_equal(n, count_where(is_driver) - 3);   /* cuInit, cuMemAlloc, cuMemAlloc_v2 */
    assert_false(has(n, CUSHIM_API_cuInit) || has(n, CUSHIM_API_cuMemAlloc_v2));
    assert_true(has(n, CUSHIM_API_cuDriverGetVersion));
    assert_int_equal(sel("!!cuInit"), 1);
    assert_int_equal(sel("!all"), 0);
    assert_int_equal(rt_host()->api_match("lib:runtime,!lib:runtime", CUSHIM_API_cuInit), 1);
    /* An empty intersection is valid and matches nothing. */
    assert_int_equal(sel("lib:runtime&cuInit"), 0);
    /* The count may exceed the cap; only 'cap' ids are written. */
    ids[1] = 0xdeadbeef;
    assert_int_equal(rt_host()->api_select("all", ids, 1, NULL, 0), (int)cushim_gen_api_count);
    assert_int_equal(ids[1], 0xdeadbeef);
    assert_int_equal(rt_host()->api_select("all", NULL, 0, NULL, 0), (int)cushim_gen_api_count);
}

/* A long list of ids (the trace plugin registers its hook groups so): every API selected once, in linear
   time; id atoms inside an intersection or negated keep their meaning. */
static void test_id_lists(void **state)
{
    (void)state;
    size_t cap = (size_t)cushim_gen_api_count * 16 + 64, len = 0;
    char *s = malloc(cap);
    uint32_t want = 0;
    assert_non_null(s);
    for (uint32_t i = 0; i < cushim_gen_api_count; i++) {
        uint32_t id = cushim_gen_apis[i].id;
        if (id % 3 != 0)
            continue;
        len += (size_t)snprintf(s + len, cap - len, "%sid:%u", len ? "," : "", id);
        want++;
    }
    int n = sel(s);
    assert_int_equal(n, (int)want);
    for (int i = 0; i < n; i++)
        assert_int_equal(ids[i] % 3, 0);
    /* the same list and a term that is not a lone id: the union */
    len += (size_t)snprintf(s + len, cap - len, ",cuInit");
    n = sel(s);
    assert_int_equal(n, (int)want + (CUSHIM_API_cuInit % 3 != 0));
    assert_true(has(n, CUSHIM_API_cuInit));
    free(s);
    /* not a lone positive id: stays an atom */
    assert_int_equal(sel("all&!id:89"), (int)cushim_gen_api_count - 1);
    assert_int_equal(sel("id:89&lib:runtime"), api_lib_of(89) == CUSHIM_LIB_RUNTIME);
    assert_int_equal(sel("!id:89"), (int)cushim_gen_api_count - 1);
    assert_int_equal(sel("id:89,id:89"), 1);
    /* a lone id before an intersection: the intersection's first atom takes the lone id's slot, and is not
       a term of its own (it was: 'id:1,id:2&name:cuInit' selected API 2 too; found by tests/fuzz/fuzz_select.c) */
    assert_int_equal(sel("id:89,id:90&name:cuInit"), 1 + (CUSHIM_API_cuInit == 90));
    assert_false(has(sel("id:89,id:90&name:cuInit"), 90) && CUSHIM_API_cuInit != 90);
    assert_int_equal(sel("id:89,!id:90&!all"), 1);
    assert_int_equal(sel("id:89,!id:90&!all"), sel("!id:90&!all,id:89"));
}

static void test_match(void **state)
{
    (void)state;
    const cushim_host *h = rt_host();
    assert_int_equal(h->api_match("base:cuMemAlloc", CUSHIM_API_cuMemAlloc_v2), 1);
    assert_int_equal(h->api_match("cat:free", CUSHIM_API_cuMemAlloc_v2), 0);
    assert_int_equal(h->api_match("lib:driver&cat:alloc", CUSHIM_API_cuMemAlloc_v2), 1);
    assert_int_equal(h->api_match("all", 0), 0);   /* no API has id 0 */
    assert_int_equal(h->api_match("cat:bogus", CUSHIM_API_cuInit), CUSHIM_EINVAL);
}

static void test_errors(void **state)
{
    (void)state;
    const char *bad[] = { "", ",", "cuInit,", "&cuInit", "cuInit&", "id:", "id:x", "id:-1", "name:", "name:a-b",
                          "base:1x", "cat:", "cat:alloc+", "cat:nope", "lib:gpu", "foo:bar", "not a name",
                          "cu Init", "!", "cuInit&!", "!!" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char err[256] = "";
        int r = rt_host()->api_select(bad[i], ids, CUSHIM_API_ID_LIMIT, err, sizeof err);
        if (r != CUSHIM_EINVAL)
            print_error("selector '%s' gave %d\n", bad[i], r);
        assert_int_equal(r, CUSHIM_EINVAL);
        assert_true(err[0] != '\0');
    }
    assert_int_equal(rt_host()->api_select(NULL, ids, 1, NULL, 0), CUSHIM_EINVAL);
    /* Valid, but nothing of this build: 0 (with a reason), and hooks_add says ENOMATCH. */
    char err[256] = "";
    assert_int_equal(rt_host()->api_select("cuFunctionOfCuda99", ids, 1, err, sizeof err), 0);
    assert_non_null(strstr(err, "matches no API"));
    assert_int_equal(sel("id:5000"), 0);
    assert_int_equal(sel("glob:zz*"), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_atoms),
        cmocka_unit_test(test_terms),
        cmocka_unit_test(test_id_lists),
        cmocka_unit_test(test_match),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
