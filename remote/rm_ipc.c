/*
 * rm_ipc.c - the table of CUDA IPC handles exported through one cushim-serve (rm_ipc.h). One mapping, made
 * MAP_SHARED | MAP_ANONYMOUS by the serving parent before any fork: every back end inherits it and nothing else
 * can reach it. A robust process-shared mutex guards it, so a back end that dies holding it does not stop the
 * others (the next locker makes it consistent: every update is one entry's fields, the 'used' flag written last).
 * Entries are found by a linear scan of the used ones: handles are exported and opened a few times per tensor
 * shared, never on a hot path.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>

#include "rm_ipc.h"

typedef struct rm_ipc_entry {
    uint8_t handle[RM_IPC_HANDLE];
    uint8_t id[RM_IPC_ID];
    pid_t pid;                 /* the exporting back end */
    uint32_t kind;             /* RM_IPC_MEM or RM_IPC_EVENT; 0: free */
} rm_ipc_entry;

struct rm_ipc {
    pthread_mutex_t lock;
    uint32_t high;             /* entries [0, high) may be used */
    rm_ipc_entry e[RM_IPC_SLOTS];
};

rm_ipc *rm_ipc_create(void)
{
    pthread_mutexattr_t a;
    rm_ipc *t = mmap(NULL, sizeof *t, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (t == MAP_FAILED)
        return NULL;
    if (pthread_mutexattr_init(&a) != 0 || pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED) != 0 ||
        pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST) != 0 || pthread_mutex_init(&t->lock, &a) != 0) {
        munmap(t, sizeof *t);
        return NULL;
    }
    pthread_mutexattr_destroy(&a);
    return t;
}

static void rm_ipc_lock(rm_ipc *t)
{
    if (pthread_mutex_lock(&t->lock) == EOWNERDEAD)
        pthread_mutex_consistent(&t->lock);   /* its holder died between whole-entry updates */
}

static rm_ipc_entry *rm_ipc_find(rm_ipc *t, uint32_t kind, const uint8_t handle[RM_IPC_HANDLE])
{
    for (uint32_t i = 0; i < t->high && i < RM_IPC_SLOTS; i++)
        if (t->e[i].kind == kind && memcmp(t->e[i].handle, handle, RM_IPC_HANDLE) == 0)
            return &t->e[i];
    return NULL;
}

static int rm_ipc_gone(pid_t pid)
{
    return kill(pid, 0) != 0 && errno == ESRCH;
}

int rm_ipc_export(rm_ipc *t, uint32_t kind, const uint8_t handle[RM_IPC_HANDLE], const uint8_t id[RM_IPC_ID],
                  pid_t pid)
{
    int rc = -1;
    rm_ipc_lock(t);
    rm_ipc_entry *e = rm_ipc_find(t, kind, handle);
    if (e != NULL && e->pid != pid && rm_ipc_gone(e->pid))
        e->kind = 0;   /* the same bytes from a back end that is gone: a new export */
    else if (e != NULL) {
        rc = 0;        /* exported again (the driver gives one handle per allocation): its first exporter stays */
        goto out;
    }
    for (int pass = 0; pass < 2 && rc != 0; pass++) {
        for (uint32_t i = 0; i < RM_IPC_SLOTS && rc != 0; i++) {
            if (t->e[i].kind != 0 && (pass == 0 || !rm_ipc_gone(t->e[i].pid)))
                continue;   /* the second pass takes the entries of back ends that died without forgetting */
            memcpy(t->e[i].handle, handle, RM_IPC_HANDLE);
            memcpy(t->e[i].id, id, RM_IPC_ID);
            t->e[i].pid = pid;
            t->e[i].kind = kind;
            if (i >= t->high)
                t->high = i + 1;
            rc = 0;
        }
    }
out:
    pthread_mutex_unlock(&t->lock);
    return rc;
}

int rm_ipc_check(rm_ipc *t, uint32_t kind, const uint8_t handle[RM_IPC_HANDLE], const uint8_t id[RM_IPC_ID])
{
    int r = RM_IPC_UNKNOWN;
    rm_ipc_lock(t);
    const rm_ipc_entry *e = rm_ipc_find(t, kind, handle);
    if (e != NULL && !rm_ipc_gone(e->pid))
        r = memcmp(e->id, id, RM_IPC_ID) == 0 ? RM_IPC_SAME : RM_IPC_OTHER;
    pthread_mutex_unlock(&t->lock);
    return r;
}

void rm_ipc_forget(rm_ipc *t, pid_t pid)
{
    rm_ipc_lock(t);
    for (uint32_t i = 0; i < t->high && i < RM_IPC_SLOTS; i++)
        if (t->e[i].kind != 0 && t->e[i].pid == pid)
            t->e[i].kind = 0;
    pthread_mutex_unlock(&t->lock);
}
