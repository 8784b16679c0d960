/*
 * fuzz_tls.c - the one piece of runtime/thread.c that config.c's initialisation (once.c) needs:
 * the thread-local record, where once.c caches the thread id. The harnesses that link config.c
 * link this instead of thread.c, which would bring in the whole dispatch core.
 */
#include "rt_internal.h"

__thread rt_tls_t rt_tls __attribute__((tls_model("initial-exec")));
