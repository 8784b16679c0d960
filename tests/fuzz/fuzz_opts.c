/*
 * fuzz_opts.c - libFuzzer harness for plugin option lists (op_load, runtime/options.c): the
 * "key=value,key=value" text of one CUSHIM_PLUGINS entry, with '\' escapes, checked against a
 * declaration of every option type (string, int, bool, double, bytes; a repeatable and a
 * required one). Checked for every input: the result is CUSHIM_OK or an error with a reason
 * that is one terminated line; on success every declared option reads back a value that
 * parses as its type, and a repeatable option's count matches its values.
 */
#include "fuzz_common.h"
#include "rt_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const cushim_option fuzz_decl[] = {
    { "name", CUSHIM_OPT_STRING, "x", "a string" },
    { "n", CUSHIM_OPT_INT, "0", "an int" },
    { "on", CUSHIM_OPT_BOOL, "false", "a bool" },
    { "ratio", CUSHIM_OPT_DOUBLE, "0.5", "a double" },
    { "size", CUSHIM_OPT_BYTES, "1MiB", "bytes" },
    { "rule", CUSHIM_OPT_STRING | CUSHIM_OPT_REPEAT, NULL, "repeatable" },
    { "must", CUSHIM_OPT_INT | CUSHIM_OPT_REQUIRED, NULL, "required" },
    { NULL, 0, NULL, NULL },
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_cstr(data, size);
    char err[256];
    err[0] = '\0';
    op_set s;
    memset(&s, 0, sizeof s);
    int r = op_load(&s, fuzz_decl, text, err, sizeof err);
    if (r != CUSHIM_OK) {
        FUZZ_CHECK(r < 0);
        FUZZ_CHECK(err[0] != '\0');
        fuzz_check_line(err, sizeof err);
    } else {
        for (uint32_t i = 0; fuzz_decl[i].name != NULL; i++) {
            uint32_t idx = 0;
            FUZZ_CHECK(op_decl(&s, fuzz_decl[i].name, &idx) == &fuzz_decl[i] && idx == i);
            const char *v = op_text(&s, i, 0);
            uint32_t type = fuzz_decl[i].type & CUSHIM_OPT_TYPE_MASK;
            if (fuzz_decl[i].type & CUSHIM_OPT_REPEAT) {
                uint32_t n = op_count(&s, i);
                for (uint32_t k = 0; k < n; k++)
                    FUZZ_CHECK(op_text(&s, i, k) != NULL);
                continue;
            }
            FUZZ_CHECK(v != NULL);   /* given, or a default, or required (load failed otherwise) */
            int64_t iv;
            int bv;
            double dv;
            uint64_t uv;
            if (type == CUSHIM_OPT_INT)
                FUZZ_CHECK(op_parse_int(v, &iv) == 0);
            else if (type == CUSHIM_OPT_BOOL)
                FUZZ_CHECK(op_parse_bool(v, &bv) == 0);
            else if (type == CUSHIM_OPT_DOUBLE)
                FUZZ_CHECK(op_parse_double(v, &dv) == 0);
            else if (type == CUSHIM_OPT_BYTES)
                FUZZ_CHECK(op_parse_bytes(v, &uv) == 0);
        }
        op_free(&s);
    }
    free(text);
    return 0;
}
