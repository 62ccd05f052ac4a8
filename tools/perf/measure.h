/* One level of a sweep (a concurrency, or a request rate): runs the load,
 * measures windows until three in a row agree (throughput and p50 within
 * --stability-percentage) or --max-trials windows, and reports the last
 * three together, with the server's statistics over the same windows.
 * Main thread. */
#ifndef NEREID_TOOLS_PERF_MEASURE_H
#define NEREID_TOOLS_PERF_MEASURE_H

#include <grpc/grpc.h>
#include <stdbool.h>
#include <stdint.h>

#include "tools/perf/load.h"
#include "tools/perf/model.h"
#include "tools/perf/options.h"
#include "tools/perf/window.h"

#define PERF_STABLE_WINDOWS 3

typedef struct {
  perf_load_config_t plan;
  /* Over the reported (last three) windows. */
  unsigned windows; /* windows measured in all */
  bool stable;
  double elapsed_s;
  uint64_t completed, responses, sequences;
  double infer_per_s, responses_per_s, sequences_per_s;
  double avg_us, min_us, p50_us, p90_us, p95_us, p99_us, max_us;
  /* Open loop: how late the generator sent, on average and at worst
   * (latencies count from the scheduled time, so they include this). */
  double send_late_avg_us, send_late_max_us;
  /* Server side, per request, over the same windows (server_ok false when
   * ModelStatistics failed; server_error says why). */
  bool server_ok;
  char server_error[256];
  perf_server_stats_t server;
  double queue_us, compute_input_us, compute_infer_us, compute_output_us, overhead_us;
  /* Over the whole level, warm-up and drain included: nothing is hidden. */
  uint64_t errors, delayed;
  perf_errors_t error_list;
} perf_result_t;

/** Runs one level with load configuration cfg (see perf_load_plan). The
 *  control channel carries the ModelStatistics calls. */
void perf_measure_level(const perf_options_t *o, const perf_load_config_t *cfg,
                        grpc_channel *control, perf_result_t *res);

void perf_result_free(perf_result_t *res);

#endif
