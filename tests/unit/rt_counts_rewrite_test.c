/*
 * rt_counts_rewrite_test.c - cnt_write may run several times (atexit, then after
 * the destructors): each pass leaves the complete totals in a regular file
 * (rewritten in place, never a second copy of a line), and appends to a
 * descriptor only when something new was counted. Run twice by ctest:
 * CUSHIM_COUNTS=<file>, and CUSHIM_COUNTS=- with stderr sent to the file named
 * by RT_STDERR_FILE.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cushim_params.h"
#include "rt_internal.h"

static CUresult fake_get_version(int *v)
{
    *v = 13000;
    return CUDA_SUCCESS;
}

static CUresult fake_init(unsigned int f)
{
    (void)f;
    return CUDA_SUCCESS;
}

/* Occurrences of 'name<TAB>' lines and of headers; the value of the last one. */
static int scan(const char *path, const char *name, long *last, int *headers)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[256];
    int n = 0;
    size_t len = strlen(name);
    *last = -1;
    *headers = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "# cushim counts pid ", 20) == 0)
            (*headers)++;
        if (strncmp(line, name, len) == 0 && line[len] == '\t') {
            n++;
            *last = atol(line + len + 1);
        }
    }
    fclose(f);
    return n;
}

static void test_rewrite(void **state)
{
    (void)state;
    const char *path = getenv("RT_STDERR_FILE");
    int to_stderr = path != NULL;
    if (!to_stderr)
        path = getenv("CUSHIM_COUNTS");
    assert_non_null(path);
    assert_true(cnt_enabled);
    rt_record_real(CUSHIM_API_cuDriverGetVersion, (void *)fake_get_version);
    rt_record_real(CUSHIM_API_cuInit, (void *)fake_init);
    int v;
    long last;
    int headers;
    for (int i = 0; i < 5; i++)
        cuDriverGetVersion(&v);
    cnt_write();
    assert_int_equal(scan(path, "cuDriverGetVersion", &last, &headers), 1);
    assert_int_equal(last, 5);
    assert_int_equal(scan(path, "cuInit", &last, &headers), 0);

    cnt_write();   /* nothing new: a descriptor gets nothing, the file stays the same */
    assert_int_equal(scan(path, "cuDriverGetVersion", &last, &headers), 1);
    if (to_stderr)
        assert_int_equal(headers, 1);

    cuDriverGetVersion(&v);
    cuInit(0);
    cnt_write();
    if (to_stderr) {
        /* a second block with the new totals */
        assert_int_equal(scan(path, "cuDriverGetVersion", &last, &headers), 2);
        assert_int_equal(headers, 2);
    } else {
        assert_int_equal(scan(path, "cuDriverGetVersion", &last, &headers), 1);
        assert_int_equal(headers, 0);
    }
    assert_int_equal(last, 6);
    assert_int_equal(scan(path, "cuInit", &last, &headers), 1);
    assert_int_equal(last, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_rewrite) };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
