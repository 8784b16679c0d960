/*
 * help.c - the usage text of each subcommand ('cushim help COMMAND', 'cushim COMMAND --help'). A text's first
 * paragraph, up to its first blank line, is the synopsis that a usage error repeats. The flags derived from the
 * shipped plugins' declared options are not written here: 'cushim run --help' lists them from the plugins
 * themselves (options.c, ln_plugins_help).
 */
#include "launcher.h"

const char ln_help_main[] =
    "usage: cushim COMMAND [ARGS...]\n"
    "\n"
    "commands:\n"
    "  run [OPTIONS] [--] CMD [ARGS...]  run CMD under the shim (cushim run --help)\n"
    "  plugins [NAME-OR-PATH...]         the shipped plugins (or those named): version, description, options\n"
    "  stats FILE                        the summary tables of a trace file (cushim run --trace); --close FILE OUT:\n"
    "                                    a copy of a trace that ends early (its process killed), ending properly\n"
    "  apis [GLOB]                       the interposed APIs, or those whose exported name matches GLOB\n"
    "  version                           the shim's version, the CUDA headers it was generated from, its SDK ABI\n"
    "  where                             the files this launcher uses\n"
    "  usage [NAME|PATH] [--prometheus]  a memlimit budget's per-process table (cushim usage --help)\n"
    "  flight dump PID|FILE, flight list the flight recorder's rings and dumps (cushim flight --help)\n"
    "  limit NAME [--mem=..] [--sm=..]   a shared budget's limits, shown or changed while it runs (cushim limit --help)\n"
    "  help [COMMAND]                    this text, or a command's\n"
    "\n"
    "Every command takes -h/--help. Without the launcher: LD_PRELOAD=/path/to/libcushim.so CUSHIM_COUNTS=c.tsv CMD\n";

