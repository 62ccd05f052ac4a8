/* The load: worker threads, each with its own completion queue, that keep
 * requests in flight (closed loop) or send them on a schedule (open loop)
 * and record what they see into their own window. The main thread starts
 * it, takes the windows at each boundary, and stops it; see README.md for
 * how calls, streams, connections and threads relate. */
#ifndef NEREID_TOOLS_PERF_LOAD_H
#define NEREID_TOOLS_PERF_LOAD_H

#include <stdbool.h>
#include <stdint.h>

#include "tools/perf/common.h"
#include "tools/perf/inputs.h"
#include "tools/perf/options.h"
#include "tools/perf/seq.h"
#include "tools/perf/window.h"

typedef struct perf_load perf_load_t;

typedef struct {
  perf_mode_t mode;
  const char *url;
  const perf_requests_t *requests; /* outlives the load */
  unsigned concurrency;  /* closed loop: requests in flight in all; 0: open loop */
  double rate;           /* open loop: requests per second in all */
  bool poisson;          /* open loop: exponential gaps instead of constant ones */
  unsigned connections;  /* gRPC channels, each its own TCP connection */
  unsigned streams;      /* stream modes: ModelStreamInfer calls */
  unsigned threads;      /* workers, each with a completion queue */
  unsigned max_inflight; /* open loop: cap on requests in flight, over all workers */
  uint64_t seed;
  /* Sequence mode: requests go in sequences (seq.h), a lane per client in
   * closed loop, --num-of-sequences lanes in open loop. */
  bool sequences;
  perf_seq_plan_t seq;
} perf_load_config_t;

/** Fills the connections, streams and threads of cfg for one level
 *  (concurrency, or rate in open loop) from the options, and in sequence
 *  mode (cfg->sequences and cfg->seq set by the caller) the lanes; fails
 *  on flags that contradict each other or an id range too small. */
bool perf_load_plan(const perf_options_t *o, unsigned concurrency, double rate,
                    perf_load_config_t *cfg, perf_err_t *err);

/** Creates the channels, starts the workers; they start sending at once.
 *  Main thread. */
perf_load_t *perf_load_start(const perf_load_config_t *cfg);

/** The window boundary: moves every worker's window into `into` (reset
 *  first), so that the workers start a new one. Main thread; takes each
 *  worker's lock briefly. */
void perf_load_collect(perf_load_t *l, perf_window_t *into);

/** Stops sending, lets the requests in flight finish (cancelling them
 *  after PERF_DRAIN_NS), closes the streams and joins the workers. What
 *  they saw since the last collect can still be collected. Main thread. */
void perf_load_stop(perf_load_t *l);

/** Frees a stopped load: channels included. */
void perf_load_free(perf_load_t *l);

#define PERF_DRAIN_NS (10ull * 1000000000ull)

#endif
