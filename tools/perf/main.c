/* nereid-perf: a load generator for inference.GRPCInferenceService in the
 * spirit of Triton's perf_analyzer (see README.md). The main thread
 * fetches the model, builds the requests, then runs each level of the
 * sweep and reports; the load's workers do the sending (load.h). */
#include <grpc/grpc.h>
#include <stdio.h>
#include <stdlib.h>

#include "tools/perf/inputs.h"
#include "tools/perf/load.h"
#include "tools/perf/measure.h"
#include "tools/perf/model.h"
#include "tools/perf/options.h"
#include "tools/perf/report.h"
#include "tools/perf/rpc.h"
#include "tools/perf/shm.h"

static bool mode_check(const perf_options_t *o, const perf_model_t *m, perf_err_t *err) {
  if (m->decoupled && o->mode != PERF_DECOUPLED)
    return perf_fail(err, "model %s is decoupled: use --mode decoupled", o->model);
  if (!m->sequence && o->seq_flag != NULL)
    return perf_fail(err, "%s is for sequence models: model %s has no sequence_batching",
                     o->seq_flag, o->model);
  if (m->sequence && o->batch_size != 1)
    return perf_fail(err,
                     "model %s is a sequence model: its requests carry one step each "
                     "(--batch-size 1)",
                     o->model);
  return true;
}

/* Sequence mode's plan, but the lanes (set per level): every request of a
 * sequence model belongs to a sequence, as with perf_analyzer. */
static perf_seq_plan_t seq_plan(const perf_options_t *o, const perf_model_t *m) {
  return (perf_seq_plan_t){.length = o->seq_length,
                           .variation = o->seq_variation,
                           .id_start = o->seq_id_start,
                           .id_end = o->seq_id_end,
                           .string_ids = m->string_ids};
}

/* The sweep's levels: concurrencies, or rates (concurrency 0). */
static size_t levels(const perf_options_t *o, unsigned **conc, double **rate) {
  size_t n = 0, cap = 16;
  *conc = perf_malloc(cap * sizeof **conc);
  *rate = perf_malloc(cap * sizeof **rate);
  for (unsigned k = 0;; k++) {
    unsigned c = o->rate_mode ? 0 : o->conc_start + k * o->conc_step;
    double r = o->rate_mode ? o->rate_start + k * o->rate_step : 0;
    if (o->rate_mode ? r > o->rate_end * (1 + 1e-9) : c > o->conc_end) break;
    if (n == cap) {
      cap *= 2;
      *conc = perf_realloc(*conc, cap * sizeof **conc);
      *rate = perf_realloc(*rate, cap * sizeof **rate);
    }
    (*conc)[n] = c;
    (*rate)[n++] = r;
  }
  return n;
}

static int sweep(const perf_options_t *o, const perf_model_t *m,
                 const perf_requests_t *reqs, grpc_channel *control) {
  unsigned *conc;
  double *rate;
  size_t n = levels(o, &conc, &rate), done = 0;
  perf_result_t *rs = perf_calloc(n, sizeof *rs);
  perf_err_t err;
  int status = 0;
  perf_report_header(stdout, o, m, reqs);
  for (; done < n; done++) {
    perf_load_config_t cfg = {
        .url = o->url, .requests = reqs, .sequences = m->sequence, .seq = seq_plan(o, m)};
    if (!perf_load_plan(o, conc[done], rate[done], &cfg, &err)) {
      fprintf(stderr, "nereid-perf: %s\n", err.msg);
      status = 1;
      break;
    }
    printf("\n");
    fflush(stdout);
    perf_measure_level(o, &cfg, control, &rs[done]);
    perf_report_level(stdout, o, &rs[done]);
    fflush(stdout);
    if (rs[done].errors > 0) status = 2;
  }
  perf_report_table(stdout, o, rs, done);
  if (o->csv_path && !perf_report_csv(o->csv_path, o, rs, done, &err)) status = 1;
  if (o->json_path && !perf_report_json(o->json_path, o, m, rs, done, &err)) status = 1;
  if (status == 1 && (o->csv_path || o->json_path))
    fprintf(stderr, "nereid-perf: %s\n", err.msg);
  for (size_t i = 0; i < done; i++) perf_result_free(&rs[i]);
  free(rs);
  free(conc);
  free(rate);
  return status;
}

/* Builds the requests (and with --shared-memory system, their regions,
 * registered before the load), sweeps, then unregisters and removes the
 * regions, whatever happened before. */
static int run_model(const perf_options_t *o, const perf_model_t *m,
                     grpc_channel *control) {
  perf_shm_t *shm = o->shared_memory == PERF_SHM_SYSTEM ? perf_shm_new() : NULL;
  perf_requests_t reqs;
  perf_err_t err;
  int status = 1;
  if (!mode_check(o, m, &err) || !perf_requests_build(o, m, shm, &reqs, &err)) {
    fprintf(stderr, "nereid-perf: %s\n", err.msg);
  } else {
    if (shm != NULL && !perf_shm_register(shm, control, o->timeout_ms, &err))
      fprintf(stderr, "nereid-perf: %s\n", err.msg);
    else
      status = sweep(o, m, &reqs, control);
    perf_requests_free(&reqs);
  }
  if (!perf_shm_free(shm, control, o->timeout_ms, &err)) {
    fprintf(stderr, "nereid-perf: %s\n", err.msg);
    if (status == 0) status = 1; /* the server still holds a region of ours */
  }
  return status;
}

static int run(const perf_options_t *o) {
  grpc_channel *control = perf_channel_create(o->url);
  perf_model_t m;
  perf_err_t err;
  int status = 1;
  if (!perf_model_fetch(control, o->model, o->version, o->timeout_ms, &m, &err)) {
    fprintf(stderr, "nereid-perf: model %s at %s: %s\n", o->model, o->url, err.msg);
  } else {
    status = run_model(o, &m, control);
    perf_model_free(&m);
  }
  grpc_channel_destroy(control);
  return status;
}

int main(int argc, char **argv) {
  perf_options_t o;
  perf_err_t err;
  int parsed = perf_options_parse(&o, argc, argv, &err);
  if (parsed != 0) {
    if (parsed < 0) fprintf(stderr, "nereid-perf: %s\n", err.msg);
    perf_options_free(&o);
    return parsed < 0 ? 1 : 0;
  }
  grpc_init();
  int status = run(&o);
  grpc_shutdown();
  perf_options_free(&o);
  return status;
}
