/*
 * rt_loader_test.c - CUSHIM_PLUGINS: the syntax, where a plugin NAME is looked
 * for, and every reason a plugin fails to load, each reported in one log line
 * naming the plugin and the reason (optional plugins here, so the process
 * keeps working); then a required plugin's failure in a child: the shim fails
 * closed (every CUDA call returns an initialisation error of its return kind,
 * the real function is not called, the cuGetProcAddress family still answers),
 * the reason is repeated once at the first refused call, and with
 * CUSHIM_LOG=off both lines are still written.
 *
 * The plugins are builds of tests/e2e/e2e_plugin_probe.c (RT_PLUGIN_DIR).
 * Run with CUSHIM_LOG=info and CUSHIM_LOG_FILE=<file> (read back here).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "cushim_params.h"
#include "rt_internal.h"
#include "rt_test_host.h"

static int occurrences(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

/* Loads 'list' and checks that the log gained a line containing each 'want'. */
static void load_expect(const char *list, const char *want1, const char *want2)
{
    size_t before = strlen(rt_test_log_text());
    _Atomic uint32_t taken = 0;
    ldr_load_list(list, &taken);
    const char *added = rt_test_log_text() + before;
    if ((want1 && !strstr(added, want1)) || (want2 && !strstr(added, want2)))
        print_error("loading '%s' logged:\n%s\nwanted '%s' and '%s'\n", list, added, want1 ? want1 : "",
                    want2 ? want2 : "");
    assert_true(want1 == NULL || strstr(added, want1) != NULL);
    assert_true(want2 == NULL || strstr(added, want2) != NULL);
    assert_false(sl_failed());
}

#define P(name) RT_PLUGIN_DIR "/probe_" name ".so"

static void test_failure_reasons(void **state)
{
    (void)state;
    const char *opt = "(optional: the others keep working)";
    load_expect("?" RT_PLUGIN_DIR "/nonexistent.so", "plugin 'nonexistent.so': no such file: " RT_PLUGIN_DIR
                "/nonexistent.so", opt);
    char text[256];
    snprintf(text, sizeof text, "%s/not_elf.so", RT_PLUGIN_DIR);
    FILE *f = fopen(text, "w");
    assert_non_null(f);
    fputs("this is not a shared object\n", f);
    fclose(f);
    load_expect("?" RT_PLUGIN_DIR "/not_elf.so", "plugin 'not_elf.so': cannot load " RT_PLUGIN_DIR "/not_elf.so: ",
                opt);
    load_expect("?" P("noentry"), "exports no cushim_plugin_entry() (not a cushim plugin?)", opt);
    load_expect("?" P("small"), "plugin definition too small (24 bytes; at least", opt);
    load_expect("?" P("major"), "plugin 'probe-major': was built for SDK ABI 2.0, this shim provides " RT_ABI_NOW, opt);
    snprintf(text, sizeof text, "plugin 'probe-newer': was built for SDK ABI %s, this shim provides " RT_ABI_NOW,
             rt_abi_next());
    load_expect("?" P("newer"), text, opt);
    load_expect("?" P("good") ":bogus=1", "plugin 'probe-good': unknown option \"bogus\" (out, select, count", opt);
    load_expect("?" P("good") ":count=ten", "plugin 'probe-good': option 'count' = \"ten\" is not a valid int", opt);
    load_expect("?" P("good") ":on=2", "option 'on' = \"2\" is not a valid bool", opt);
    load_expect("?" P("good") ":limit=3X", "option 'limit' = \"3X\" is not a valid bytes", opt);
    load_expect("?" P("good") ":count=1,count=2", "option 'count' given twice", opt);
    load_expect("?" P("required"), "plugin 'probe-required': required option 'need' (string) is not given", opt);
    load_expect("?" P("baddefault"), "the default 'lots' of option 'limit' is not a valid bytes", opt);
    load_expect("?Bad_Name", "'Bad_Name' is neither a plugin name ([a-z0-9_-]+) nor a path (with a '/')", opt);
    load_expect("?noplugin", "plugin 'noplugin': no such plugin (looked for ", "/cushim/plugins/noplugin.so, ");
    /* init fails after registering hooks on every driver API: all undone. */
    assert_null(atomic_load(&rt_slots[CUSHIM_API_cuInit].chain));
    load_expect("?" P("good") ":fail_init=3", "plugin 'probe-good': init returned 3", opt);
    assert_null(atomic_load(&rt_slots[CUSHIM_API_cuInit].chain));
}

/* A name or path longer than a path may be is refused, never cut: its first 4095 bytes named another file
   (here a real plugin, probe_older.so, which then loaded). */
