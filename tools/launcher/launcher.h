/*
 * launcher.h - what the modules of the compiled launcher (tools/launcher/, docs/launcher.md) share: the files
 * it uses (paths.c), its subcommands (main.c, commands.c, run.c), usage errors, growable strings and the value
 * helpers (util.c), the CUSHIM_PLUGINS syntax (spec.c), and the plugin flags derived from the options the
 * shipped plugins declare (options.c, optval.c). Internal names carry the prefix 'ln_'.
 */
#ifndef CUSHIM_LAUNCHER_H
#define CUSHIM_LAUNCHER_H

#include <stddef.h>
#include <stdio.h>

#include <cushim/cushim.h>

#define LN_PROG "cushim"

/* ---- the files the launcher uses (paths.c); NULL where not found ---- */
typedef struct ln_where {
    char *exe;        /* this program, from /proc/self/exe                                      */
    char *build;      /* the build tree looked in: $CUSHIM_BUILD_DIR, else the default          */
    char *shim;       /* libcushim.so: $CUSHIM_LIB, the installed one, the build tree's          */
    char *dropin;     /* the drop-in directory (libcuda.so.1 that is the shim)                 */
    char *fake;       /* the directory of the bundled fake libcuda.so.1                         */
    char *plugindir;  /* the shipped plugins, as the shim looks up a NAME                      */
    char *info;       /* the cushim-info helper (plugins, version, select)                      */
    char *stats;      /* the cushim-stats helper                                                */
    char *usage;      /* memlimit's cushim-usage helper                                         */
    char *apis;       /* apis.tsv, the interposed APIs of this build                           */
    char *serve;      /* cushim-serve, the remoting's server (cushim serve, cushim apis --remote) */
    char *flight;     /* the flight recorder's cushim-flight helper (cushim flight)             */
    char *limit;      /* memlimit's cushim-limit helper (cushim limit)                          */
} ln_where;

void ln_where_find(ln_where *w);

/* The install layout (layout.c, compiled once per copy: the build tree's and the installed one). */
extern const char ln_inst_lib[], ln_inst_libexec[], ln_inst_data[], ln_default_build[];

/* ---- subcommands (main.c holds the table) ---- */
typedef struct ln_command {
    const char *name;
    int (*run)(const ln_where *w, int argc, char **argv);   /* argv: the arguments after the name */
    const char *help;                                      /* its usage text; the synopsis ends at a blank line */
    void (*help_more)(const ln_where *w, FILE *f);          /* printed after 'help', may be NULL */
} ln_command;

const ln_command *ln_command_find(const char *name);
void ln_help(const ln_where *w, const ln_command *c, FILE *f);
/* A usage error of command CMD ("main" for the launcher itself): the message, the command's synopsis and where
   to read more, on stderr; exit status 2. */
