/*
 * rm_auth_test.c - the remoting's addresses and token check (remote/rm_sock.c, remote/rm_auth.c;
 * docs/remote-deploy.md): addresses taken apart and refused with a reason; token files refused by mode, size and
 * kind; the HMAC-SHA256 proof against RFC 4231's test vector, accepted for its nonce only, refused when a byte
 * differs or its length is another; a client's hello checked before anything else; the challenge over a
 * socketpair with a right, a wrong and no token.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "rm_auth.h"
#include "rm_sock.h"

static void test_addresses(void **state)
{
    (void)state;
    rm_addr a;
    char err[256];
    assert_int_equal(rm_addr_parse("unix:/run/cushim.sock", &a, err, sizeof err), 0);
    assert_int_equal(a.tcp, 0);
    assert_string_equal(a.host, "/run/cushim.sock");
    assert_int_equal(rm_addr_parse("tcp://10.0.0.2:9000", &a, err, sizeof err), 0);
    assert_int_equal(a.tcp, 1);
    assert_string_equal(a.host, "10.0.0.2");
    assert_int_equal(a.port, 9000);
    assert_int_equal(rm_addr_parse("tcp://", &a, err, sizeof err), 0);   /* loopback, the default port */
    assert_string_equal(a.host, "127.0.0.1");
    assert_int_equal(a.port, RM_TCP_PORT);
    assert_int_equal(rm_addr_parse("tcp://:7000", &a, err, sizeof err), 0);
    assert_string_equal(a.host, "127.0.0.1");
    assert_int_equal(a.port, 7000);
    assert_int_equal(rm_addr_parse("tcp://[::1]:7001", &a, err, sizeof err), 0);
    assert_string_equal(a.host, "::1");
    assert_int_equal(a.port, 7001);
    assert_int_equal(rm_addr_parse("tcp://[fe80::1]", &a, err, sizeof err), 0);
    assert_int_equal(a.port, RM_TCP_PORT);
    assert_int_equal(rm_addr_parse("tcp://gpu-0.cushim.svc:7480", &a, err, sizeof err), 0);
    assert_string_equal(a.host, "gpu-0.cushim.svc");
    static const char *const bad[] = {"unix:", "udp://x:1", "/run/x.sock", "tcp://::1:7480", "tcp://[::1",
                                      "tcp://[::1]x", "tcp://h:0", "tcp://h:65536", "tcp://h:12ab", "tcp://h:-1",
                                      "tcp://h:", "tcp://a/b:1", NULL};
    for (int i = 0; bad[i] != NULL; i++) {
        err[0] = '\0';
        assert_int_equal(rm_addr_parse(bad[i], &a, err, sizeof err), -1);
        assert_true(strlen(err) > 10);
    }
    assert_non_null(strstr((rm_addr_parse("tcp://::1:7480", &a, err, sizeof err), err), "brackets"));
    assert_non_null(strstr((rm_addr_parse("tcp://h:99999", &a, err, sizeof err), err), "1 to 65535"));
    assert_int_equal(rm_connect("tcp://127.0.0.1:1", err, sizeof err), -1);   /* nobody listens on port 1 */
    assert_non_null(strstr(err, "cannot connect to tcp://127.0.0.1:1"));
}

static char dir[64];

static const char *token_file(const char *name, const char *text, size_t n, mode_t mode)
{
    static char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, n, f), n);
    fclose(f);
    assert_int_equal(chmod(path, mode), 0);
    return path;
}

static void test_token_files(void **state)
{
    (void)state;
    rm_token t;
    char err[512];
    assert_int_equal(rm_token_load(token_file("good", "0123456789abcdef\n", 17, 0600), &t, err, sizeof err), 0);
    assert_int_equal(t.len, 16);   /* the newline is not part of it */
    assert_memory_equal(t.key, "0123456789abcdef", 16);
    assert_int_equal(rm_token_load(token_file("ro", "0123456789abcdefX", 17, 0400), &t, err, sizeof err), 0);
    assert_int_equal(t.len, 17);
    static const mode_t open_modes[] = {0640, 0604, 0620, 0602, 0644, 0666};
    for (size_t i = 0; i < sizeof open_modes / sizeof open_modes[0]; i++) {
        assert_int_equal(rm_token_load(token_file("open", "0123456789abcdef", 16, open_modes[i]), &t, err, sizeof err),
                         -1);
        assert_non_null(strstr(err, "can be read or written by others"));
        assert_int_equal(t.len, 0);
    }
    assert_int_equal(rm_token_load(token_file("short", "0123456789abcde\n", 16, 0600), &t, err, sizeof err), -1);
    assert_non_null(strstr(err, "has 15 bytes"));
    static char big[RM_TOKEN_MAX + 10];
    memset(big, 'x', sizeof big);
    assert_int_equal(rm_token_load(token_file("big", big, sizeof big, 0600), &t, err, sizeof err), -1);
    assert_non_null(strstr(err, "or more"));
    assert_int_equal(rm_token_load(token_file("max", big, RM_TOKEN_MAX, 0600), &t, err, sizeof err), 0);
    assert_int_equal(rm_token_load("/nonexistent/token", &t, err, sizeof err), -1);
    assert_non_null(strstr(err, "cannot read the token file /nonexistent/token"));
    assert_int_equal(rm_token_load(dir, &t, err, sizeof err), -1);   /* a directory */
    rm_token_clear(&t);
    assert_int_equal(t.len, 0);
}

