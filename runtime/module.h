/*
 * module.h - the entry a module registers in the lifecycle table (header only,
 * layer 0: modules below and above lifecycle.c register alike).
 *
 * A module with something to do when the runtime starts, in a fork()ed child,
 * or at exit declares one entry with LC_MODULE in its own file, as Linux
 * initcalls do; lifecycle.c walks the entries ordered by level and calls no
 * module by name. Levels say what must come before what:
 *   init        ascending level: tables (0), the rest of the core (1), what
 *               needs the core (2), plugins (3)
 *   fork_child  ascending level, in the child of fork() on its only thread
 *   stop        at exit, after every destructor, ascending level: hooks stop
 *               (2), then plugins flush (3); then lc_exiting() turns true
 *   stopped     after that, ascending level (the counts file is written)
 * Entries of one level are walked in name order; none may depend on another
 * of its level. docs/runtime.md, "Initialisation, exit and fork", lists them.
 */
#ifndef RT_MODULE_H
#define RT_MODULE_H

#include <stdint.h>

enum { LC_TABLES = 0, LC_CORE = 1, LC_HOOKS = 2, LC_PLUGINS = 3 };

typedef struct lc_module {
    const char *name;
    int level;
    void (*init)(void);
    void (*fork_child)(uint32_t parent_tid);   /* the forking thread's tid in the parent (0: unknown) */
    void (*stop)(void);
    void (*stopped)(void);
} lc_module;

/* One entry per module, placed in the section "cushim_lc" that lifecycle.c walks (pointers only: the
   entries themselves may be aligned and padded as the compiler likes). */
#define LC_MODULE(NAME, ...)                                                                      \
    static const lc_module lc_module_##NAME = { .name = #NAME, __VA_ARGS__ };                     \
    static const lc_module *const lc_module_ptr_##NAME                                            \
        __attribute__((used, section("cushim_lc"), aligned(sizeof(void *)))) = &lc_module_##NAME

#endif /* RT_MODULE_H */
