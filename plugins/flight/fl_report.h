/*
 * fl_report.h - a flight recorder file as 'cushim flight dump' shows it: the text summary, or a Perfetto/Chrome
 * trace-event JSON file (fl_report.c). Host-free: names and parameters come from the metadata the tool links.
 */
#ifndef FL_REPORT_H
#define FL_REPORT_H

#include <stdio.h>

#include "fl_read.h"

/* 'json': the trace-event JSON, else the text summary; 'alive': the process that writes it still runs. 0, or -1
   (out of memory, a write error). */
int fl_report(FILE *out, const fl_file *f, int json, int alive);

#endif
