/*
 * lp_report.h - the report: where print() and cushim.report write (report=, default stderr).
 */
#ifndef LP_REPORT_H
#define LP_REPORT_H

#include <stddef.h>

#include "lp_engine.h"

int lp_report_init(const char *report) LP_HIDDEN;   /* at init: report= (NULL or "": stderr); 0 or -1, logged */
/* 'n' bytes (whole lines) to the report, from any thread */
void lp_report_write(const char *s, size_t n) LP_HIDDEN;
void lp_report_fork_child(void) LP_HIDDEN;

#endif /* LP_REPORT_H */
