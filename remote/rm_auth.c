/*
 * rm_auth.c - the hello and the token check (rm_auth.h). HMAC-SHA256 and the constant-time comparison are
 * OpenSSL's libcrypto (Debian's libssl-dev); the nonce is getrandom's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "rm_auth.h"
#include "rm_sock.h"

static const char rm_auth_label[] = "cushim-remote-auth-v2";

int rm_token_load(const char *path, rm_token *t, char *err, size_t errlen)
{
    struct stat st;
    memset(t, 0, sizeof *t);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        snprintf(err, errlen, "cannot read the token file %s: %s", path, strerror(errno));
        return -1;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "the token file %s is not a regular file", path);
        close(fd);
        return -1;
    }
    if (st.st_mode & 077) {
        snprintf(err, errlen, "the token file %s can be read or written by others (mode %04o): refused; "
                 "chmod 600 %s", path, (unsigned)(st.st_mode & 07777), path);
        close(fd);
        return -1;
    }
    uint8_t buf[RM_TOKEN_MAX + 2];
    size_t n = 0;
    ssize_t r;
    while (n < sizeof buf && ((r = read(fd, buf + n, sizeof buf - n)) > 0 || (r < 0 && errno == EINTR)))
        if (r > 0)
            n += (size_t)r;
    close(fd);
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' ' || buf[n - 1] == '\t'))
        n--;
    if (n < RM_TOKEN_MIN || n > RM_TOKEN_MAX) {
        snprintf(err, errlen, "the token in %s has %zu bytes%s, not %u to %u (make one with: head -c 32 "
                 "/dev/urandom | base64 > FILE)", path, n, n > RM_TOKEN_MAX ? " or more" : "", RM_TOKEN_MIN,
                 RM_TOKEN_MAX);
        OPENSSL_cleanse(buf, sizeof buf);
        return -1;
    }
    memcpy(t->key, buf, n);
    t->len = n;
    OPENSSL_cleanse(buf, sizeof buf);
    return 0;
}

void rm_token_clear(rm_token *t)
{
    OPENSSL_cleanse(t, sizeof *t);
}

int rm_nonce(uint8_t nonce[RM_NONCE_BYTES])
{
    size_t n = 0;
    while (n < RM_NONCE_BYTES) {
        ssize_t r = getrandom(nonce + n, RM_NONCE_BYTES - n, 0);
        if (r < 0 && errno != EINTR)
            return -1;
        if (r > 0)
            n += (size_t)r;
    }
    return 0;
}

void rm_auth_mac(const rm_token *t, const uint8_t nonce[RM_NONCE_BYTES], uint8_t mac[RM_MAC_BYTES])
{
    uint8_t msg[sizeof rm_auth_label + RM_NONCE_BYTES];
    unsigned int n = RM_MAC_BYTES;
    memcpy(msg, rm_auth_label, sizeof rm_auth_label);   /* its NUL included */
    memcpy(msg + sizeof rm_auth_label, nonce, RM_NONCE_BYTES);
    if (HMAC(EVP_sha256(), t->key, (int)t->len, msg, sizeof msg, mac, &n) == NULL || n != RM_MAC_BYTES)
        memset(mac, 0, RM_MAC_BYTES);   /* never equal to a real proof: verify also refuses a failed HMAC */
}

void rm_auth_identity(const rm_token *t, uint8_t id[RM_MAC_BYTES])
{
    static const char label[] = "cushim-ipc-identity-v1";
    unsigned int n = RM_MAC_BYTES;
    if (HMAC(EVP_sha256(), t->key, (int)t->len, (const uint8_t *)label, sizeof label, id, &n) == NULL ||
        n != RM_MAC_BYTES)
        memset(id, 0xff, RM_MAC_BYTES);   /* no identity a unix client's (rb_ipc.c) could have */
}

int rm_auth_verify(const rm_token *t, const uint8_t nonce[RM_NONCE_BYTES], const uint8_t *payload, size_t len)
{
    uint8_t want[RM_MAC_BYTES], zero[RM_MAC_BYTES] = {0};
    if (len != RM_MAC_BYTES || t->len == 0)
        return 0;
    rm_auth_mac(t, nonce, want);
    int ok = CRYPTO_memcmp(want, payload, RM_MAC_BYTES) == 0 && CRYPTO_memcmp(want, zero, RM_MAC_BYTES) != 0;
    OPENSSL_cleanse(want, sizeof want);
    return ok;
}

uint16_t rm_hello_check(const rm_hdr *h, const uint8_t *payload, rm_hello *in)
{
    memset(in, 0, sizeof *in);
    memcpy(in, payload, h->length < sizeof *in ? h->length : sizeof *in);
    in->tree[RM_TREE_NAME_LEN - 1] = '\0';
    if (h->kind != RM_MSG_HELLO || h->version != RM_WIRE_VERSION || h->length != sizeof *in)
        return RM_HELLO_REFUSED_VERSION;
    if (in->ptr_bytes != sizeof(void *))
        return RM_HELLO_REFUSED_ABI;
    return RM_HELLO_OK;
}

int rm_client_hello(int fd, const rm_hello *mine, const rm_token *token, const char *server, const char *token_path,
                    rm_hello *theirs, uint8_t **buf, size_t *cap, char *err, size_t errlen)
{
    rm_hdr h;
    int rc = rm_send(fd, RM_MSG_HELLO, 0, mine, sizeof *mine);
    /* A server that refuses before reading (busy: --max-clients) may have answered and closed already: its
       hello is still there to read when ours could not be sent. */
    if (rc == RM_OK || rc == RM_ECLOSED)
        rc = rm_recv(fd, &h, buf, cap);
    if (rc == RM_OK && h.kind == RM_MSG_CHALLENGE) {
        if (h.length != RM_NONCE_BYTES) {
            snprintf(err, errlen, "%s sent a malformed challenge", server);
            return -1;
        }
        if (token == NULL) {
            snprintf(err, errlen, "%s needs a token, and this client has none: give the server's token file "
                     "(remote:token_file=FILE, cushim run --remote-token-file=FILE)", server);
            return -1;
        }
        uint8_t mac[RM_MAC_BYTES];
        rm_auth_mac(token, *buf, mac);
        rc = rm_send(fd, RM_MSG_AUTH, 0, mac, sizeof mac);
        if (rc == RM_OK)
            rc = rm_recv(fd, &h, buf, cap);
    }
    if (rc != RM_OK || h.kind != RM_MSG_HELLO || h.length != sizeof *theirs) {
        snprintf(err, errlen, "%s: no hello from the server (not cushim-serve, or another wire version than %u?)",
                 server, RM_WIRE_VERSION);
        return -1;
    }
    memcpy(theirs, *buf, sizeof *theirs);
    theirs->tree[RM_TREE_NAME_LEN - 1] = '\0';
    if (theirs->status == RM_HELLO_REFUSED_AUTH) {
        snprintf(err, errlen, "%s refused this client's token (%s): it is not the server's token", server,
                 token_path != NULL ? token_path : "none given");
        return -1;
    }
    if (theirs->status == RM_HELLO_REFUSED_BUSY) {
        snprintf(err, errlen, "%s is serving as many clients as it may (cushim serve --max-clients): try again later",
                 server);
        return -1;
    }
    if (theirs->status != RM_HELLO_OK) {
        snprintf(err, errlen, "%s refused this client (%s)", server,
                 theirs->status == RM_HELLO_REFUSED_VERSION ? "another wire version" : "another ABI");
        return -1;
    }
    return 0;
}
