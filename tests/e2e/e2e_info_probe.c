/*
 * e2e_info_probe.c - a plugin whose definition is wrong in one way or another, for 'cushim plugins'
 * (tools/cushim-info.c) against the shim's loader (tests/e2e/run_info.sh): each build must be refused by both,
 * for the same reason. Built several times (tests/e2e/info.cmake) with one switch each:
 *   INFO_NAME="..."        the plugin's name (a bad one: not [a-z0-9_-]{1,63})
 *   INFO_DEF_SIZE=N        the definition's size field
 *   INFO_ABI=V             the SDK ABI it says it was built for
 *   INFO_BAD_DEFAULT       option 'limit' (bytes) defaults to "lots"
 *   INFO_BAD_INT_DEFAULT   option 'count' (int) defaults to "0x" (no digits)
 *   INFO_DUP_OPTION        option 'limit' declared twice
 *   INFO_BAD_OPTION_NAME   an option named "Bad-Name" (upper case)
 *   INFO_EMPTY_OPTION_NAME an option named ""
 *   INFO_BAD_TYPE          an option of type 9
 *   INFO_BAD_FLAGS         an option of type string with an unknown flag (0x400)
 * Without a switch it is a good plugin (init registers nothing and returns 0).
 */
#include "cushim/cushim.h"

#ifndef INFO_NAME
#define INFO_NAME "info-probe"
#endif
#ifndef INFO_DEF_SIZE
#define INFO_DEF_SIZE sizeof(cushim_plugin_def)
#endif
#ifndef INFO_ABI
#define INFO_ABI CUSHIM_ABI_VERSION
#endif

static int info_init(const cushim_host *host, cushim_plugin *self)
{
    (void)host, (void)self;
    return 0;
}

static const cushim_option info_options[] = {
    {.name = "out", .type = CUSHIM_OPT_STRING, .help = "a string"},
#ifdef INFO_BAD_INT_DEFAULT
    {.name = "count", .type = CUSHIM_OPT_INT, .default_value = "0x", .help = "an int"},
#else
    {.name = "count", .type = CUSHIM_OPT_INT, .default_value = "-0x7f", .help = "an int"},
#endif
    {.name = "on", .type = CUSHIM_OPT_BOOL, .default_value = "Off", .help = "a bool"},
    {.name = "ratio", .type = CUSHIM_OPT_DOUBLE, .default_value = "1e-3", .help = "a double"},
#ifdef INFO_BAD_DEFAULT
    {.name = "limit", .type = CUSHIM_OPT_BYTES, .default_value = "lots", .help = "bytes"},
#else
    {.name = "limit", .type = CUSHIM_OPT_BYTES, .default_value = "1.5GiB", .help = "bytes"},
#endif
#ifdef INFO_DUP_OPTION
    {.name = "limit", .type = CUSHIM_OPT_BYTES, .help = "bytes, again"},
#endif
#ifdef INFO_BAD_OPTION_NAME
    {.name = "Bad-Name", .type = CUSHIM_OPT_STRING, .help = "upper case"},
#endif
#ifdef INFO_EMPTY_OPTION_NAME
    {.name = "", .type = CUSHIM_OPT_STRING, .help = "no name"},
#endif
#ifdef INFO_BAD_TYPE
    {.name = "kind", .type = 9, .help = "no such type"},
#endif
#ifdef INFO_BAD_FLAGS
    {.name = "tag", .type = CUSHIM_OPT_STRING | CUSHIM_OPT_REPEAT | 0x400u, .help = "an unknown flag"},
#endif
    {.name = NULL},
};

static const cushim_plugin_def info_def = {
    .size = INFO_DEF_SIZE,
    .abi_version = INFO_ABI,
    .name = INFO_NAME,
    .version = "1.0",
    .description = "test probe: a definition cushim plugins and the loader must judge alike",
    .options = info_options,
    .init = info_init,
};

CUSHIM_PLUGIN(info_def)
