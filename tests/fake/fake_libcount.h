/*
 * fake_libcount.h - call counting shared by the small fakes of NCCL and
 * cuBLAS (one per library object): FK_COUNT(i) counts a call of fl_names[i];
 * at exit the counts go to the file named by the fake's environment variable
 * in the format of CUSHIM_COUNTS ("name<TAB>count"; "%p" in the name stands for
 * the pid, for tests of several processes); fake_<lib>_count(name)
 * answers tests in-process.
 */
#ifndef FAKE_LIBCOUNT_H
#define FAKE_LIBCOUNT_H

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FL_EXPORT __attribute__((visibility("default")))
#define FL_N (sizeof fl_names / sizeof fl_names[0])
#define FK_COUNT(i) atomic_fetch_add(&fl_calls[i], 1)

#define FL_COUNTING(ENVVAR, COUNT_FN)                                                 \
    static atomic_ullong fl_calls[FL_N];                                              \
    FL_EXPORT unsigned long long COUNT_FN(const char *name)                           \
    {                                                                                 \
        for (size_t i = 0; i < FL_N; i++)                                             \
            if (strcmp(fl_names[i], name) == 0)                                       \
                return atomic_load(&fl_calls[i]);                                     \
        return 0;                                                                     \
    }                                                                                 \
    __attribute__((destructor)) static void fl_write_counts(void)                     \
    {                                                                                 \
        const char *path = getenv(ENVVAR), *pid_at;                                   \
        char with_pid[4096];                                                          \
        if (path != NULL && (pid_at = strstr(path, "%p")) != NULL) {                  \
            snprintf(with_pid, sizeof with_pid, "%.*s%d%s", (int)(pid_at - path),     \
                     path, (int)getpid(), pid_at + 2);                                \
            path = with_pid;                                                          \
        }                                                                             \
        FILE *f = path != NULL && *path != '\0' ? fopen(path, "w") : NULL;            \
        if (f == NULL)                                                                \
            return;                                                                   \
        for (size_t i = 0; i < FL_N; i++)                                             \
            if (atomic_load(&fl_calls[i]))                                            \
                fprintf(f, "%s\t%llu\n", fl_names[i], atomic_load(&fl_calls[i]));     \
        fclose(f);                                                                    \
    }

#endif