static void test_long_path(void **state)
{
    (void)state;
    static char list[PATH_MAX + 64];
    const char *file = "probe_older.so";
    size_t n = (size_t)snprintf(list, sizeof list, "?%s/", RT_PLUGIN_DIR);
    if ((PATH_MAX - 1 - (n - 1) - strlen(file)) % 2)
        list[n++] = '/';
    while (n - 1 + strlen(file) < PATH_MAX - 1) {
        list[n++] = '.';
        list[n++] = '/';
    }
    snprintf(list + n, sizeof list - n, "%sXYZ", file);
    assert_int_equal(strlen(list) - 1, PATH_MAX - 1 + 3);   /* its first PATH_MAX - 1 bytes name the plugin */
    load_expect(list, "past the 4095 a path may have", "(optional: the others keep working)");
    assert_null(atomic_load(&rt_slots[CUSHIM_API_cuInit].chain));
}

static void test_loads(void **state)
{
    (void)state;
    /* Minor 0 of the shim's major loads; white space, empty specs and newlines are fine. */
    load_expect(" ;\n  " P("older") " ; ;\n", "plugin 'probe-older' 1.0 loaded from " P("older"), NULL);
    const hk_chain *ch = atomic_load(&rt_slots[CUSHIM_API_cuInit].chain);
    assert_non_null(ch);
    assert_int_equal(ch->n, 1);   /* its init hooked every driver API */
    /* Options with every escape reach the plugin through the loader. */
    load_expect(P("good") ":count=0x10,text=a\\,b\\;c\\\\d:e=f,tag=x,tag=y;" P("required") ":need=yes",
                "plugin 'probe-good' 1.0 loaded", "plugin 'probe-required' 1.0 loaded");
    ch = atomic_load(&rt_slots[CUSHIM_API_cuInit].chain);
    assert_int_equal(ch->n, 3);
    /* The same plugin twice is refused (its code and state exist once). */
    load_expect("?" P("good"), "a plugin named 'probe-good' is already loaded", NULL);
}

/* Where NAME is looked for, relative to the shim's own file. */
static void test_name_resolution(void **state)
{
    (void)state;
    char root[] = "/tmp/rt_loader_test.XXXXXX", p[512], out[512], tried[1024];
    assert_non_null(mkdtemp(root));
    const char *dirs[] = { "lib/cushim/plugins", "runtime", "plugins", "lib/cushim/dropin" };
    for (size_t i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "mkdir -p %s/%s", root, dirs[i]);
        assert_int_equal(system(p), 0);
    }
    const char *files[] = { "lib/cushim/plugins/foo.so", "plugins/foo.so", "plugins/bar.so", "lib/cushim/plugins/baz.so" };
    for (size_t i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "%s/%s", root, files[i]);
        int fd = open(p, O_CREAT | O_WRONLY, 0644);
        assert_true(fd >= 0);
        close(fd);
    }
    /* Installed libcushim.so: P/lib/cushim/plugins. */
    snprintf(p, sizeof p, "%s/lib/libcushim.so", root);
    assert_int_equal(ldr_plugin_file(p, "foo", out, sizeof out, tried, sizeof tried), 0);
    assert_non_null(strstr(out, "/lib/cushim/plugins/foo.so"));
    /* Build tree: build/runtime/libcushim.so -> build/plugins. */
    snprintf(p, sizeof p, "%s/runtime/libcushim.so", root);
    assert_int_equal(ldr_plugin_file(p, "bar", out, sizeof out, tried, sizeof tried), 0);
    assert_non_null(strstr(out, "/runtime/../plugins/bar.so"));
    /* Installed drop-in: P/lib/cushim/dropin -> P/lib/cushim/plugins. */
    snprintf(p, sizeof p, "%s/lib/cushim/dropin/libcuda.so.1", root);
    assert_int_equal(ldr_plugin_file(p, "baz", out, sizeof out, tried, sizeof tried), 0);
    assert_non_null(strstr(out, "/lib/cushim/dropin/../plugins/baz.so"));
    /* Not there: both places are named. */
    assert_int_equal(ldr_plugin_file(p, "qux", out, sizeof out, tried, sizeof tried), -1);
    assert_non_null(strstr(tried, "/lib/cushim/dropin/cushim/plugins/qux.so, "));
    assert_non_null(strstr(tried, "/lib/cushim/dropin/../plugins/qux.so"));
    snprintf(p, sizeof p, "rm -rf %s", root);
    assert_int_equal(system(p), 0);
}

static int real_called;
static CUresult fake_get_version(int *v)
{
    real_called++;
    *v = 13000;
    return CUDA_SUCCESS;
}

static cudaError_t fake_get_device(int *d)
{
    real_called++;
    *d = 1;
    return cudaSuccess;
}

static const char *fake_error_name(cudaError_t e)
{
    (void)e;
    real_called++;
    return "cudaSuccess";
}

