/*
 * dlsym_entry.c - the exported dlsym and dlvsym (x86-64 assembly entries).
 *
 * Each entry saves its arguments, calls dl_decide(handle, name, version,
 * caller return address, &forward) and either returns its answer or, when
 * 'forward' was set, restores the arguments and jumps there (the next dlsym in
 * the chain of interposers, or glibc's): glibc then sees the original caller's
 * return address, so RTLD_NEXT and RTLD_DEFAULT keep their meaning for every
 * caller.
 *
 * Symbol versions. Unversioned entries (the drop-in, the whitebox tests) satisfy
 * the dlsym@GLIBC_2.2.5 and dlsym@GLIBC_2.34 references programs make. But an
 * interposer preloaded before us that takes "the real dlsym" with
 * dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5") (HAMi-core does) asks for a hidden
 * version, which glibc never matches with an unversioned definition: it would
 * skip us and call glibc's. So libcushim.so is built with
 * CUSHIM_DLSYM_VERSIONED: the same code is exported as dlsym@GLIBC_2.2.5 and
 * dlsym@@GLIBC_2.34 (and dlvsym likewise; exports.map defines the two nodes).
 * The drop-in stays unversioned: a program linked against it would otherwise
 * record a need for GLIBC_2.34 from libcuda.so.1, which the real driver lacks.
 *
 * Each entry starts with endbr64 (a NOP on CPUs without CET): with indirect
 * branch tracking enforced, a call through a function pointer to an entry
 * without it faults. The .note.gnu.property that claims IBT comes from the
 * compiler (-fcf-protection) for every file alike, this one included.
 */
#include "dlsym.h"

#if !defined(__x86_64__)
#error "dlsym_entry.c: only x86-64 is implemented"
#endif

void *dl_decide(void *handle, const char *name, const char *version, void *caller, void **fwd);

#ifdef CUSHIM_DLSYM_VERSIONED
/* Two labels per entry (one per version), the plain names removed. */
#define DL_LABELS(n)                                                                              \
    "    .globl dl_" n "_v225\n"                                                                  \
    "    .globl dl_" n "_v234\n"                                                                  \
    "    .type dl_" n "_v225, @function\n"                                                        \
    "    .type dl_" n "_v234, @function\n"                                                        \
    "dl_" n "_v225:\n"                                                                            \
    "dl_" n "_v234:\n"
#define DL_END(n)                                                                                 \
    "    .size dl_" n "_v225, .-dl_" n "_v225\n"                                                  \
    "    .size dl_" n "_v234, .-dl_" n "_v234\n"                                                  \
    "    .symver dl_" n "_v225, " n "@GLIBC_2.2.5, remove\n"                                      \
    "    .symver dl_" n "_v234, " n "@@@GLIBC_2.34\n"
#else
#define DL_LABELS(n)                                                                              \
    "    .globl " n "\n"                                                                          \
    "    .type " n ", @function\n"                                                                \
    n ":\n"
#define DL_END(n) "    .size " n ", .-" n "\n"
#endif

__asm__(
    "    .text\n"
    "    .p2align 4\n"
    DL_LABELS("dlsym")
    "    .cfi_startproc\n"
    "    endbr64\n"
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
    DL_END("dlsym")
    "\n"
    "    .p2align 4\n"
    DL_LABELS("dlvsym")
    "    .cfi_startproc\n"
    "    endbr64\n"
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
    DL_END("dlvsym"));