_Noreturn void ln_bad(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Any other refusal: "cushim: MESSAGE" on stderr, exit status 2. */
_Noreturn void ln_die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Replaces the launcher by the helper program HELPER (cushim-info, -stats, -usage, -flight, -limit) with ARGV,
   argv[0] set here (commands.c); 126 or 127 with one line when it cannot run. */
_Noreturn void ln_exec_helper(const char *helper, char **argv);
/* -h/--help prints CMD's usage and exits 0; another option is a usage error; anything else returns. */
void ln_help_or_bad(const ln_where *w, const char *cmd, const char *arg);

int ln_cmd_run(const ln_where *w, int argc, char **argv);
int ln_cmd_plugins(const ln_where *w, int argc, char **argv);
int ln_cmd_apis(const ln_where *w, int argc, char **argv);
int ln_cmd_version(const ln_where *w, int argc, char **argv);
int ln_cmd_where(const ln_where *w, int argc, char **argv);
int ln_cmd_stats(const ln_where *w, int argc, char **argv);
int ln_cmd_usage(const ln_where *w, int argc, char **argv);
int ln_cmd_flight(const ln_where *w, int argc, char **argv);   /* flight.c, with its usage text */
int ln_cmd_serve(const ln_where *w, int argc, char **argv);    /* serve.c */
int ln_cmd_limit(const ln_where *w, int argc, char **argv);    /* limit.c, with its usage text */
extern const char ln_help_flight[], ln_help_limit[];

/* Usage texts (help.c). */
extern const char ln_help_main[], ln_help_run[], ln_help_plugins[], ln_help_apis[], ln_help_version[],
    ln_help_stats[], ln_help_where[], ln_help_usage[], ln_help_serve[];
void ln_help_run_more(const ln_where *w, FILE *f);

/* ---- growable strings and values (util.c) ---- */
typedef struct ln_str {
    char *s;   /* NUL-terminated; NULL until something is added */
    size_t len, cap;
} ln_str;

void ln_str_addn(ln_str *b, const char *s, size_t n);
void ln_str_add(ln_str *b, const char *s);
void ln_str_addc(ln_str *b, char c);
void ln_str_addf(ln_str *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *ln_str_get(const ln_str *b);   /* "" while empty */
char *ln_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *ln_strdup(const char *s);
char *ln_strndup(const char *s, size_t n);
void *ln_alloc(size_t n);
void *ln_grow(void *p, size_t n);

int ln_has_cntrl(const char *s);          /* a byte below 0x20 or DEL */
char *ln_shown(const char *v);            /* 'v' quoted, its control characters written \xNN */
const char *ln_pwd(void);                 /* the working directory as the shell names it ($PWD when it is ".") */
/* PATH made absolute against the working directory ($PWD/PATH without leading './'); LABEL names the option
   in the refusal of a working directory whose name has a control character. */
char *ln_absolute(const char *label, const char *path);
char *ln_clean_path(const char *path);    /* absolute, '.' '..' and '//' removed lexically (realpath -s) */
int ln_exists(const char *path);
int ln_is_file(const char *path);         /* a regular file, links followed ('test -f') */

/* ---- CUSHIM_PLUGINS syntax (spec.c) ---- */
void ln_escape_value(ln_str *out, const char *v);   /* ',' ';' '\' escaped, trailing spaces as '\ ' */
void ln_escape_path(ln_str *out, const char *v);    /* and ':' too: a path inside NAME-OR-PATH */
int ln_ends_in_escape(const char *s, size_t n);      /* an odd number of '\' at the end */
int ln_loads_plugin(const char *list, const char *name);
char *ln_plugins_join(const char *old, const char *ours);
char *ln_plugin_arg(const ln_where *w, const char *arg);   /* one --plugin=SPEC, checked */

/* One spec the launcher composes: PLUGIN:KEY=VALUE,... (values escaped). A non-repeatable key given again
   takes the new value in its place; a repeatable one is added. */
typedef struct ln_item {
    char *key, *value;   /* value escaped for CUSHIM_PLUGINS */
    char *raw;           /* value as given (after being made absolute) */
    char *flag;          /* the flag that gave it, for messages */
    int repeat;          /* the option is repeatable */
} ln_item;

typedef struct ln_spec {
    char *plugin;        /* a shipped plugin's name; NULL: 'text' is a --plugin spec as given */
    char *text;
    ln_item *items;
    size_t n, cap;
    int derived_only;    /* lua: flags without a --lua=FILE of their own (joined to the one --lua) */
} ln_spec;

void ln_spec_set(ln_spec *s, const char *flag, const char *key, const char *raw, int repeat);
const ln_item *ln_spec_get(const ln_spec *s, const char *key);
void ln_spec_text(ln_str *out, const ln_spec *s);

/* ---- the shipped plugins and the flags derived from their options (options.c, optval.c) ---- */
typedef struct ln_plugin {
    char *name;      /* NAME of NAME.so, what a spec names */
    char *path;
    void *handle;    /* dlopen'ed when first needed, never initialised */
    const cushim_plugin_def *def;
    char *why;       /* why its definition could not be read */
    int tried;
} ln_plugin;

typedef struct ln_plugins {
    ln_plugin *v;
    size_t n;
} ln_plugins;

void ln_plugins_scan(ln_plugins *ps, const char *plugindir);
ln_plugin *ln_plugins_find(ln_plugins *ps, const char *name);
const cushim_plugin_def *ln_plugin_def(ln_plugin *p);   /* NULL: p->why says why */
const cushim_option *ln_plugin_option(ln_plugin *p, const char *name);

typedef struct ln_flag {
    ln_plugin *plugin;
    const cushim_option *opt;
    char *name;          /* the flag as written, without '=VALUE' */
    const char *value;   /* NULL when no '=' was given */
} ln_flag;

/* ARG (--PLUGIN-OPTION[=VALUE], '-' and '_' alike) as a derived flag: 1 and *f filled, or 0 when no shipped
   plugin declares it (*why then says what was looked at, "" if nothing). */
int ln_flag_match(ln_plugins *ps, const char *arg, ln_flag *f, char *why, size_t whylen);
/* The value for option O of PLUGIN given by LABEL: checked against the declared type (and the stricter checks
   kept for options the launcher always had), made absolute for a path option; a usage error otherwise. */
char *ln_option_value(const char *label, const char *plugin, const cushim_option *o, const char *v);
int ln_option_is_selector(const char *plugin, const char *option);
void ln_plugins_help(ln_plugins *ps, FILE *f);

#endif
