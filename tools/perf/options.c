/* Command-line parsing for nereid-perf (see options.h). Table-driven: each
 * flag names its setter; "--flag=value" and "--flag value" both work. */
#include "tools/perf/options.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/perf/seq.h"

typedef bool setter_fn(perf_options_t *o, const char *v, perf_err_t *err);

typedef struct {
  const char *name; /* long name, without "--" */
  char short_name;  /* 0: none */
  bool takes_value;
  setter_fn *set;
} flag_t;

static bool parse_uint(const char *flag, const char *v, unsigned min, unsigned *out,
                       perf_err_t *err) {
  char *end;
  errno = 0;
  unsigned long n = strtoul(v, &end, 10);
  if (errno || end == v || *end || v[0] == '-' || n < min || n > 100000000ul)
    return perf_fail(err, "%s: '%s' is not a whole number >= %u", flag, v, min);
  *out = (unsigned)n;
  return true;
}

static bool parse_double(const char *flag, const char *v, double *out, perf_err_t *err) {
  char *end;
  errno = 0;
  double d = strtod(v, &end);
  if (errno || end == v || *end || !(d > 0))
    return perf_fail(err, "%s: '%s' is not a positive number", flag, v);
  *out = d;
  return true;
}

/* "START[:END[:STEP]]" into three numbers (as text pieces). */
static bool split_range(const char *flag, const char *v, char parts[3][64],
                        perf_err_t *err) {
  size_t n = 0, len = 0;
  memset(parts, 0, 3 * 64);
  for (const char *p = v;; p++) {
    if (*p == ':' || *p == '\0') {
      if (len == 0) return perf_fail(err, "%s: '%s' is not START[:END[:STEP]]", flag, v);
      n++, len = 0;
      if (*p == '\0') break;
      if (n == 3) return perf_fail(err, "%s: '%s' is not START[:END[:STEP]]", flag, v);
      continue;
    }
    if (len == 63) return perf_fail(err, "%s: '%s' is too long", flag, v);
    parts[n][len++] = *p;
  }
  if (n < 2) strcpy(parts[1], parts[0]);
  if (n < 3) strcpy(parts[2], "1");
  return true;
}

static bool set_concurrency(perf_options_t *o, const char *v, perf_err_t *err) {
  char p[3][64];
  const char *f = "--concurrency-range";
  if (!split_range(f, v, p, err) || !parse_uint(f, p[0], 1, &o->conc_start, err) ||
      !parse_uint(f, p[1], 1, &o->conc_end, err) ||
      !parse_uint(f, p[2], 1, &o->conc_step, err))
    return false;
  if (o->conc_end < o->conc_start)
    return perf_fail(err, "%s: END %u is below START %u", f, o->conc_end, o->conc_start);
  return true;
}

static bool set_rate_range(perf_options_t *o, const char *v, perf_err_t *err) {
  char p[3][64];
  const char *f = "--request-rate-range";
  if (!split_range(f, v, p, err) || !parse_double(f, p[0], &o->rate_start, err) ||
      !parse_double(f, p[1], &o->rate_end, err) ||
      !parse_double(f, p[2], &o->rate_step, err))
    return false;
  if (o->rate_end < o->rate_start) return perf_fail(err, "%s: END is below START", f);
  o->rate_mode = true;
  return true;
}

static bool set_rate(perf_options_t *o, const char *v, perf_err_t *err) {
  if (!parse_double("--request-rate", v, &o->rate_start, err)) return false;
  o->rate_end = o->rate_start;
  o->rate_step = 1;
  o->rate_mode = true;
  return true;
}

static bool set_mode(perf_options_t *o, const char *v, perf_err_t *err) {
  for (int m = PERF_UNARY_SYNC; m <= PERF_DECOUPLED; m++) {
    if (strcmp(v, perf_mode_name((perf_mode_t)m)) == 0) {
      o->mode = (perf_mode_t)m;
      return true;
    }
  }
  return perf_fail(err,
                   "--mode: '%s' is not unary-sync, unary-async, stream or decoupled", v);
}

static bool set_distribution(perf_options_t *o, const char *v, perf_err_t *err) {
  if (strcmp(v, "poisson") == 0)
    o->poisson = true;
  else if (strcmp(v, "constant") == 0)
    o->poisson = false;
  else
    return perf_fail(err, "--request-distribution: '%s' is not constant or poisson", v);
  return true;
}

