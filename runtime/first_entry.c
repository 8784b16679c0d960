/*
 * first_entry.c - the first call of an API whose real function is not known
 * yet (x86-64 assembly).
 *
 * rt_slots[id].fast starts as rt_first_<NAME> (wrap.h: two instructions, the id in
 * %r11, which no calling convention uses for arguments), which comes here: the
 * argument registers (%rdi %rsi %rdx %rcx %r8 %r9, %rax - the vector count of
 * a variadic call - and %xmm0-7) are saved, rt_first_target(id) resolves the
 * real function and says where the call goes, the registers are restored and
 * the call jumps there with the caller's own arguments, stack and return
 * address. So a real function that must not be called through this build's
 * prototype (a copy of the library of another major: dispatch.c
 * rt_check_foreign) is reached by a jump even on its first call; every other
 * call goes on to the slow path exactly as before (rt_first_target returns
 * rt_slow_<NAME> whenever the slow path has work: a hook, the counter, no real
 * function, failing closed).
 *
 * The entry of each API starts with endbr64: it is reached by the wrapper's
 * indirect jump (indirect branch tracking).
 */
#include "dispatch.h"   /* rt_first_target, called from the assembly below */

#if !defined(__x86_64__)
#error "first_entry.c: only x86-64 is implemented"
#endif

__asm__(
    "    .text\n"
    "    .p2align 4\n"
    "    .globl rt_first_common\n"
    "    .hidden rt_first_common\n"
    "    .type rt_first_common, @function\n"
    "rt_first_common:\n"
    "    .cfi_startproc\n"
    "    pushq %rbp\n"                      /* entry: rsp = 8 mod 16 (the caller's return address) */
    "    .cfi_adjust_cfa_offset 8\n"
    "    .cfi_offset %rbp, -16\n"
    "    movq %rsp, %rbp\n"
    "    .cfi_def_cfa_register %rbp\n"
    "    subq $192, %rsp\n"                 /* 16-aligned: 7 x 8 + 8 x 16 bytes */
    "    movq %rdi, 0(%rsp)\n"
    "    movq %rsi, 8(%rsp)\n"
    "    movq %rdx, 16(%rsp)\n"
    "    movq %rcx, 24(%rsp)\n"
    "    movq %r8, 32(%rsp)\n"
    "    movq %r9, 40(%rsp)\n"
    "    movq %rax, 48(%rsp)\n"
    "    movaps %xmm0, 64(%rsp)\n"
    "    movaps %xmm1, 80(%rsp)\n"
    "    movaps %xmm2, 96(%rsp)\n"
    "    movaps %xmm3, 112(%rsp)\n"
    "    movaps %xmm4, 128(%rsp)\n"
    "    movaps %xmm5, 144(%rsp)\n"
    "    movaps %xmm6, 160(%rsp)\n"
    "    movaps %xmm7, 176(%rsp)\n"
    "    movl %r11d, %edi\n"
    "    call rt_first_target\n"
    "    movq %rax, %r11\n"
    "    movq 0(%rsp), %rdi\n"
    "    movq 8(%rsp), %rsi\n"
    "    movq 16(%rsp), %rdx\n"
    "    movq 24(%rsp), %rcx\n"
    "    movq 32(%rsp), %r8\n"
    "    movq 40(%rsp), %r9\n"
    "    movq 48(%rsp), %rax\n"
    "    movaps 64(%rsp), %xmm0\n"
    "    movaps 80(%rsp), %xmm1\n"
    "    movaps 96(%rsp), %xmm2\n"
    "    movaps 112(%rsp), %xmm3\n"
    "    movaps 128(%rsp), %xmm4\n"
    "    movaps 144(%rsp), %xmm5\n"
    "    movaps 160(%rsp), %xmm6\n"
    "    movaps 176(%rsp), %xmm7\n"
    "    movq %rbp, %rsp\n"
    "    popq %rbp\n"
    "    .cfi_def_cfa %rsp, 8\n"
    "    jmp *%r11\n"
    "    .cfi_endproc\n"
    "    .size rt_first_common, .-rt_first_common\n");