static CUresult fake_gpa(const char *s, void **p, int v, cuuint64_t f, CUdriverProcAddressQueryResult *st)
{
    (void)s, (void)v, (void)f;
    *p = (void *)fake_get_version;
    if (st != NULL)
        *st = CU_GET_PROC_ADDRESS_SUCCESS;
    return CUDA_SUCCESS;
}

/* In a child: a required plugin fails; exit 0 if the shim failed closed as documented. */
static int fail_closed_child(void)
{
    rt_record_real(CUSHIM_API_cuDriverGetVersion, (void *)fake_get_version);
    rt_record_real(CUSHIM_API_cudaGetDevice, (void *)fake_get_device);
    rt_record_real(CUSHIM_API_cudaGetErrorName, (void *)fake_error_name);
    rt_record_real(CUSHIM_API_cuGetProcAddress_v2, (void *)fake_gpa);
    size_t before = strlen(rt_test_log_text());
    _Atomic uint32_t taken = 0;
    ldr_load_list(P("major"), &taken);
    if (!sl_failed())
        return 2;
    int v = 0, d = 0;
    void *fn = NULL;
    CUdriverProcAddressQueryResult st;
    if (cudaGetDevice(&d) != cudaErrorInitializationError || d != 0 || cudaGetDevice(&d) != cudaErrorInitializationError)
        return 3;
    if (real_called != 0)
        return 4;
    /* what describes an error or a version keeps answering (a program reporting the refusal with
       std::string(cudaGetErrorString(e)) died on the NULL it returned), from the real function */
    const char *name = cudaGetErrorName(cudaSuccess);
    if (name == NULL || strcmp(name, "cudaSuccess") != 0 || cuDriverGetVersion(&v) != CUDA_SUCCESS || v != 13000 ||
        real_called != 2)
        return 7;
    /* and one whose library is not loaded answers a string too, never NULL */
    const char *text = cudaGetErrorString(cudaErrorInvalidValue);
    if (text == NULL || strstr(text, "unknown error") == NULL)
        return 8;
    /* cuGetProcAddress still answers (mapped to our wrapper), so programs see the error on call. */
    if (cuGetProcAddress_v2("cuDriverGetVersion", &fn, 12000, 0, &st) != CUDA_SUCCESS ||
        fn != rt_wrapper_of[CUSHIM_API_cuDriverGetVersion])
        return 5;
    const char *added = rt_test_log_text() + before;
    if (occurrences(added, "plugin 'probe-major': was built for SDK ABI 2.0, this shim provides " RT_ABI_NOW "; failing "
                           "closed: every CUDA call returns an initialisation error") != 1 ||
        occurrences(added, "cudaGetDevice refused: every CUDA call returns an initialisation error, as "
                           "plugin 'probe-major': was built for SDK ABI 2.0, this shim provides " RT_ABI_NOW) != 1 ||
        occurrences(added, "refused") != 1)
        return 6;
    return 0;
}

static void test_fail_closed(void **state)
{
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(fail_closed_child());
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    assert_false(sl_failed());   /* the parent is untouched */
}

/* CUSHIM_LOG=off: the lines that explain failing closed are still written. */
static void test_fail_closed_log_off(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], 2);
        close(fds[0]);
        unsetenv("CUSHIM_LOG_FILE");
        setenv("CUSHIM_LOG", "off", 1);
        setenv("CUSHIM_PLUGINS", P("major"), 1);
        execl("/proc/self/exe", "rt_loader_test", "--log-off-child", (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    char buf[8192];
    size_t n = 0;
    ssize_t r;
    while (n < sizeof buf - 1 && (r = read(fds[0], buf + n, sizeof buf - 1 - n)) > 0)
        n += (size_t)r;
    buf[n] = '\0';
    close(fds[0]);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    assert_int_equal(occurrences(buf, "plugin 'probe-major': was built for SDK ABI 2.0"), 2);
    assert_int_equal(occurrences(buf, "] error: "), 2);
    assert_int_equal(occurrences(buf, "cushim["), 2);   /* nothing else at 'off' */
}

static int log_off_child(void)
{
    int d = 0;
    return cudaGetDevice(&d) == cudaErrorInitializationError ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--log-off-child") == 0)
        return log_off_child();
    const char *log = getenv("CUSHIM_LOG_FILE");
    if (log == NULL || truncate(log, 0) != 0) {
        fprintf(stderr, "rt_loader_test: run with CUSHIM_LOG_FILE set to a writable file\n");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_failure_reasons),
        cmocka_unit_test(test_long_path),
        cmocka_unit_test(test_loads),
        cmocka_unit_test(test_name_resolution),
        cmocka_unit_test(test_fail_closed),
        cmocka_unit_test(test_fail_closed_log_off),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
