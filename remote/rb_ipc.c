/*
 * rb_ipc.c - a back end's side of CUDA IPC handles (docs/remote.md, "IPC"). An IPC handle is 64 bytes of the
 * server's driver that any process on the server may open: a capability. Two clients of one cushim-serve share
 * a tensor this way (PyTorch's torch.multiprocessing does), their back ends being processes of the one host. So:
 *   - an export (cuIpcGetMemHandle, cuIpcGetEventHandle, and the runtime's cudaIpcGet*Handle) that succeeded is
 *     recorded in the server's table (rm_ipc.h) with this client's identity;
 *   - an open (cuIpcOpenMemHandle[_v2], cuIpcOpenEventHandle, cudaIpcOpen*Handle) runs only when a client of the
 *     same identity exported that handle through this server and its back end still lives; else it is answered
 *     CUDA_ERROR_INVALID_HANDLE (cudaErrorInvalidResourceHandle) without reaching the driver, and the reason is
 *     logged: a tenant cannot open another tenant's memory, nor a handle of a process of the server's own.
 * The identity is the token the client proved (several --token-file: several tenants), or without a token the
 * unix peer's uid (which the listener checked is the server's own). The handles a back end exported are
 * forgotten when it exits (and by the listener when it reaps one that died).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rb_state.h"
#include "rm_auth.h"
#include "rm_backend.h"
#include "rm_ipc.h"
#include "rm_names.h"

typedef struct rb_ipc_api {
    const char *name;
    uint32_t kind;      /* RM_IPC_MEM or RM_IPC_EVENT */
    int open;           /* 1: opens 'param' (by value); 0: exports into 'param' (a pointer) */
    const char *param;
} rb_ipc_api;

static const rb_ipc_api rb_ipc_apis[9] = {
    { "cuIpcGetMemHandle", RM_IPC_MEM, 0, "pHandle" },
    { "cuIpcOpenMemHandle_v2", RM_IPC_MEM, 1, "handle" },
    { "cuIpcOpenMemHandle", RM_IPC_MEM, 1, "handle" },
    { "cuIpcGetEventHandle", RM_IPC_EVENT, 0, "pHandle" },
    { "cuIpcOpenEventHandle", RM_IPC_EVENT, 1, "handle" },
    { "cudaIpcGetMemHandle", RM_IPC_MEM, 0, "handle" },
    { "cudaIpcOpenMemHandle", RM_IPC_MEM, 1, "handle" },
    { "cudaIpcGetEventHandle", RM_IPC_EVENT, 0, "handle" },
    { "cudaIpcOpenEventHandle", RM_IPC_EVENT, 1, "handle" },
};

void rb_ipc_identity(rb_state *b, const rm_backend_opts *o, int token)
{
    b->ipc = o->ipc;
    memset(b->identity, 0, sizeof b->identity);
    if (token >= 0)
        rm_auth_identity(&o->tokens[token], b->identity);
    else
        snprintf((char *)b->identity, sizeof b->identity, "unix-uid:%ld", o->peer_uid);
}

void rb_ipc_init(rb_state *b)
{
    for (int i = 0; i < 9; i++) {
        const cushim_api_info *a = b->host->api_by_name(rb_ipc_apis[i].name);
        b->ipc_ids[i] = a != NULL ? a->id : UINT32_MAX;
    }
    b->e_invalid_handle[0] = rm_result_code(b->host, "CUDA_ERROR_INVALID_HANDLE", 400);
    b->e_invalid_handle[1] = rm_result_code(b->host, "cudaErrorInvalidResourceHandle", 400);
}

/* The API's row, and where its handle's 64 bytes are in the decoded call; NULL when it is no IPC API. */
static const rb_ipc_api *rb_ipc_of(const rb_state *b, const rm_call *c, const uint8_t **handle)
{
    for (int i = 0; i < 9; i++) {
        if (b->ipc_ids[i] != c->plan->id)
            continue;
        const rb_ipc_api *api = &rb_ipc_apis[i];
        for (uint32_t k = 0; k < c->plan->nparams; k++) {
            const cushim_param_info *p = b->host->api_param(c->plan->info, k);
            if (strcmp(p->name, api->param) != 0)
                continue;
            const uint8_t *at = (const uint8_t *)c->params + p->offset;
            if (!api->open) {
                const uint8_t *out = NULL;
                memcpy(&out, at, sizeof out);   /* the arena's buffer the call writes the handle into */
                at = out;
            } else if (p->size != RM_IPC_HANDLE) {
                at = NULL;
            }
            *handle = at;
            return at != NULL ? api : NULL;
        }
        return NULL;
    }
    return NULL;
}

int rb_ipc_pre(rb_state *b, const rm_call *c, int32_t *result)
{
    const uint8_t *handle = NULL;
    const rb_ipc_api *api = rb_ipc_of(b, c, &handle);
    if (api == NULL || !api->open)
        return 0;
    int who = b->ipc != NULL ? rm_ipc_check(b->ipc, api->kind, handle, b->identity) : RM_IPC_UNKNOWN;
    if (who == RM_IPC_SAME)
        return 0;
    *result = b->e_invalid_handle[c->plan->info->library == CUSHIM_LIB_RUNTIME];
    rb_log("%s refused: the %s handle %s", api->name, api->kind == RM_IPC_MEM ? "memory" : "event",
           who == RM_IPC_OTHER ? "was exported by a client of another identity (another token)" :
           b->ipc == NULL ? "cannot be checked (no IPC table)" :
           "was not exported through this server, or its exporter has ended");
    return 1;
}

void rb_ipc_post(rb_state *b, const rm_call *c, int32_t result)
{
    const uint8_t *handle = NULL;
    const rb_ipc_api *api = rb_ipc_of(b, c, &handle);
    if (api == NULL || api->open || result != 0 || b->ipc == NULL)
        return;
    if (rm_ipc_export(b->ipc, api->kind, handle, b->identity, getpid()) != 0)
        rb_log("%s: the server's IPC table is full (%u handles): this handle cannot be opened by another client",
               api->name, RM_IPC_SLOTS);
}

void rb_ipc_exit(rb_state *b)
{
    if (b->ipc != NULL)
        rm_ipc_forget(b->ipc, getpid());
}