const char ln_help_run[] =
    "usage: cushim run [OPTIONS] [--] CMD [ARGS...]\n"
    "\n"
    "Runs CMD with libcushim.so preloaded (LD_PRELOAD), or with the drop-in libcuda.so.1 first on LD_LIBRARY_PATH\n"
    "(--dropin). CMD replaces the launcher (exec): its exit status, or its death by a signal, is the launcher's.\n"
    "\n"
    "  --plugin=SPEC        load a plugin, SPEC = [?]NAME-OR-PATH[:KEY=VALUE{,KEY=VALUE}]; repeatable, loaded in\n"
    "                       order; a leading '?' makes it optional (a failure to load is logged and ignored,\n"
    "                       otherwise every CUDA call fails); in values write ',' ';' '\\' as '\\,' '\\;' '\\\\';\n"
    "                       a NAME is a shipped plugin (cushim plugins), a PATH contains a '/'\n"
    "  --fault=RULE         inject a fault with the shipped faultinject plugin, RULE = SELECTOR:ERROR[:WHEN];\n"
    "                       repeatable: all rules go to one faultinject instance (the launcher escapes them)\n"
    "  --lua=FILE[:K=V,...] run the Lua policy FILE with the shipped lua plugin (docs/lua-policies.md); the\n"
    "                       plugin's own options (the --lua-* flags below: fail, budget, report...) configure\n"
    "                       it, every other K=V reaches the policy as cushim.options.K; repeatable only with\n"
    "                       different files\n"
    "\n"
    "  --trace[=FILE]       trace every CUDA call with its arguments to FILE (default cushim-<pid>.json; .json.gz\n"
    "                       compressed; %p the pid, %h the host, %q{VAR} an environment variable such as RANK)\n"
    "                       with the shipped trace plugin, and print Nsight's cuda_api_sum table at exit (after\n"
    "                       nvtx_sum when the program has NVTX ranges); open the file at https://ui.perfetto.dev\n"
    "                       (docs/plugins/trace.md). Every option of the trace plugin is a flag too (below):\n"
    "                       --trace-filter=SEL, --trace-gpu, --trace-toggle=SIG, --trace-paused,\n"
    "                       --trace-capture=R, --trace-capture-end=E, --trace-delay=SEC, --trace-duration=SEC,\n"
    "                       --trace-unhook, --trace-gpu-detach=SEC, --trace-buffer=SIZE, ...\n"
    "  --trace-defer        render the trace at exit instead of on a writer thread while the program runs\n"
    "                       (keeps the writer off the cores; records wait in memory, up to half of the buffer;\n"
    "                       the same as --trace-render=exit)\n"
    "  --flight[=N]         keep the last N calls (default 1024) of every thread in a file under /dev/shm that\n"
    "                       outlives the process, dumped on a sticky error, a fatal signal, SIGUSR2 or a hang\n"
    "                       (--flight-hang=SEC), with the shipped flight plugin; read it with 'cushim flight\n"
    "                       dump PID|FILE' (docs/plugins/flight.md). Its options are flags too: --flight-dir=DIR\n"
    "  --counts=FILE        write per-API call counts at exit (api<TAB>calls); '-' = the program's stderr\n"
    "  --sm-limit=PCT       hold CMD to PCT percent of each GPU's time with the shipped smlimit plugin; per\n"
    "                       device: --sm-limit=0:30,1:50; 100 = no limit. Without it, HAMi-core's\n"
    "                       CUDA_DEVICE_SM_LIMIT[_<i>] in the environment loads smlimit with those limits\n"
    "  --sm-turns           with a limit: processes sharing a GPU take turns by bursts instead of time-slicing\n"
    "                       (their shares hold in throughput too; a burst may wait ~50 ms for another's)\n"
    "  --mem-limit=SIZE     quota of GPU memory per device with the shipped memlimit plugin (8GiB; per device\n"
    "                       --mem-limit=0:8GiB,1:4GiB); past it allocations fail with out-of-memory and memory\n"
    "                       queries report it. Without it, HAMi-core's CUDA_DEVICE_MEMORY_LIMIT[_<i>] in the\n"
    "                       environment loads memlimit with those limits (the shim does, launcher or not)\n"
    "  --mem-budget=NAME    share the --mem-limit quota with every process naming the same budget\n"
    "  --log=LEVEL          debug, info, warn (the default), error or off\n"
    "  --log-file=FILE      log there instead of stderr\n"
    "  --fake               run against the bundled fake driver (no GPU needed)\n"
    "  --dropin             drop-in mode: the shim is loaded as libcuda.so.1 and loads the real driver by path\n"
    "  --real-libcuda=PATH  the real libcuda.so.1 to load (CUSHIM_REAL_LIBCUDA)\n"
    "  --libs=LIB[,LIB...]  the libraries interposed (CUSHIM_LIBS): driver, runtime, nvml, nccl, cublas, cublaslt;\n"
    "                       default driver,runtime,nvml; the others pass through untouched\n"
    "  -h, --help           this text\n"
    "\n"
    "--plugin and --fault build CUSHIM_PLUGINS, appended to one already in the environment. Relative FILE and\n"
    "PATH values (--counts, --log-file, --real-libcuda, a plugin path) are made absolute against the current\n"
    "directory, since CMD may change its own. An option value cannot hold a control character (a newline, a tab).\n"
    "\n"
    "Modes: preload mode sees driver and runtime calls. A library loaded with RTLD_DEEPBIND resolves libcuda's\n"
    "names in its own dependencies first, so in preload mode its driver calls reach the real driver unseen; it is\n"
    "only fully seen in --dropin mode, where the libcuda.so.1 it depends on is the shim. Drop-in mode in turn does\n"
    "not interpose the runtime API (libcudart), only the driver calls the runtime makes.\n"
    "\n"
    "Plugin options: every option a shipped plugin declares is a flag --PLUGIN-OPTION=VALUE (an '_' in its name\n"
    "written '-' or '_'), checked against the type the plugin declares before CMD starts; a bool option given\n"
    "alone is 1. Each joins that plugin's one spec: the trace plugin's that of --trace, faultinject's that of\n"
    "--fault, smlimit's and memlimit's those of --sm-limit and --mem-limit, lua's the one --lua=FILE (or its own:\n"
    "--lua-script=FILE). A repeatable option may be given again; another one given again takes the last value.\n"
    "The short forms above keep their names and come first.\n";