static void test_mac(void **state)
{
    (void)state;
    rm_token t = {.len = 20};
    uint8_t nonce[RM_NONCE_BYTES], other[RM_NONCE_BYTES], mac[RM_MAC_BYTES], want[RM_MAC_BYTES];
    memset(t.key, 0x0b, 20);
    /* RFC 4231 test case 1 pins the HMAC itself */
    static const uint8_t rfc[32] = {0xb0, 0x34, 0x4c, 0x61, 0xd8, 0xdb, 0x38, 0x53, 0x5c, 0xa8, 0xaf,
                                    0xce, 0xaf, 0x0b, 0xf1, 0x2b, 0x88, 0x1d, 0xc2, 0x00, 0xc9, 0x83,
                                    0x3d, 0xa7, 0x26, 0xe9, 0x37, 0x6c, 0x2e, 0x32, 0xcf, 0xf7};
    unsigned n = 32;
    HMAC(EVP_sha256(), t.key, 20, (const uint8_t *)"Hi There", 8, want, &n);
    assert_memory_equal(want, rfc, 32);
    /* the proof is that HMAC over the label (its NUL included) and the nonce */
    assert_int_equal(rm_nonce(nonce), 0);
    assert_int_equal(rm_nonce(other), 0);
    assert_memory_not_equal(nonce, other, RM_NONCE_BYTES);
    uint8_t msg[22 + RM_NONCE_BYTES];
    memcpy(msg, "cushim-remote-auth-v2", 22);
    memcpy(msg + 22, nonce, RM_NONCE_BYTES);
    HMAC(EVP_sha256(), t.key, 20, msg, sizeof msg, want, &n);
    rm_auth_mac(&t, nonce, mac);
    assert_memory_equal(mac, want, RM_MAC_BYTES);
    assert_int_equal(rm_auth_verify(&t, nonce, mac, RM_MAC_BYTES), 1);
    assert_int_equal(rm_auth_verify(&t, other, mac, RM_MAC_BYTES), 0);   /* another connection's nonce */
    assert_int_equal(rm_auth_verify(&t, nonce, mac, RM_MAC_BYTES - 1), 0);
    for (unsigned i = 0; i < RM_MAC_BYTES; i++) {
        mac[i] ^= 1;
        assert_int_equal(rm_auth_verify(&t, nonce, mac, RM_MAC_BYTES), 0);
        mac[i] ^= 1;
    }
    rm_token u = t;
    u.key[19] ^= 1;   /* another token */
    assert_int_equal(rm_auth_verify(&u, nonce, mac, RM_MAC_BYTES), 0);
    rm_token none = {.len = 0};
    assert_int_equal(rm_auth_verify(&none, nonce, mac, RM_MAC_BYTES), 0);
}

static void test_hello_check(void **state)
{
    (void)state;
    rm_hello h = {.ptr_bytes = 8, .pid = 42}, in;
    rm_hdr hd = {.magic = RM_MAGIC, .version = RM_WIRE_VERSION, .kind = RM_MSG_HELLO, .length = sizeof h};
    memset(h.tree, 'x', sizeof h.tree);   /* no NUL: kept inside */
    assert_int_equal(rm_hello_check(&hd, (const uint8_t *)&h, &in), RM_HELLO_OK);
    assert_int_equal(in.pid, 42);
    assert_int_equal(strlen(in.tree), RM_TREE_NAME_LEN - 1);
    hd.version = 1;
    assert_int_equal(rm_hello_check(&hd, (const uint8_t *)&h, &in), RM_HELLO_REFUSED_VERSION);
    hd.version = RM_WIRE_VERSION;
    hd.length = sizeof h - 1;
    assert_int_equal(rm_hello_check(&hd, (const uint8_t *)&h, &in), RM_HELLO_REFUSED_VERSION);
    hd.length = sizeof h;
    hd.kind = RM_MSG_AUTH;
    assert_int_equal(rm_hello_check(&hd, (const uint8_t *)&h, &in), RM_HELLO_REFUSED_VERSION);
    hd.kind = RM_MSG_HELLO;
    h.ptr_bytes = 4;
    assert_int_equal(rm_hello_check(&hd, (const uint8_t *)&h, &in), RM_HELLO_REFUSED_ABI);
}

