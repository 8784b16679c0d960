/*
 * rm_auth.h - the hello and the token check of a connection (docs/remote.md, "Wire format"; docs/remote-deploy.md,
 * "Trust model"): what the server decodes before a client is authenticated, and the client's side of it.
 *
 * A server with a token answers a client's hello with RM_MSG_CHALLENGE (RM_NONCE_BYTES random bytes); the client
 * sends RM_MSG_AUTH, the HMAC-SHA256 of "cushim-remote-auth-v2" and the nonce keyed with the token; the server
 * compares it in constant time and answers the hello (RM_HELLO_REFUSED_AUTH, and closes, when it differs). The
 * server loads no shim and no driver before that. The token is never sent; a nonce is never reused.
 */
#ifndef RM_AUTH_H
#define RM_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include "rm_wire.h"

#define RM_NONCE_BYTES 32u
#define RM_MAC_BYTES 32u
#define RM_TOKEN_MIN 16u           /* bytes: a shorter token is refused (guessable)  */
#define RM_TOKEN_MAX 1024u

typedef struct rm_token {
    uint8_t key[RM_TOKEN_MAX];
    size_t len;
} rm_token;

/* The token in file 'path': its bytes with trailing white space removed. Refused (-1 and a reason in 'err')
   when the file cannot be read, is not a regular file, can be read or written by its group or others, or holds
   fewer than RM_TOKEN_MIN or more than RM_TOKEN_MAX bytes. */
int rm_token_load(const char *path, rm_token *t, char *err, size_t errlen);
/* Wipes the token's bytes. */
void rm_token_clear(rm_token *t);

/* RM_NONCE_BYTES random bytes (getrandom). 0, or -1. */
int rm_nonce(uint8_t nonce[RM_NONCE_BYTES]);
/* The client's proof: HMAC-SHA256(token, "cushim-remote-auth-v2" || nonce). */
void rm_auth_mac(const rm_token *t, const uint8_t nonce[RM_NONCE_BYTES], uint8_t mac[RM_MAC_BYTES]);
/* Whether an RM_MSG_AUTH payload proves the token for 'nonce' (compared in constant time): 1 or 0. */
int rm_auth_verify(const rm_token *t, const uint8_t nonce[RM_NONCE_BYTES], const uint8_t *payload, size_t len);

/* A client's identity for the IPC handles it exports (rm_ipc.h): HMAC-SHA256(token, "cushim-ipc-identity-v1"), the
   same for every client of that token and never the proof of any challenge. */
void rm_auth_identity(const rm_token *t, uint8_t id[RM_MAC_BYTES]);

/* The server's reading of a client's hello (header and payload, any bytes): *in filled (zeros past what came),
   and the hello status to answer: RM_HELLO_OK, RM_HELLO_REFUSED_VERSION, RM_HELLO_REFUSED_ABI. */
uint16_t rm_hello_check(const rm_hdr *h, const uint8_t *payload, rm_hello *in);

/* The client's side on a connected socket: sends 'mine', answers a challenge with 'token' (NULL: none), and
   receives the server's hello into *theirs. 0 when the server accepted; -1 and a reason in 'err' ('server'
   names it there, 'token_path' the token's file). Messages are read into *buf (grown as needed). */
int rm_client_hello(int fd, const rm_hello *mine, const rm_token *token, const char *server, const char *token_path,
                    rm_hello *theirs, uint8_t **buf, size_t *cap, char *err, size_t errlen);

#endif /* RM_AUTH_H */
