/* nereid-perf's command line: flags in the style of Triton's perf_analyzer,
 * parsed once on the main thread; read-only afterwards. */
#ifndef NEREID_TOOLS_PERF_OPTIONS_H
#define NEREID_TOOLS_PERF_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "tools/perf/common.h"

#define PERF_MAX_DIMS 8

typedef enum {
  PERF_UNARY_SYNC,  /* C clients, each one ModelInfer at a time */
  PERF_UNARY_ASYNC, /* C ModelInfer calls in flight over the connections */
  PERF_STREAM,      /* ModelStreamInfer, one response per request */
  PERF_DECOUPLED,   /* ModelStreamInfer on a decoupled model */
} perf_mode_t;

/** --shared-memory: where tensors travel. */
typedef enum {
  PERF_SHM_NONE,   /* in the gRPC messages (raw_input_contents) */
  PERF_SHM_SYSTEM, /* POSIX shared-memory regions registered with the server */
} perf_shm_mode_t;

/** One --shape NAME:d1,d2,... (without the batch dimension). */
typedef struct {
  char *name;
  int64_t dims[PERF_MAX_DIMS];
  size_t ndims;
} perf_shape_opt_t;

typedef struct {
  const char *model;   /* -m */
  const char *version; /* -x; "" lets the server's version policy pick */
  const char *url;     /* -u HOST:PORT */
  perf_mode_t mode;
  /* Closed loop: --concurrency-range START:END:STEP. */
  unsigned conc_start, conc_end, conc_step;
  /* Open loop: --request-rate R or --request-rate-range START:END:STEP. */
  bool rate_mode;
  double rate_start, rate_end, rate_step;
  bool poisson;          /* --request-distribution poisson */
  unsigned connections;  /* 0: the mode's default */
  unsigned inflight;     /* 0: not given */
  unsigned threads;      /* completion-queue threads (async and stream modes) */
  unsigned max_inflight; /* open loop: cap on requests in flight */
  unsigned interval_ms;  /* -p */
  double stability_pct;  /* -s */
  unsigned max_trials;   /* -r */
  unsigned batch_size;   /* -b */
  perf_shape_opt_t *shapes;
  size_t nshapes;
  const char *input_data; /* "random", "zero" or a JSON file */
  uint64_t seed;
  unsigned string_length;  /* random BYTES elements: this many decimal digits */
  const char *string_data; /* BYTES elements: this string instead */
  const char *csv_path;    /* -f */
  const char *json_path;   /* --json */
  bool progress;           /* --progress, or stderr is a terminal */
  unsigned timeout_ms;     /* control RPCs: metadata, config, statistics */
  /* Sequence mode, on models with sequence_batching (perf_analyzer's flags). */
  unsigned seq_length;    /* --sequence-length: steps per sequence (20) */
  unsigned seq_variation; /* --sequence-length-variation: percent either way (20) */
  uint64_t seq_id_start;  /* --sequence-id-range START (1) */
  uint64_t seq_id_end;    /* its END, excluded; 0: none */
  unsigned num_sequences; /* --num-of-sequences: open loop's live sequences (4) */
  const char *seq_flag;   /* the first sequence flag given, NULL: none */
  /* Shared memory (perf_analyzer's flags): --shared-memory none|system, and
   * the size of each output's region (--output-shared-memory-size). */
  perf_shm_mode_t shared_memory;
  uint64_t output_shm_size;
} perf_options_t;

/** Parses argv. Returns 0 to run, 1 after --help (usage printed on
 *  stdout), -1 on a bad flag (err says which). o must be freed with
 *  perf_options_free either way. */
int perf_options_parse(perf_options_t *o, int argc, char **argv, perf_err_t *err);

void perf_options_free(perf_options_t *o);

void perf_options_usage(FILE *f);

/** "none", "system". */
const char *perf_shm_mode_name(perf_shm_mode_t mode);

/** "unary-sync", "unary-async", "stream", "decoupled". */
const char *perf_mode_name(perf_mode_t mode);

#endif
