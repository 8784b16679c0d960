/*
 * lp_watch.h - loading, reloading and the file watcher (lp_watch.c).
 */
#ifndef LP_WATCH_H
#define LP_WATCH_H

#include <stddef.h>

#include "lp_engine.h"

lp_gen *lp_gen_load(char *err, size_t errlen) LP_HIDDEN;   /* read, compile, validate */
void lp_reload(void) LP_HIDDEN;
void lp_watch_start(void) LP_HIDDEN;
void lp_watch_stop(void) LP_HIDDEN;
void lp_watch_fork_child(void) LP_HIDDEN;
extern _Atomic int lp_watch_restart LP_HIDDEN;   /* after fork: start the watcher again (lp_pre) */

#endif /* LP_WATCH_H */