static bool set_shape(perf_options_t *o, const char *v, perf_err_t *err) {
  const char *colon = strrchr(v, ':');
  if (colon == NULL || colon == v)
    return perf_fail(err, "--shape: '%s' is not NAME:d1,d2,...", v);
  perf_shape_opt_t s = {.name = perf_strndup(v, (size_t)(colon - v))};
  const char *p = colon + 1;
  while (*p) {
    char *end;
    errno = 0;
    long long d = strtoll(p, &end, 10);
    if (errno || end == p || d < 0 || (*end && *end != ',') || s.ndims == PERF_MAX_DIMS) {
      free(s.name);
      return perf_fail(err, "--shape: '%s' is not NAME:d1,d2,... (up to %d dims >= 0)", v,
                       PERF_MAX_DIMS);
    }
    s.dims[s.ndims++] = d;
    p = *end ? end + 1 : end;
  }
  o->shapes = perf_realloc(o->shapes, (o->nshapes + 1) * sizeof *o->shapes);
  o->shapes[o->nshapes++] = s;
  return true;
}

static bool set_seed(perf_options_t *o, const char *v, perf_err_t *err) {
  char *end;
  errno = 0;
  unsigned long long n = strtoull(v, &end, 10);
  if (errno || end == v || *end) return perf_fail(err, "--seed: '%s' is not a number", v);
  o->seed = n;
  return true;
}

#define STR_SETTER(fn, field)                                         \
  static bool fn(perf_options_t *o, const char *v, perf_err_t *err) { \
    (void)err;                                                        \
    o->field = v;                                                     \
    return true;                                                      \
  }
STR_SETTER(set_model, model)
STR_SETTER(set_version, version)
STR_SETTER(set_url, url)
STR_SETTER(set_input_data, input_data)
STR_SETTER(set_string_data, string_data)
STR_SETTER(set_csv, csv_path)
STR_SETTER(set_json, json_path)

#define UINT_SETTER(fn, flag, field, min)                             \
  static bool fn(perf_options_t *o, const char *v, perf_err_t *err) { \
    return parse_uint(flag, v, min, &o->field, err);                  \
  }
UINT_SETTER(set_connections, "--connections", connections, 1)
UINT_SETTER(set_inflight, "--inflight", inflight, 1)
UINT_SETTER(set_threads, "--threads", threads, 1)
UINT_SETTER(set_max_inflight, "--max-inflight", max_inflight, 1)
UINT_SETTER(set_interval, "--measurement-interval", interval_ms, 10)
UINT_SETTER(set_trials, "--max-trials", max_trials, 1)
UINT_SETTER(set_batch, "--batch-size", batch_size, 1)
UINT_SETTER(set_string_length, "--string-length", string_length, 1)
UINT_SETTER(set_timeout, "--timeout", timeout_ms, 1)

/* Sequence flags: remembered, so that a model without sequence_batching
 * can refuse them by name. */
static bool seq_given(perf_options_t *o, const char *flag) {
  if (o->seq_flag == NULL) o->seq_flag = flag;
  return true;
}

static bool set_seq_length(perf_options_t *o, const char *v, perf_err_t *err) {
  return parse_uint("--sequence-length", v, 1, &o->seq_length, err) &&
         seq_given(o, "--sequence-length");
}

static bool set_seq_variation(perf_options_t *o, const char *v, perf_err_t *err) {
  const char *f = "--sequence-length-variation";
  if (!parse_uint(f, v, 0, &o->seq_variation, err)) return false;
  if (o->seq_variation > 100)
    return perf_fail(err, "%s: %u is above 100 (percent)", f, o->seq_variation);
  return seq_given(o, f);
}

static bool set_num_sequences(perf_options_t *o, const char *v, perf_err_t *err) {
  return parse_uint("--num-of-sequences", v, 1, &o->num_sequences, err) &&
         seq_given(o, "--num-of-sequences");
}

static bool set_serial_sequences(perf_options_t *o, const char *v, perf_err_t *err) {
  (void)v, (void)err; /* a sequence's steps always go one after another */
  return seq_given(o, "--serial-sequences");
}

static bool parse_id(const char *v, const char *end_at, uint64_t *out) {
  char *end;
  errno = 0;
  unsigned long long n = strtoull(v, &end, 10);
  if (errno || end == v || end != end_at || v[0] == '-' || n == 0 || n > PERF_SEQ_ID_MAX)
    return false;
  *out = n;
  return true;
}

/* "START[:END]", END excluded, as perf_analyzer's. */
static bool set_seq_id_range(perf_options_t *o, const char *v, perf_err_t *err) {
  const char *f = "--sequence-id-range", *colon = strchr(v, ':');
  uint64_t start, end = 0;
  if (!parse_id(v, colon ? colon : v + strlen(v), &start) ||
      (colon && !parse_id(colon + 1, colon + 1 + strlen(colon + 1), &end)))
    return perf_fail(err, "%s: '%s' is not START[:END] (whole numbers from 1 to %llu)", f,
                     v, (unsigned long long)PERF_SEQ_ID_MAX);
  if (colon && end <= start)
    return perf_fail(err, "%s: END %llu is not above START %llu (END is excluded)", f,
                     (unsigned long long)end, (unsigned long long)start);
  o->seq_id_start = start;
  o->seq_id_end = end;
  return seq_given(o, f);
}

