/*
 * dlsym_entry.c - the exported dlsym and dlvsym (x86-64 assembly entries).
 *
 * Each entry saves its arguments, calls dl_decide(handle, name, version,
 * caller return address, &forward) and either returns its answer or, when
 * 'forward' was set, restores the arguments and jumps to glibc's function:
 * glibc then sees the original caller's return address, so RTLD_NEXT and
 * RTLD_DEFAULT keep their meaning for every caller. Unversioned on purpose:
 * satisfies both dlsym@GLIBC_2.2.5 and dlsym@GLIBC_2.34 references.
 */
#include "rt_internal.h"

#if !defined(__x86_64__)
#error "dlsym_entry.c: only x86-64 is implemented"
#endif

void *dl_decide(void *handle, const char *name, const char *version, void *caller, void **fwd);

__asm__(
    "    .text\n"
    "    .globl dlsym\n"
    "    .type dlsym, @function\n"
    "    .p2align 4\n"
    "dlsym:\n"
    "    .cfi_startproc\n"
    "    pushq %rdi\n"
    "    .cfi_adjust_cfa_offset 8\n"
    "    pushq %rsi\n"
    "    .cfi_adjust_cfa_offset 8\n"
    "    subq $24, %rsp\n"                 /* rsp is 16-aligned: 8 (ret) + 16 + 24 */
    "    .cfi_adjust_cfa_offset 24\n"
    "    movq $0, (%rsp)\n"
    "    xorl %edx, %edx\n"                /* version = NULL */
    "    movq 40(%rsp), %rcx\n"            /* caller's return address */
    "    movq %rsp, %r8\n"                 /* &forward */
    "    call dl_decide\n"
    "    movq (%rsp), %r11\n"
    "    addq $24, %rsp\n"
    "    .cfi_adjust_cfa_offset -24\n"
    "    popq %rsi\n"
    "    .cfi_adjust_cfa_offset -8\n"
    "    popq %rdi\n"
    "    .cfi_adjust_cfa_offset -8\n"
    "    testq %r11, %r11\n"
    "    jnz 1f\n"
    "    ret\n"
    "1:  jmp *%r11\n"
    "    .cfi_endproc\n"
    "    .size dlsym, .-dlsym\n"
    "\n"
    "    .globl dlvsym\n"
    "    .type dlvsym, @function\n"
    "    .p2align 4\n"
    "dlvsym:\n"
    "    .cfi_startproc\n"
    "    pushq %rdi\n"
    "    .cfi_adjust_cfa_offset 8\n"
    "    pushq %rsi\n"
    "    .cfi_adjust_cfa_offset 8\n"
    "    pushq %rdx\n"
    "    .cfi_adjust_cfa_offset 8\n"
    "    subq $16, %rsp\n"                 /* 8 + 24 + 16: 16-aligned */
    "    .cfi_adjust_cfa_offset 16\n"
    "    movq $0, (%rsp)\n"
    "    movq 40(%rsp), %rcx\n"            /* caller's return address */
    "    movq %rsp, %r8\n"
    "    call dl_decide\n"
    "    movq (%rsp), %r11\n"
    "    addq $16, %rsp\n"
    "    .cfi_adjust_cfa_offset -16\n"
    "    popq %rdx\n"
    "    .cfi_adjust_cfa_offset -8\n"
    "    popq %rsi\n"
    "    .cfi_adjust_cfa_offset -8\n"
    "    popq %rdi\n"
    "    .cfi_adjust_cfa_offset -8\n"
    "    testq %r11, %r11\n"
    "    jnz 2f\n"
    "    ret\n"
    "2:  jmp *%r11\n"
    "    .cfi_endproc\n"
    "    .size dlvsym, .-dlvsym\n");
