/*
 * fuzz_common.h - helpers shared by the libFuzzer harnesses in tests/fuzz/
 * (built and run by tools/fuzz.sh). A harness turns the fuzzer's bytes into the
 * parser's input with these, calls the parser, and checks what must hold for
 * every input with FUZZ_CHECK (a failed check aborts: libFuzzer saves the
 * input as a crash, and tools/fuzz.sh fails).
 */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_CHECK(cond)                                                              \
    do {                                                                              \
        if (!(cond)) {                                                                \
            fprintf(stderr, "%s:%d: check '%s' failed\n", __FILE__, __LINE__, #cond); \
            abort();                                                                  \
        }                                                                             \
    } while (0)

/* The bytes as a C string (up to the first NUL), in a heap buffer of exactly the
   string's size, so that ASan catches a read one past its end. Free it. */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
    size_t n = strnlen((const char *)data, size);
    char *s = malloc(n + 1);
    FUZZ_CHECK(s != NULL);
    memcpy(s, data, n);
    s[n] = '\0';
    return s;
}

/* A log line the shim would write: NUL-terminated within cap, one line, and every
   byte printable (values from the environment must come out escaped). */
static inline void fuzz_check_line(const char *msg, size_t cap)
{
    size_t n = strnlen(msg, cap);
    FUZZ_CHECK(n < cap);
    for (size_t i = 0; i < n; i++)
        FUZZ_CHECK((unsigned char)msg[i] >= 0x20 && (unsigned char)msg[i] < 0x7f);
}

#endif /* FUZZ_COMMON_H */
