/*
 * rt_internal.h - every header of the runtime at once, for the whitebox tests
 * (tests/unit, tests/fuzz) only. No file of runtime/ includes it: each
 * includes the headers of the modules it uses, so that its includes are its
 * dependencies (docs/architecture.md, "Layers"; tools/check-layers.py).
 */
#ifndef RT_INTERNAL_H
#define RT_INTERNAL_H

#include "base.h"
#include "api.h"
#include "types.h"
#include "roles.h"
#include "libs.h"
#include "once.h"
#include "log.h"
#include "env.h"
#include "config.h"
#include "elfsym.h"
#include "objects.h"
#include "realdl.h"
#include "ldcache.h"
#include "driver.h"
#include "layers.h"
#include "copies.h"
#include "clock.h"
#include "unwind.h"
#include "thread.h"
#include "epoch.h"
#include "select.h"
#include "options.h"
#include "optvalue.h"
#include "counts.h"
#include "slots.h"
#include "hooks.h"
#include "wrapper_table.h"
#include "dispatch.h"
#include "invoke.h"
#include "getproc.h"
#include "module.h"
#include "lifecycle.h"
#include "plugins.h"
#include "host.h"
#include "loader.h"
#include "dlsym.h"

#endif /* RT_INTERNAL_H */