/* A server's side of the challenge in a child, the client's in this process. */
static int handshake(const rm_token *server, const rm_token *client, char *err, size_t errlen)
{
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    pid_t pid = fork();
    if (pid == 0) {
        close(sv[0]);
        uint8_t *buf = NULL, nonce[RM_NONCE_BYTES];
        size_t cap = 0;
        rm_hdr h;
        rm_hello in, out = {.ptr_bytes = 8};
        if (rm_recv(sv[1], &h, &buf, &cap) != RM_OK || rm_hello_check(&h, buf, &in) != RM_HELLO_OK)
            _exit(3);
        rm_nonce(nonce);
        rm_send(sv[1], RM_MSG_CHALLENGE, 0, nonce, sizeof nonce);
        if (rm_recv(sv[1], &h, &buf, &cap) != RM_OK)
            _exit(4);
        int ok = h.kind == RM_MSG_AUTH && rm_auth_verify(server, nonce, buf, h.length);
        out.status = ok ? RM_HELLO_OK : RM_HELLO_REFUSED_AUTH;
        rm_send(sv[1], RM_MSG_HELLO, 0, &out, sizeof out);
        _exit(ok ? 0 : 1);
    }
    close(sv[1]);
    rm_hello mine = {.ptr_bytes = 8}, theirs;
    uint8_t *buf = NULL;
    size_t cap = 0;
    int rc = rm_client_hello(sv[0], &mine, client, "test-server", "tokfile", &theirs, &buf, &cap, err, errlen);
    close(sv[0]);
    free(buf);
    int st;
    waitpid(pid, &st, 0);
    return rc;
}

static void test_challenge(void **state)
{
    (void)state;
    rm_token good = {.len = 16}, bad = {.len = 16};
    memcpy(good.key, "0123456789abcdef", 16);
    memcpy(bad.key, "0123456789abcdeF", 16);
    char err[512] = "";
    assert_int_equal(handshake(&good, &good, err, sizeof err), 0);
    assert_int_equal(handshake(&good, &bad, err, sizeof err), -1);
    assert_non_null(strstr(err, "test-server refused this client's token (tokfile)"));
    assert_int_equal(handshake(&good, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "test-server needs a token, and this client has none"));
}

/* A payload over the bound is refused from its header, before it is read or anything is allocated. */
static void test_recv_bound(void **state)
{
    (void)state;
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    uint8_t raw[16], *buf = NULL;
    size_t cap = 0;
    rm_hdr h;
    rm_hdr_put(raw, RM_MSG_HELLO, 64u << 20, 1);   /* announces 64 MiB, sends none of it */
    assert_int_equal(write(sv[0], raw, sizeof raw), (ssize_t)sizeof raw);
    assert_int_equal(rm_recv_max(sv[1], &h, &buf, &cap, 4096), RM_EBOUNDS);
    assert_null(buf);
    assert_int_equal(cap, 0);
    uint8_t mac[RM_MAC_BYTES] = {0};
    assert_int_equal(rm_send(sv[0], RM_MSG_AUTH, 2, mac, sizeof mac), RM_OK);
    assert_int_equal(rm_recv_max(sv[1], &h, &buf, &cap, RM_MAC_BYTES), RM_OK);
    assert_int_equal(h.length, RM_MAC_BYTES);
    assert_int_equal(rm_send(sv[0], RM_MSG_AUTH, 3, mac, sizeof mac), RM_OK);
    assert_int_equal(rm_recv_max(sv[1], &h, &buf, &cap, RM_MAC_BYTES - 1), RM_EBOUNDS);
    free(buf);
    close(sv[0]);
    close(sv[1]);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/rm_auth_test.XXXXXX");
    if (mkdtemp(dir) == NULL)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_addresses),
        cmocka_unit_test(test_token_files),
        cmocka_unit_test(test_mac),
        cmocka_unit_test(test_hello_check),
        cmocka_unit_test(test_challenge),
        cmocka_unit_test(test_recv_bound),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        rc = rc != 0 ? rc : 1;
    return rc;
}