/* perf_analyzer's names; cuda is refused here, before anything is made. */
static bool set_shared_memory(perf_options_t *o, const char *v, perf_err_t *err) {
  if (strcmp(v, "none") == 0)
    o->shared_memory = PERF_SHM_NONE;
  else if (strcmp(v, "system") == 0)
    o->shared_memory = PERF_SHM_SYSTEM;
  else if (strcmp(v, "cuda") == 0)
    return perf_fail(err,
                     "--shared-memory cuda: nereid-perf has no CUDA client support "
                     "(use none or system, or Triton's perf_analyzer for CUDA regions)");
  else
    return perf_fail(err, "--shared-memory: '%s' is not none, system or cuda", v);
  return true;
}

static bool set_output_shm_size(perf_options_t *o, const char *v, perf_err_t *err) {
  char *end;
  errno = 0;
  unsigned long long n = strtoull(v, &end, 10);
  if (errno || end == v || *end || v[0] == '-' || n == 0 || n > (1ull << 40))
    return perf_fail(err,
                     "--output-shared-memory-size: '%s' is not a byte count from 1 to "
                     "2^40",
                     v);
  o->output_shm_size = n;
  return true;
}

static bool set_stability(perf_options_t *o, const char *v, perf_err_t *err) {
  return parse_double("--stability-percentage", v, &o->stability_pct, err);
}

static bool set_progress(perf_options_t *o, const char *v, perf_err_t *err) {
  (void)v, (void)err;
  o->progress = true;
  return true;
}

static const flag_t flags[] = {
    {"model", 'm', true, set_model},
    {"model-version", 'x', true, set_version},
    {"url", 'u', true, set_url},
    {"mode", 0, true, set_mode},
    {"concurrency-range", 0, true, set_concurrency},
    {"request-rate", 0, true, set_rate},
    {"request-rate-range", 0, true, set_rate_range},
    {"request-distribution", 0, true, set_distribution},
    {"connections", 0, true, set_connections},
    {"inflight", 0, true, set_inflight},
    {"threads", 0, true, set_threads},
    {"max-inflight", 0, true, set_max_inflight},
    {"measurement-interval", 'p', true, set_interval},
    {"stability-percentage", 's', true, set_stability},
    {"max-trials", 'r', true, set_trials},
    {"batch-size", 'b', true, set_batch},
    {"shape", 0, true, set_shape},
    {"input-data", 0, true, set_input_data},
    {"seed", 0, true, set_seed},
    {"string-length", 0, true, set_string_length},
    {"string-data", 0, true, set_string_data},
    {"timeout", 0, true, set_timeout},
    {"csv", 'f', true, set_csv},
    {"json", 0, true, set_json},
    {"progress", 0, false, set_progress},
    {"sequence-length", 0, true, set_seq_length},
    {"sequence-length-variation", 0, true, set_seq_variation},
    {"sequence-id-range", 0, true, set_seq_id_range},
    {"num-of-sequences", 0, true, set_num_sequences},
    {"serial-sequences", 0, false, set_serial_sequences},
    {"shared-memory", 0, true, set_shared_memory},
    {"output-shared-memory-size", 0, true, set_output_shm_size},
};

static void defaults(perf_options_t *o) {
  memset(o, 0, sizeof *o);
  o->version = "";
  o->url = "localhost:8001";
  o->mode = PERF_UNARY_SYNC;
  o->conc_start = o->conc_end = o->conc_step = 1;
  o->threads = 2;
  o->max_inflight = 16384;
  o->interval_ms = 2000;
  o->stability_pct = 10;
  o->max_trials = 10;
  o->batch_size = 1;
  o->input_data = "random";
  o->string_length = 4;
  o->timeout_ms = 10000;
  o->progress = isatty(2);
  o->seq_length = 20;
  o->seq_variation = 20;
  o->seq_id_start = 1;
  o->num_sequences = 4;
  o->shared_memory = PERF_SHM_NONE;
  o->output_shm_size = 102400; /* perf_analyzer's default */
}

static const flag_t *flag_find(const char *arg, size_t len) {
  for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
    const flag_t *f = &flags[i];
    if (arg[1] != '-' && len == 2 && f->short_name == arg[1]) return f;
    if (arg[1] == '-' && strlen(f->name) == len - 2 &&
        memcmp(arg + 2, f->name, len - 2) == 0)
      return f;
  }
  return NULL;
}