const char ln_help_plugins[] =
    "usage: cushim plugins [NAME-OR-PATH...]\n"
    "\n"
    "Describes the shipped plugins (or the named ones: a NAME is a shipped plugin, a PATH contains a '/'): version,\n"
    "description, SDK ABI, and each option with its type, default and help. The plugins are loaded to read their\n"
    "definitions, never initialised; the shim is not loaded. Exit status 1 if a plugin could not be described\n"
    "(or the shim would refuse it). Each option OPT of a shipped plugin NAME is also the flag\n"
    "'cushim run --NAME-OPT=VALUE' (cushim run --help).\n";

const char ln_help_apis[] =
    "usage: cushim apis [GLOB]\n"
    "\n"
    "Lists the interposed APIs of this build (id, exported name, base name, ABI version, per-thread variant,\n"
    "library, header, category). With GLOB (fnmatch: * ? [...], quoted against the shell), only the APIs whose\n"
    "exported name matches it, e.g. cushim apis 'cuMemAlloc*'. Exit status 1 if none matches.\n";

const char ln_help_version[] =
    "usage: cushim version\n"
    "\n"
    "Prints the shim's version, the CUDA headers it was generated from and the plugin SDK ABI version it serves.\n";

const char ln_help_stats[] =
    "usage: cushim stats [--format=table|json] FILE...\n"
    "       cushim stats --close FILE OUT\n"
    "\n"
    "Prints the summary tables of a trace written by 'cushim run --trace' (FILE .json or .json.gz): the CUDA API\n"
    "table with Nsight Systems' cuda_api_sum columns, and with GPU work in it the kernel table (cuda_gpu_kern_sum);\n"
    "first, with NVTX ranges in it, the NVTX range table (nvtx_sum: Style PushPop or StartEnd, Range DOMAIN:MESSAGE,\n"
    ":MESSAGE in the default domain).\n"
    "Given several files (a job's ranks: --trace=t.%q{RANK}.json), one table over all of them.\n"
    "A trace that ends early (its process was killed by SIGKILL or the OOM killer, or left through _exit) is\n"
    "summarised from its complete events, with a warning; --close writes a copy of it to OUT that ends properly\n"
    "(.gz: compressed), for the Perfetto UI and JSON readers.\n"
    "--format=json prints the same tables as one JSON document for scripts: {\"files\":[...],\"nvtx_sum\":[{\"name\",\n"
    "\"style\",...},...],\"cuda_api_sum\":[{\"name\",\"count\",\"total_ns\",\"time_pct\",\"avg_ns\",\"med_ns\",\"min_ns\",\"max_ns\",\n"
    "\"stddev_ns\",\"med_approx\"},...],\n"
    "\"cuda_gpu_kern_sum\":[...],\"cuda_gpu_mem_time_sum\":[...],\"cuda_gpu_mem_size_sum\":[... in bytes]}.\n"
    "With GPU copies and sets in the trace, the memory tables cuda_gpu_mem_time_sum and cuda_gpu_mem_size_sum follow.\n";

const char ln_help_where[] =
    "usage: cushim where\n"
    "\n"
    "Prints the files the launcher uses ('?' when not found): the launcher itself, the shim, the drop-in directory,\n"
    "the fake driver, the shipped plugin directory, the cushim-info helper and the API list. The shim is\n"
    "$CUSHIM_LIB, else the installed one, else a build tree's ($CUSHIM_BUILD_DIR, default the build the launcher\n"
    "was built in: in a checkout tools/cushim runs build/tools/cushim).\n";

const char ln_help_usage[] =
    "usage: cushim usage [--prometheus] [NAME|PATH]\n"
    "\n"
    "The per-process table of a memlimit budget: NAME (/dev/shm/cushim-budget-NAME, what --mem-budget=NAME and\n"
    "budget=NAME use) or the region file at PATH (default: $CUDA_DEVICE_MEMORY_SHARED_CACHE, HAMi's variable).\n"
    "Each live process's slot: pid, command, device, charged bytes, peak, managed and host bytes, refusals; a\n"
    "slot whose process died shows 'dead' until the next process needing room reclaims it.\n"
    "--prometheus prints the Prometheus text format (for node_exporter's textfile collector).\n";
