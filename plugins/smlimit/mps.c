/*
 * mps.c - smlimit's priority handed to MPS as well: a process that will run as an
 * MPS client gets CUDA_MPS_CLIENT_PRIORITY from its priority (high 0, normal and
 * low 1: MPS has these two levels), unless the variable is set already - by the
 * user: a value smlimit set in a parent process (it says so in SML_MPS_MARK, which
 * children inherit with it) is replaced by this process's own.
 *
 * The driver connects to the MPS control daemon when CUDA is initialised (cuInit)
 * and reads the variable then; smlimit's init runs at the shim's initialisation,
 * before the first CUDA call is forwarded, so the variable is in place in time. A
 * live priority ('cushim limit --priority') cannot reach MPS: a client's priority
 * is fixed when it connects. The test for "an MPS client" is the daemon's control
 * socket where this process's driver will look for it: CUDA_MPS_PIPE_DIRECTORY,
 * else /tmp/nvidia-mps, holding 'control' (one stat; a FIFO is taken too).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "limitspec.h"
#include "smlimit.h"

#define SML_MPS_DEFAULT_PIPE_DIR "/tmp/nvidia-mps"
#define SML_MPS_MARK "CUSHIM_SMLIMIT_MPS_PRIORITY"   /* the value smlimit set, beside the variable */

/* Is there an MPS control daemon's socket where the driver will look? Its path in 'path'. */
static int sml_mps_present(const cushim_host *host, char *path, size_t cap)
{
    const char *dir = host->env("CUDA_MPS_PIPE_DIRECTORY");
    struct stat sb;
    if (dir == NULL || *dir == '\0')
        dir = SML_MPS_DEFAULT_PIPE_DIR;
    if ((size_t)snprintf(path, cap, "%s/control", dir) >= cap)
        return 0;
    return stat(path, &sb) == 0 && (S_ISSOCK(sb.st_mode) || S_ISFIFO(sb.st_mode));
}

/* How many threads this process runs (/proc/self/task), 0 if unknown. */
static int sml_thread_count(void)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    int n = 0;
    if (d == NULL)
        return 0;
    while ((e = readdir(d)) != NULL)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

void sml_mps_priority(const cushim_host *host, cushim_plugin *self, int prio)
{
    char path[4200];
    const char *want = prio == SML_PRIO_HIGH ? "0" : "1", *have, *mark;
    int threads;
    if (prio < 0 || !sml_mps_present(host, path, sizeof path))
        return;
    have = host->env("CUDA_MPS_CLIENT_PRIORITY");
    mark = host->env(SML_MPS_MARK);
    if (have != NULL && (mark == NULL || strcmp(mark, have) != 0)) {   /* the user's word */
        host->log(self, CUSHIM_LOG_DEBUG, "MPS client (%s): CUDA_MPS_CLIENT_PRIORITY=%.20s kept (priority %s)", path,
                  have, sml_priority_name(prio));
        return;
    }
    /* setenv beside another thread's getenv is unsafe (the environment may move): only while this process is
       alone, as it is when the shim initialises in its constructor */
    if ((threads = sml_thread_count()) != 1) {
        host->log(self, CUSHIM_LOG_WARN, "MPS client (%s): CUDA_MPS_CLIENT_PRIORITY not set for priority %s, as the "
                  "process already runs %d threads; set CUDA_MPS_CLIENT_PRIORITY=%s in its environment",
                  path, sml_priority_name(prio), threads, want);
        return;
    }
    if (have != NULL && strcmp(have, want) == 0)
        return;   /* a parent's, the same */
    if (setenv(SML_MPS_MARK, want, 1) != 0 || setenv("CUDA_MPS_CLIENT_PRIORITY", want, 1) != 0) {
        host->log(self, CUSHIM_LOG_WARN, "MPS client (%s): cannot set CUDA_MPS_CLIENT_PRIORITY=%s", path, want);
        return;
    }
    host->log(self, CUSHIM_LOG_INFO, "MPS client (%s): CUDA_MPS_CLIENT_PRIORITY=%s for priority %s", path, want,
              sml_priority_name(prio));
}