int perf_options_parse(perf_options_t *o, int argc, char **argv, perf_err_t *err) {
  defaults(o);
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
      perf_options_usage(stdout);
      return 1;
    }
    if (arg[0] != '-' || arg[1] == '\0')
      return (perf_fail(err, "unexpected argument '%s' (see --help)", arg), -1);
    const char *eq = arg[1] == '-' ? strchr(arg, '=') : NULL;
    size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
    const flag_t *f = flag_find(arg, len);
    if (f == NULL)
      return (perf_fail(err, "unknown flag '%.*s' (see --help)", (int)len, arg), -1);
    const char *value = eq ? eq + 1 : NULL;
    if (f->takes_value && value == NULL) {
      if (i + 1 == argc) return (perf_fail(err, "%s needs a value", arg), -1);
      value = argv[++i];
    } else if (!f->takes_value && value != NULL) {
      return (perf_fail(err, "--%s takes no value", f->name), -1);
    }
    if (!f->set(o, value, err)) return -1;
  }
  if (o->model == NULL) return (perf_fail(err, "-m MODEL is required (see --help)"), -1);
  return 0;
}

void perf_options_free(perf_options_t *o) {
  for (size_t i = 0; i < o->nshapes; i++) free(o->shapes[i].name);
  free(o->shapes);
  o->shapes = NULL;
  o->nshapes = 0;
}

const char *perf_shm_mode_name(perf_shm_mode_t mode) {
  return mode == PERF_SHM_SYSTEM ? "system" : "none";
}

const char *perf_mode_name(perf_mode_t mode) {
  switch (mode) {
    case PERF_UNARY_SYNC:
      return "unary-sync";
    case PERF_UNARY_ASYNC:
      return "unary-async";
    case PERF_STREAM:
      return "stream";
    case PERF_DECOUPLED:
      return "decoupled";
  }
  return "?";
}

void perf_options_usage(FILE *f) {
  fputs(
      "usage: nereid-perf -m MODEL [flags]\n"
      "Load generator for inference.GRPCInferenceService (Triton's gRPC protocol).\n"
      "\n"
      "  -m, --model NAME              model to load (required)\n"
      "  -x, --model-version V         version (default: the server's policy)\n"
      "  -u, --url HOST:PORT           server (default localhost:8001)\n"
      "  --mode MODE                   unary-sync (default), unary-async, stream,\n"
      "                                decoupled\n"
      "  --concurrency-range S[:E[:T]] requests in flight, swept S..E by T (1:1:1)\n"
      "  --request-rate R              open loop: R requests/s, latency from the\n"
      "                                scheduled send time\n"
      "  --request-rate-range S:E:T    open loop, swept\n"
      "  --request-distribution D      constant (default) or poisson\n"
      "  --connections K               gRPC channels (default min(concurrency, 4))\n"
      "  --inflight N                  unary-async: N per connection; stream and\n"
      "                                decoupled: N per stream\n"
      "  --threads T                   completion-queue threads (default 2)\n"
      "  --max-inflight N              open loop: cap on requests in flight (16384)\n"
      "  -p, --measurement-interval MS window length (default 2000)\n"
      "  -s, --stability-percentage P  3 windows within P% (default 10)\n"
      "  -r, --max-trials N            windows at most per level (default 10)\n"
      "  -b, --batch-size B            batch size (models with max_batch_size > 0)\n"
      "  --shape NAME:d1,d2,...        shape of an input, without the batch dim\n"
      "  --input-data random|zero|FILE random (default), zeros, or perf_analyzer's\n"
      "                                JSON format\n"
      "  --seed N                      random data seed (default 0)\n"
      "  --string-length N             random BYTES: N decimal digits (default 4)\n"
      "  --string-data S               BYTES elements: S\n"
      "  --timeout MS                  metadata/config/statistics RPCs (10000)\n"
      "  -f, --csv FILE                write the results as CSV\n"
      "  --json FILE                   write the results as JSON\n"
      "  --progress                    progress line on stderr (default: if a tty)\n"
      "  --shared-memory none|system   tensors in the messages (none, default) or in\n"
      "                                POSIX shared-memory regions registered with\n"
      "                                the server, one per input and per output\n"
      "                                (system); cuda is not supported\n"
      "  --output-shared-memory-size B bytes of each output's region (102400)\n"
      "\n"
      "Sequence models (sequence_batching): each of the concurrency's clients runs\n"
      "sequences one after another, a step sent after the last one's response\n"
      "  --sequence-length L           steps per sequence (default 20)\n"
      "  --sequence-length-variation P lengths drawn within L +/- P% (default 20)\n"
      "  --sequence-id-range S[:E]     ids from S (default 1) up to E, excluded\n"
      "                                (default: no end)\n"
      "  --num-of-sequences N          open loop: sequences kept at once (default 4)\n"
      "  --serial-sequences            accepted; always so\n"
      "\n"
      "Exit status: 0 all requests succeeded, 2 some failed (they are reported),\n"
      "1 the run could not be made.\n",
      f);
}
