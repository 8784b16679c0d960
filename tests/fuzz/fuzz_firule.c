/*
 * fuzz_firule.c - libFuzzer harness for faultinject's rule parser (plugins/faultinject/rules.c):
 * 'SELECTOR:ERROR[:WHEN]' with WHEN conditions joined by '+'. Checked for every input: the
 * result is 0 or -1 and a failure leaves a one-line reason; a parsed rule has a selector and an
 * error, and a numeric error is never 0 (success cannot be injected).
 */
#include "fuzz_common.h"
#include "rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* exact-size copy without a terminator: the parser takes a length */
    char *text = malloc(size ? size : 1);
    FUZZ_CHECK(text != NULL);
    memcpy(text, data, size);
    fi_rule_syntax r;
    char err[256];
    err[0] = '\0';
    int rc = fi_rule_parse(text, size, &r, err, sizeof err);
    FUZZ_CHECK(rc == 0 || rc == -1);
    if (rc == 0) {
        FUZZ_CHECK(r.selector != NULL && r.error != NULL);
        FUZZ_CHECK(!r.error_is_number || r.error_number != 0);
        fi_rule_syntax_free(&r);
    } else {
        FUZZ_CHECK(err[0] != '\0' && memchr(err, '\0', sizeof err) != NULL && strchr(err, '\n') == NULL);
    }
    FUZZ_CHECK(fi_rule_parse_fuzz(text, size) == rc);
    free(text);
    return 0;
}
