/*
 * rm_ipc.h - the CUDA IPC handles exported through one cushim-serve (docs/remote.md, "IPC"), with the identity of
 * the client that exported each: a table the serving parent maps shared before it forks any back end, so that
 * every back end reads and writes the same one. A handle is a capability (the server's driver opens it for any
 * process of the host), so a back end opens only a handle a client of its own identity exported through this
 * server (rb_ipc.c decides; this module keeps the table). Private to cushim-serve.
 */
#ifndef RM_IPC_H
#define RM_IPC_H

#include <stdint.h>
#include <sys/types.h>

#define RM_IPC_HANDLE 64u   /* CU_IPC_HANDLE_SIZE: CUipcMemHandle, CUipcEventHandle and the runtime's */
#define RM_IPC_ID 32u       /* an identity's bytes (rm_auth.h: rm_auth_identity) */
#define RM_IPC_SLOTS 4096u  /* handles exported at once by live back ends */

enum { RM_IPC_MEM = 1, RM_IPC_EVENT = 2 };
enum { RM_IPC_SAME = 0, RM_IPC_UNKNOWN = 1, RM_IPC_OTHER = 2 };

typedef struct rm_ipc rm_ipc;

/* The table, in anonymous shared memory (inherited by children forked after this), or NULL. */
rm_ipc *rm_ipc_create(void);
/* Records that a back end (pid) of identity 'id' exported 'handle' of 'kind'. A handle already recorded keeps its
   first exporter. 0, or -1 when the table is full even after forgetting the handles of back ends that are gone. */
int rm_ipc_export(rm_ipc *t, uint32_t kind, const uint8_t handle[RM_IPC_HANDLE], const uint8_t id[RM_IPC_ID],
                  pid_t pid);
/* Who exported 'handle': RM_IPC_SAME (identity 'id'), RM_IPC_OTHER (another), RM_IPC_UNKNOWN (not through this
   server, or its exporter is gone). */
int rm_ipc_check(rm_ipc *t, uint32_t kind, const uint8_t handle[RM_IPC_HANDLE], const uint8_t id[RM_IPC_ID]);
/* Forgets the handles back end 'pid' exported (it ended: its memory and events are gone). */
void rm_ipc_forget(rm_ipc *t, pid_t pid);

#endif /* RM_IPC_H */
