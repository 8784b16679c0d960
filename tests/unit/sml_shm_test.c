/*
 * sml_shm_test.c - the smlimit shared region's turn (plugins/smlimit/shm.c):
 * taking, giving back, handing to the process in line, passing over a holder or
 * a waiter that is gone, and nonsense in the region; and liveness by lock, not
 * by pid. The region is a file in /dev/shm as the plugin makes it; "live" is a
 * slot whose lock byte another open file description holds (another process's),
 * "gone" one whose lock is free - whatever pid it names (a reaped child's, or
 * this process's own: across PID namespaces a pid names someone else). Also
 * the priorities' busy masks and policy default's test for another process.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>

#include "region.h"
#include "shm.h"

/* Slot k of device 0 held by another open file description: what another live process's claim looks like. */
static int hold_slot(const char *path, int k)
{
    struct flock fl;
    int fd = open(path, O_RDWR | O_CLOEXEC);
    assert_true(fd >= 0);
    memset(&fl, 0, sizeof fl);
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    fl.l_start = RG_LOCK_BASE + k;
    fl.l_len = 1;
    assert_int_equal(fcntl(fd, F_OFD_SETLK, &fl), 0);
    return fd;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int32_t dead_pid(void)
{
    pid_t p = fork();
    if (p == 0)
        _exit(0);
    assert_true(p > 0);
    assert_int_equal(waitpid(p, NULL, 0), p);
    return (int32_t)p;
}

static void test_turns(void **state)
{
    (void)state;
    char name[64], path[80], err[512];
    snprintf(name, sizeof name, "/cushim-sml-test-%d", (int)getpid());
    snprintf(path, sizeof path, "/dev/shm%s", name);
    unlink(path);
    sml_region *r = sml_shm_open(name, err, sizeof err);
    if (r == NULL)
        print_error("%s\n", err);
    assert_non_null(r);
    uint64_t now = now_ns();
    int32_t me = (int32_t)getpid();
    /* three "processes": a (ours) and b (another's lock) live, c gone; d names our own pid with no lock */
    int other = hold_slot(path, 5);
    sml_slot *a = sml_shm_claim(r, 0, me, sml_proc_start(me), now);
    sml_slot *b = &r->slot[0][5], *c = &r->slot[0][9], *d = &r->slot[0][12];
    assert_ptr_equal(a, &r->slot[0][0]);
    atomic_store(&b->pid, me);
    atomic_store(&b->heartbeat, now);
    atomic_store(&c->pid, dead_pid());
    atomic_store(&c->heartbeat, now);
    atomic_store(&d->pid, me);
    atomic_store(&d->heartbeat, now);
    assert_true(sml_shm_live(a, now));
    assert_true(sml_shm_live(b, now));
    assert_false(sml_shm_live(c, now));
    assert_false(sml_shm_live(d, now));   /* a pid proves nothing: the lock does */
    /* a second claim on the device is our own slot again; another process's slot is never taken */
    assert_ptr_equal(sml_shm_claim(r, 0, me, sml_proc_start(me), now), a);

    /* free: a takes it; b cannot; a again: still its own */
    assert_int_equal(sml_shm_turn_holder(r, 0), 0);
    assert_true(sml_shm_turn_take(r, 0, a, 0));
    assert_int_equal(sml_shm_turn_holder(r, 0), 1);
    assert_false(sml_shm_turn_take(r, 0, b, 0));
    assert_true(sml_shm_turn_take(r, 0, a, 0));
    /* b waits in line: a sees it, and hands the turn to b when it gives it back */
    assert_false(sml_shm_turn_waited_for(r, 0, a));
    sml_shm_turn_wait_mark(r, 0, b);
    assert_true(sml_shm_turn_waited_for(r, 0, a));
    assert_false(sml_shm_turn_waited_for(r, 0, b));   /* not for itself */
    sml_shm_turn_give(r, 0, a);
    assert_int_equal(sml_shm_turn_holder(r, 0), 6);
    assert_false(sml_shm_turn_take(r, 0, a, 0));      /* a cannot take it back at once */
    assert_true(sml_shm_turn_take(r, 0, b, 0));       /* b finds it its own; no longer in line */
    assert_false(sml_shm_turn_waited_for(r, 0, a));
    /* giving back what is not ours changes nothing; b gives it back to nobody */
    sml_shm_turn_give(r, 0, a);
    assert_int_equal(sml_shm_turn_holder(r, 0), 6);
    sml_shm_turn_give(r, 0, b);
    assert_int_equal(sml_shm_turn_holder(r, 0), 0);

    /* a holder that is gone: not live, and passed over when named as dead */
    atomic_store(&r->turn[0], 10);   /* c's */
    assert_false(sml_shm_live(c, now));
    assert_false(sml_shm_turn_take(r, 0, a, 0));
    assert_true(sml_shm_turn_take(r, 0, a, 10));
    assert_int_equal(sml_shm_turn_holder(r, 0), 1);
    /* a waiter that is gone: handed the turn, then passed over, and out of line */
    sml_shm_turn_wait_mark(r, 0, c);
    sml_shm_turn_give(r, 0, a);
    assert_int_equal(sml_shm_turn_holder(r, 0), 10);
    assert_true(sml_shm_turn_take(r, 0, b, 10));
    assert_false(sml_shm_turn_waited_for(r, 0, b));
    sml_shm_turn_give(r, 0, b);
    assert_int_equal(sml_shm_turn_holder(r, 0), 0);

    /* nonsense in the region: nobody's, and taken over */
    atomic_store(&r->turn[0], 1000);
    assert_int_equal(sml_shm_turn_holder(r, 0), 0);
    assert_true(sml_shm_turn_take(r, 0, a, 0));
    atomic_store(&r->turn_next[0], 77);
    assert_false(sml_shm_turn_waited_for(r, 0, a));
    sml_shm_turn_give(r, 0, a);
    assert_int_equal(sml_shm_turn_holder(r, 0), 0);
    /* a slot that is not in the device's row, and devices out of range, hold nothing */
    assert_false(sml_shm_turn_take(r, 1, a, 0));
    assert_false(sml_shm_turn_take(r, -1, a, 0));
    assert_false(sml_shm_turn_take(r, SML_SHM_DEVICES, a, 0));
    assert_int_equal(sml_shm_turn_holder(r, SML_SHM_DEVICES), 0);
    /* leaving frees the slot's lock: another description can take it */
    sml_shm_leave(a);
    close(hold_slot(path, 0));
    close(other);
    assert_false(sml_shm_live(b, now));   /* its holder is gone */
    unlink(path);
}

/* Priorities' busy masks: a higher level's pending work holds a lower one, never the same or a higher level, never
   the process itself; a process gone while busy is cleared at the look that checks; a claim clears a dead owner's
   bits. And policy default's "another process uses the device": pending work, recent finishes or usage, of a live
   process other than ourselves. */
static void test_priorities(void **state)
{
    (void)state;
    char name[64], path[80], err[512];
    snprintf(name, sizeof name, "/cushim-sml-prio-%d", (int)getpid());
    snprintf(path, sizeof path, "/dev/shm%s", name);
    unlink(path);
    sml_region *r = sml_shm_open(name, err, sizeof err);
    if (r == NULL)
        print_error("%s\n", err);
    assert_non_null(r);
    uint64_t now = now_ns();
    int32_t me = (int32_t)getpid();
    int other = hold_slot(path, 3);
    sml_slot *a = sml_shm_claim(r, 0, me, sml_proc_start(me), now);   /* ours: low */
    sml_slot *hi = &r->slot[0][3], *gone = &r->slot[0][7];
    atomic_store(&hi->pid, me);
    atomic_store(&hi->heartbeat, now);
    atomic_store(&gone->pid, dead_pid());
    atomic_store(&gone->heartbeat, now);
    assert_false(sml_shm_higher_busy(r, 0, a, SML_PRIO_LOW, now, 1));
    assert_false(sml_shm_others_active(r, 0, a, now));
    /* our own pending work holds nobody back from us, and is not "another process" */
    sml_shm_busy(r, 0, a, SML_PRIO_HIGH, 1);
    assert_false(sml_shm_higher_busy(r, 0, a, SML_PRIO_LOW, now, 1));
    assert_false(sml_shm_others_active(r, 0, a, now));
    sml_shm_busy(r, 0, a, SML_PRIO_HIGH, 0);
    /* a live high-priority process with work pending: holds low and normal, not high */
    sml_shm_busy(r, 0, hi, SML_PRIO_HIGH, 1);
    assert_true(sml_shm_higher_busy(r, 0, a, SML_PRIO_LOW, now, 1));
    assert_true(sml_shm_higher_busy(r, 0, a, SML_PRIO_NORMAL, now, 0));
    assert_false(sml_shm_higher_busy(r, 0, a, SML_PRIO_HIGH, now, 1));
    assert_false(sml_shm_higher_busy(r, 1, a, SML_PRIO_LOW, now, 1));   /* another device */
    assert_true(sml_shm_others_active(r, 0, a, now));
    sml_shm_busy(r, 0, hi, SML_PRIO_HIGH, 0);   /* its work done: nothing held (work-conserving) */
    assert_false(sml_shm_higher_busy(r, 0, a, SML_PRIO_LOW, now, 1));
    /* a normal one's work holds low only */
    sml_shm_busy(r, 0, hi, SML_PRIO_NORMAL, 1);
    assert_true(sml_shm_higher_busy(r, 0, a, SML_PRIO_LOW, now, 0));
    assert_false(sml_shm_higher_busy(r, 0, a, SML_PRIO_NORMAL, now, 0));
    sml_shm_busy(r, 0, hi, SML_PRIO_NORMAL, 0);
    /* a process gone while busy: seen until a look that checks, which clears its bit */
    sml_shm_busy(r, 0, gone, SML_PRIO_HIGH, 1);
    assert_true(sml_shm_higher_busy(r, 0, a, SML_PRIO_LOW, now, 0));
    assert_false(sml_shm_higher_busy(r, 0, a, SML_PRIO_LOW, now, 1));
    assert_int_equal(atomic_load(&r->busy[0][SML_PRIO_HIGH]), 0);
    /* ... and its pending work is not another process using the device */
    sml_shm_busy(r, 0, gone, SML_PRIO_NORMAL, 1);
    assert_false(sml_shm_others_active(r, 0, a, now));
    /* policy default: a live partner's recent finish or usage counts; an old finish, low usage or a gone one not */
    atomic_store(&hi->last_end, now - 50000000ull);
    assert_true(sml_shm_others_active(r, 0, a, now));
    atomic_store(&hi->last_end, now - 500000000ull);
    atomic_store(&hi->usage, 5);
    assert_false(sml_shm_others_active(r, 0, a, now));
    atomic_store(&hi->usage, 250);
    assert_true(sml_shm_others_active(r, 0, a, now));
    close(other);   /* its process gone */
    assert_false(sml_shm_others_active(r, 0, a, now));
    /* out of range: nothing */
    sml_shm_busy(r, 0, a, 7, 1);
    assert_false(sml_shm_higher_busy(r, 0, a, SML_PRIO_LOW, now, 1));   /* (gone's bit cleared by the look) */
    sml_shm_leave(a);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_turns),
        cmocka_unit_test(test_priorities),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
