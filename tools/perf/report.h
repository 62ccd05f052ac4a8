/* nereid-perf's output: a block per level as it finishes, a summary table
 * at the end (stdout), and the CSV and JSON files. Main thread. */
#ifndef NEREID_TOOLS_PERF_REPORT_H
#define NEREID_TOOLS_PERF_REPORT_H

#include <stdio.h>

#include "tools/perf/inputs.h"
#include "tools/perf/measure.h"
#include "tools/perf/model.h"
#include "tools/perf/options.h"

/** What is about to run: model, mode, inputs, windows. */
void perf_report_header(FILE *f, const perf_options_t *o, const perf_model_t *m,
                        const perf_requests_t *r);

/** One finished level, errors (all distinct messages kept) included. */
void perf_report_level(FILE *f, const perf_options_t *o, const perf_result_t *r);

/** One row per level. */
void perf_report_table(FILE *f, const perf_options_t *o, const perf_result_t *rs,
                       size_t n);

bool perf_report_csv(const char *path, const perf_options_t *o, const perf_result_t *rs,
                     size_t n, perf_err_t *err);

bool perf_report_json(const char *path, const perf_options_t *o, const perf_model_t *m,
                      const perf_result_t *rs, size_t n, perf_err_t *err);

#endif
