/*
 * clock.c - the SM clock of each limited device, for option clock_ref_mhz
 * (core.h: sml_clock_share). NVML is opened at run time (dlopen of
 * libnvidia-ml.so.1, the driver's; nothing is linked), by the polling thread,
 * the first time it has work to measure; each CUDA device is matched to its
 * NVML device by PCI bus id. The poller samples the clock of a device while
 * launches of this process are pending on it (so the figure is the clock its
 * work runs at, not the idle clock between bursts) at most every
 * SML_CLOCK_EVERY_NS, and keeps a moving average. Without NVML, or a device
 * NVML does not list, the plugin logs it once and holds time shares.
 * Also, for policy default, whether NVML lists another compute process on a
 * device (sml_nvml_others): processes of other users and containers, which the
 * shared region does not see. The device is matched by PCI bus id, else by
 * CUDA_VISIBLE_DEVICES's numeric list (or the identity when it is unset).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "smlimit.h"
#include "visible.h"   /* plugins/common */

typedef int (*nvml_init_fn)(void);
typedef int (*nvml_by_pci_fn)(const char *, void **);
typedef int (*nvml_by_index_fn)(unsigned int, void **);
typedef int (*nvml_clock_fn)(void *, int, unsigned int *);
typedef int (*nvml_procs_fn)(void *, unsigned int *, void *);

static struct {
    int tried, ok;
    void *lib;
    nvml_clock_fn clock;
    void *dev[SML_MAX_DEV];
    int dev_tried[SML_MAX_DEV];
    int lib_tried;                      /* the library opened and initialised, for either use */
    void *plib;                         /* NULL: none */
    nvml_procs_fn procs;
    void *pdev[SML_MAX_DEV];
    int pdev_tried[SML_MAX_DEV];
} nv;

/* nvmlProcessInfo_t of nvmlDeviceGetComputeRunningProcesses_v3 (nvml.h's documented layout): pid, usedGpuMemory,
   gpuInstanceId, computeInstanceId. */
typedef struct {
    unsigned int pid;
    unsigned long long used;
    unsigned int gi, ci;
} sml_nvml_proc;

/* NVML opened and initialised once (poller thread), or NULL; quietly: each use says what it lacks. */
static void *sml_nvml_lib(void)
{
    if (!nv.lib_tried) {
        nvml_init_fn init;
        void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
        nv.lib_tried = 1;
        if (lib != NULL && (init = (nvml_init_fn)dlsym(lib, "nvmlInit_v2")) != NULL && init() == 0)
            nv.plib = lib;
    }
    return nv.plib;
}

#define SML_NVML_CLOCK_SM 1   /* nvmlClockType_t NVML_CLOCK_SM */

/* On the poller's thread only. */
static int sml_clock_open(sml_state *st)
{
    void *lib;
    nvml_init_fn init;
    if (nv.tried)
        return nv.ok;
    nv.tried = 1;
    lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        sml_host->log(st->self, CUSHIM_LOG_WARN, "clock_ref_mhz: cannot load NVML (%s): holding time shares",
                      dlerror());
        return 0;
    }
    init = (nvml_init_fn)dlsym(lib, "nvmlInit_v2");
    nv.clock = (nvml_clock_fn)dlsym(lib, "nvmlDeviceGetClockInfo");
    if (init == NULL || nv.clock == NULL || init() != 0) {
        sml_host->log(st->self, CUSHIM_LOG_WARN, "clock_ref_mhz: NVML did not initialise: holding time shares");
        return 0;
    }
    nv.lib = lib;
    nv.ok = 1;
    return 1;
}

static void *sml_clock_dev(sml_state *st, int i)
{
    nvml_by_pci_fn by_pci;
    char bus[64];
    void *h = NULL;
    if (nv.dev_tried[i])
        return nv.dev[i];
    nv.dev_tried[i] = 1;
    by_pci = (nvml_by_pci_fn)dlsym(nv.lib, "nvmlDeviceGetHandleByPciBusId_v2");
    if (st->pci_bus_id == NULL || st->pci_bus_id(bus, (int)sizeof bus, (CUdevice)i) != CUDA_SUCCESS || by_pci == NULL ||
        by_pci(bus, &h) != 0) {
        sml_host->log(st->self, CUSHIM_LOG_WARN, "clock_ref_mhz: device %d not found in NVML: its time share holds", i);
        return NULL;
    }
    nv.dev[i] = h;
    return h;
}

void sml_clock_sample(sml_state *st, int i)
{
    sml_dev *d = &st->dev[i];
    void *h;
    unsigned int mhz = 0;
    if (!sml_clock_open(st) || (h = sml_clock_dev(st, i)) == NULL)
        return;
    if (nv.clock(h, SML_NVML_CLOCK_SM, &mhz) != 0 || mhz == 0)
        return;
    d->clk_mhz = d->clk_mhz > 0 ? d->clk_mhz + 0.1 * ((double)mhz - d->clk_mhz) : (double)mhz;
}

/* CUDA device i's NVML handle for the process list, or NULL. */
static void *sml_nvml_dev(sml_state *st, int i)
{
    nvml_by_pci_fn by_pci;
    nvml_by_index_fn by_index;
    char bus[64];
    void *h = NULL;
    if (nv.pdev_tried[i])
        return nv.pdev[i];
    nv.pdev_tried[i] = 1;
    by_pci = (nvml_by_pci_fn)dlsym(nv.plib, "nvmlDeviceGetHandleByPciBusId_v2");
    if (st->pci_bus_id != NULL && by_pci != NULL && st->pci_bus_id(bus, (int)sizeof bus, (CUdevice)i) == CUDA_SUCCESS &&
        by_pci(bus, &h) == 0)
        return nv.pdev[i] = h;
    /* by index: CUDA ordinal i is the i-th of CUDA_VISIBLE_DEVICES's numbers, or NVML index i when it is unset */
    by_index = (nvml_by_index_fn)dlsym(nv.plib, "nvmlDeviceGetHandleByIndex_v2");
    long idx = vis_physical(sml_host->env("CUDA_VISIBLE_DEVICES"), i);
    if (idx < 0 || by_index == NULL || by_index((unsigned)idx, &h) != 0)
        return NULL;
    return nv.pdev[i] = h;
}

int sml_nvml_others(sml_state *st, int i)
{
    sml_nvml_proc procs[64];
    unsigned int n = 64;
    void *h;
    if (sml_nvml_lib() == NULL)
        return -1;
    if (nv.procs == NULL &&
        (nv.procs = (nvml_procs_fn)dlsym(nv.plib, "nvmlDeviceGetComputeRunningProcesses_v3")) == NULL)
        return -1;
    if ((h = sml_nvml_dev(st, i)) == NULL || nv.procs(h, &n, procs) != 0)
        return -1;
    /* this process is on the list once it has a context there (we have launched): another is a second entry
       (pids are not compared: in a container NVML may give the host's) */
    return n >= 2;
}

void sml_clock_fork_child(void)
{
    memset(&nv, 0, sizeof nv);   /* NVML is initialised again in the child, if it needs it */
}
