/*
 * e2e_seccomp_run CMD [ARG...] - runs CMD under a seccomp filter that kills the process on process_vm_readv and
 * process_vm_writev (SECCOMP_RET_KILL_PROCESS, as systemd's SystemCallFilter= does by default) and allows every
 * other call: a program whose plugins read its pointers (cushim_read_mem) must then never make those calls,
 * and must still read them without a fault. Exits 77 where no filter can be installed.
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_readv, 1, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_writev, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {(unsigned short)(sizeof f / sizeof f[0]), f};
    if (argc < 2) {
        fprintf(stderr, "usage: e2e_seccomp_run CMD [ARG...]\n");
        return 2;
    }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
        fprintf(stderr, "e2e_seccomp_run: no seccomp filter here: %s\n", strerror(errno));
        return 77;
    }
    execvp(argv[1], argv + 1);
    fprintf(stderr, "e2e_seccomp_run: %s: %s\n", argv[1], strerror(errno));
    return 127;
}
