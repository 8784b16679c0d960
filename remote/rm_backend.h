/*
 * rm_backend.h - one client's back end (rm_backend.c): serves the calls arriving on 'fd' through the shim at
 * 'shim' (loaded there, after the fork and the handshake) until the client closes the connection. Returns the
 * process's exit status.
 */
#ifndef RM_BACKEND_H
#define RM_BACKEND_H

#include "rm_auth.h"

#define RM_HANDSHAKE_SECONDS 10   /* a peer that has not finished the hello by then is dropped */
#define RM_HELLO_MAX 4096u        /* bytes of a hello read before authentication (ours is 72: room for another
                                     version's, which is answered with RM_HELLO_REFUSED_VERSION) */

#define RM_MAX_TOKENS 16           /* --token-file given this many times at most: one per tenant */

typedef struct rm_backend_opts {
    const char *shim;          /* libcushim.so */
    const rm_token *tokens;    /* the tokens a client may prove (one per tenant); none: no challenge (a unix
                                  socket: its mode and the peer's uid decide) */
    unsigned ntokens;
    long peer_uid;             /* a unix socket's peer (SO_PEERCRED), -1 over TCP */
    struct rm_ipc *ipc;        /* the IPC handles exported through this server (rm_ipc.h); NULL: IPC refused */
    const char *peer;          /* the client in logs: "a local client", "127.0.0.1:51234" */
    int verbose;
} rm_backend_opts;

int rm_backend_run(int fd, const rm_backend_opts *o);

#endif /* RM_BACKEND_H */
