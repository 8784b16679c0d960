/*
 * region.h - a file-backed region shared by the processes of one user (or of a
 * group the operator names) on one machine: memlimit's budgets and smlimit's
 * scheduling groups. This module alone owns, for both:
 *   - opening it safely (cushim_open_shared: a regular file, this user's or the
 *     named group's, writable by nobody else; never blocking on a FIFO);
 *   - its layout check: a region is exactly 'size' bytes with 'magic' at offset
 *     0 (or all zeros of that size: another process is about to write it), or
 *     an empty file we size; a file of another size or magic (another version's
 *     layout, another program's file) is refused with one line, never written;
 *   - the mapping, guarded against SIGBUS when the file is shrunk under it;
 *   - per-slot liveness that holds across PID namespaces and containers that
 *     share /dev/shm: slot i's lock byte (an open-file-description record lock,
 *     F_OFD_SETLK, at RG_LOCK_BASE + i) is held by the process that claimed the
 *     slot for as long as it lives, and the kernel drops it however it dies.
 *     Pids are shown, never compared: a pid names another process (or none) in
 *     another namespace. Nothing ever waits on these locks;
 *   - fork: the child opens the file again (its own open file description, so
 *     its locks are its own and the parent's die with the parent);
 *   - the one /proc reader (a process's start time and name).
 * Host-free: the plugins, cushim-usage and the unit tests link it.
 */
#ifndef RG_REGION_H
#define RG_REGION_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define RG_LOCK_BASE (1 << 24)   /* lock byte of slot i: RG_LOCK_BASE + i (past any region's end) */

typedef struct rg_region {
    void *base;              /* the mapping, 'size' bytes; NULL when not open                         */
    size_t size;
    uint64_t magic;          /* at offset 0, 'magic_size' (4 or 8) bytes                              */
    unsigned magic_size;
    _Atomic int fd;          /* for lock operations; -1: none (detached, or closed by the program and
                                not reopenable: rg_fd)                                                */
    dev_t dev;               /* the file, to recognise 'fd' before each use                          */
    ino_t ino;
    long gid;                /* the group it is shared with, -1: this user alone                      */
    int readonly;            /* mapped for reading (cushim usage): no slot, no writes                 */
    int detached;            /* the file is gone from under the mapping (rg_lost): a private region   */
    int lost;                /* set (__atomic) by the SIGBUS guard                                    */
    char path[256];
} rg_region;

/* Open and map the region at 'path' ('readonly': for reading, whoever owns it). 0, or -1 with a reason in
   'err' (r->base NULL). */
int rg_open(rg_region *r, const char *path, size_t size, uint64_t magic, unsigned magic_size, long gid,
            int readonly, char *err, size_t errlen);
/* Unmap and close (the kernel drops this process's slot locks with the last reference). */
void rg_close(rg_region *r);
/* In a fork child: the same file, mapped again through a description of its own. 0, or -1 with a reason. */
int rg_reopen_child(rg_region *r, char *err, size_t errlen);
/* 1 (once) when the file was shrunk under the mapping: the mapping reads private zeros from then on and the
   region is detached (no locks: every other slot reads free). 0 otherwise. Cheap: one load. */
int rg_lost(rg_region *r);

/* Claim slot i's lock byte: 0 ours now (it was free, or its owner died), -1 a live process holds it (or the
   region is read-only, or no descriptor). */
int rg_lock_slot(rg_region *r, uint32_t i);
void rg_unlock_slot(rg_region *r, uint32_t i);
/* Is slot i's lock byte held by another open file description (a live process)? 1 yes or unknown, 0 free.
   This process's own claims read as free here: the caller knows its own slots. */
int rg_slot_held(rg_region *r, uint32_t i);

/* The start time of process 'pid' (field 22 of /proc/PID/stat, clock ticks; 0 if unreadable; 0 for pid 0:
   this process). */
uint64_t rg_proc_start(pid_t pid);
/* This process's name (/proc/self/comm), NUL-terminated, "" if unreadable. */
void rg_proc_comm(char out[16]);

#endif
