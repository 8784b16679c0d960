/*
 * lp_report.c - where print() and cushim.report write: report=FILE, or the standard error of the plugin's start.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cushim/cushim_io.h"

#include "lp_engine.h"
#include "lp_report.h"

/* report=FILE. The program may close every descriptor (a daemon's start-up) and open a file of its own that
   gets the report's number: before each line the descriptor is checked against the report file's device and
   inode, and when it is not the file any more the file is opened again by its absolute path (appending, as at
   start); nothing is written to, or closed on, a number that became the program's. Without report=, fd 2 while
   it is the standard error of the plugin's start (or a terminal, /dev/null: cushim_stderr_fd). */
static pthread_mutex_t lp_report_mu = PTHREAD_MUTEX_INITIALIZER;
static int lp_report_fd = 2;
static dev_t lp_report_dev;
static ino_t lp_report_ino;
static char *lp_report_path;   /* NULL: stderr */
static cushim_stderr_id lp_report_stderr;   /* descriptor 2 at init */
static int lp_report_warned;
static int lp_report_write_warned;   /* a write failed (said once) */

/* A regular file only, opened without blocking (a FIFO with no reader held the program's first CUDA call, or a
   hook, forever); -1 with errno, EINVAL or ENXIO (a FIFO with no reader, a socket) when it is another kind. */
static int lp_report_open(void)
{
    struct stat st;
    int fd = cushim_open_regular(lp_report_path, O_WRONLY | O_APPEND | O_CREAT, 0644, NULL, 0);
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return -1;
    }
    lp_report_fd = fd;
    lp_report_dev = st.st_dev;
    lp_report_ino = st.st_ino;
    return 0;
}

/* Why lp_report_open failed. */
static const char *lp_report_why(int e)
{
    return e == EINVAL || e == ENXIO ? "not a regular file (a FIFO, device, socket or directory)" : strerror(e);
}

void lp_report_write(const char *s, size_t n)
{
    struct stat st;
    pthread_mutex_lock(&lp_report_mu);
    if (lp_report_path != NULL && (lp_report_fd < 0 || fstat(lp_report_fd, &st) != 0 ||
                                   st.st_dev != lp_report_dev || st.st_ino != lp_report_ino)) {
        lp_report_fd = -1;   /* the number is the program's now */
        if (lp_report_open() != 0 && !lp_report_warned) {
            lp_report_warned = 1;
            lp_eng.host->log(lp_eng.self, CUSHIM_LOG_WARN, "report=%s: the program closed its descriptor and it "
                             "cannot be opened again (%s): report lines are lost", lp_report_path,
                             lp_report_why(errno));
        }
    }
    if (lp_report_path == NULL)   /* -1: the program has made 2 its own file, pipe or socket: the line is lost */
        lp_report_fd = cushim_stderr_fd(&lp_report_stderr);
    /* past the file size limit: EFBIG, not SIGXFSZ (cushim_io.h); said once */
    if (lp_report_fd >= 0 && cushim_write_all(lp_report_fd, s, n) < n && !lp_report_write_warned) {
        lp_report_write_warned = 1;
        lp_eng.host->log(lp_eng.self, CUSHIM_LOG_WARN, "report=%s: writing a report line failed (%s): that line "
                         "and later failing ones are lost", lp_report_path ? lp_report_path : "stderr",
                         strerror(errno));
    }
    pthread_mutex_unlock(&lp_report_mu);
}

int lp_report_init(const char *report)
{
    const cushim_host *h = lp_eng.host;
    cushim_plugin *self = lp_eng.self;
    cushim_stderr_mark(&lp_report_stderr);
    if (report != NULL && report[0] != '\0' && !h->secure()) {
        char *cwd = report[0] == '/' ? NULL : getcwd(NULL, 0);   /* the program may change directory */
        free(lp_report_path);
        if ((lp_report_path = malloc((cwd != NULL ? strlen(cwd) + 1 : 0) + strlen(report) + 1)) != NULL)
            sprintf(lp_report_path, "%s%s%s", cwd != NULL ? cwd : "", cwd != NULL ? "/" : "", report);
        free(cwd);
        if (lp_report_path == NULL || lp_report_open() != 0) {
            h->log(self, CUSHIM_LOG_ERROR, "report=%s: %s", report, lp_report_path == NULL ? "out of memory" :
                   lp_report_why(errno));
            free(lp_report_path);
            lp_report_path = NULL;
            return -1;
        }
    }
    return 0;
}

void lp_report_fork_child(void)
{
    pthread_mutex_init(&lp_report_mu, NULL);   /* another thread may have held it at the fork */
}
