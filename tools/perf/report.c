/* Text, CSV and JSON output (see report.h). Latencies are in microseconds
 * everywhere. */
#include "tools/perf/report.h"

#include <errno.h>
#include <string.h>

void perf_report_header(FILE *f, const perf_options_t *o, const perf_model_t *m,
                        const perf_requests_t *r) {
  fprintf(f, "*** nereid-perf: model %s%s%s at %s, mode %s ***\n", o->model,
          o->version[0] ? " version " : "", o->version, o->url, perf_mode_name(o->mode));
  fprintf(f, "  inputs: %s", r->summary);
  if (r->n > 1) fprintf(f, " (request 1 of %zu)", r->n);
  fprintf(f,
          "\n  max_batch_size %d%s, batch size %u; windows of %u ms, stable when 3 "
          "agree within %g%%, at most %u windows\n",
          (int)m->max_batch_size, m->decoupled ? ", decoupled" : "", o->batch_size,
          o->interval_ms, o->stability_pct, o->max_trials);
  if (o->shared_memory == PERF_SHM_SYSTEM)
    fprintf(f,
            "  shared memory: system, a region per input, one of %llu bytes per "
            "output\n",
            (unsigned long long)o->output_shm_size);
  if (!m->sequence) return;
  unsigned spread = o->seq_length * o->seq_variation / 100;
  fprintf(f, "  sequences: %u steps", o->seq_length);
  if (spread) fprintf(f, " (%u to %u)", o->seq_length - spread, o->seq_length + spread);
  fprintf(f, ", ids from %llu", (unsigned long long)o->seq_id_start);
  if (o->seq_id_end) fprintf(f, " below %llu", (unsigned long long)o->seq_id_end);
  fprintf(f, " as %s; each step sent after the last one's response\n",
          m->string_ids ? "string_param" : "int64_param");
}

static void level_title(FILE *f, const perf_result_t *r) {
  const perf_load_config_t *p = &r->plan;
  if (p->concurrency > 0)
    fprintf(f, "Concurrency %u", p->concurrency);
  else
    fprintf(f, "Request rate %g/s (%s)", p->rate, p->poisson ? "poisson" : "constant");
  fprintf(f, " (%u connection%s", p->connections, p->connections == 1 ? "" : "s");
  if (p->sequences) fprintf(f, ", %u sequences", p->seq.lanes);
  if (p->streams) fprintf(f, ", %u stream%s", p->streams, p->streams == 1 ? "" : "s");
  fprintf(f, ", %u thread%s)\n", p->threads, p->threads == 1 ? "" : "s");
}

static void error_lines(FILE *f, const perf_result_t *r) {
  fprintf(f, "  errors: %llu", (unsigned long long)r->errors);
  if (r->errors == 0) {
    fputc('\n', f);
    return;
  }
  fprintf(f, ", by message (first seen first):\n");
  for (size_t i = 0; i < r->error_list.n; i++)
    fprintf(f, "    %llu x %s\n", (unsigned long long)r->error_list.items[i].count,
            r->error_list.items[i].text);
  if (r->error_list.others)
    fprintf(f, "    %llu x (further distinct messages, not kept)\n",
            (unsigned long long)r->error_list.others);
}

void perf_report_level(FILE *f, const perf_options_t *o, const perf_result_t *r) {
  level_title(f, r);
  unsigned used = r->windows < PERF_STABLE_WINDOWS ? r->windows : PERF_STABLE_WINDOWS;
  if (r->stable)
    fprintf(f, "  stable after %u windows; the last %u reported\n", r->windows, used);
  else
    fprintf(f, "  NOT stable within %u windows (%g%%); the last %u reported\n",
            r->windows, o->stability_pct, used);
  fprintf(f, "  throughput: %.1f infer/s", r->infer_per_s);
  if (o->mode == PERF_DECOUPLED) fprintf(f, ", %.1f responses/s", r->responses_per_s);
  if (r->plan.sequences) fprintf(f, ", %.1f sequences/s", r->sequences_per_s);
  fprintf(f, " (%llu requests in %.2f s)\n", (unsigned long long)r->completed,
          r->elapsed_s);
  fprintf(f,
          "  latency (us): avg %.1f, min %.1f, p50 %.1f, p90 %.1f, p95 %.1f, p99 %.1f, "
          "max %.1f\n",
          r->avg_us, r->min_us, r->p50_us, r->p90_us, r->p95_us, r->p99_us, r->max_us);
  if (r->server_ok)
    fprintf(f,
            "  server (us per request): queue %.1f, compute input %.1f, infer %.1f, "
            "output %.1f; overhead %.1f (client avg - queue - compute)\n",
            r->queue_us, r->compute_input_us, r->compute_infer_us, r->compute_output_us,
            r->overhead_us);
  else
    fprintf(f, "  server: no statistics (%s)\n", r->server_error);
  if (r->plan.concurrency == 0)
    fprintf(f,
            "  schedule: sends left late by avg %.1f us, max %.1f us; %llu delayed (held "
            "back by --max-inflight%s)\n",
            r->send_late_avg_us, r->send_late_max_us, (unsigned long long)r->delayed,
            r->plan.sequences ? ", or no sequence free" : "");
  error_lines(f, r);
}

void perf_report_table(FILE *f, const perf_options_t *o, const perf_result_t *rs,
                       size_t n) {
  bool rate = o->rate_mode, dec = o->mode == PERF_DECOUPLED;
  fprintf(f, "\n%-11s %11s%s %9s %9s %9s %9s %9s %8s %8s %8s %9s %s\n",
          rate ? "rate/s" : "concurrency", "infer/s", dec ? "      resp/s" : "", "avg_us",
          "p50_us", "p90_us", "p95_us", "p99_us", "queue_us", "comp_us", "ovhd_us",
          "errors", "stable");
  for (size_t i = 0; i < n; i++) {
    const perf_result_t *r = &rs[i];
    char level[32], resp[16] = "";
    if (rate)
      snprintf(level, sizeof level, "%g", r->plan.rate);
    else
      snprintf(level, sizeof level, "%u", r->plan.concurrency);
    if (dec) snprintf(resp, sizeof resp, " %11.1f", r->responses_per_s);
    double comp = r->compute_input_us + r->compute_infer_us + r->compute_output_us;
    char server[40] = "       -        -        -";
    if (r->server_ok)
      snprintf(server, sizeof server, "%8.1f %8.1f %8.1f", r->queue_us, comp,
               r->overhead_us);
    fprintf(f, "%-11s %11.1f%s %9.1f %9.1f %9.1f %9.1f %9.1f %s %9llu %s\n", level,
            r->infer_per_s, resp, r->avg_us, r->p50_us, r->p90_us, r->p95_us, r->p99_us,
            server, (unsigned long long)r->errors, r->stable ? "yes" : "no");
  }
}

static FILE *open_out(const char *path, perf_err_t *err) {
  FILE *f = fopen(path, "w");
  if (f == NULL) perf_fail(err, "%s: %s", path, strerror(errno));
  return f;
}

static bool close_out(FILE *f, const char *path, perf_err_t *err) {
  bool bad = ferror(f) != 0;
  if (fclose(f) != 0) bad = true;
  return bad ? perf_fail(err, "%s: write error", path) : true;
}

bool perf_report_csv(const char *path, const perf_options_t *o, const perf_result_t *rs,
                     size_t n, perf_err_t *err) {
  FILE *f = open_out(path, err);
  if (f == NULL) return false;
  fputs(
      "Concurrency,Request Rate,Inferences/Second,Responses/Second,Avg Latency,"
      "Min Latency,p50 Latency,p90 Latency,p95 Latency,p99 Latency,Max Latency,"
      "Server Queue,Server Compute Input,Server Compute Infer,Server Compute Output,"
      "Server Overhead,Requests,Errors,Delayed,Send Late Avg,Send Late Max,Stable,"
      "Windows,Connections,Streams,Threads\n",
      f);
  for (size_t i = 0; i < n; i++) {
    const perf_result_t *r = &rs[i];
    fprintf(f, "%u,%g,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,", r->plan.concurrency,
            r->plan.rate, r->infer_per_s, r->responses_per_s, r->avg_us, r->min_us,
            r->p50_us, r->p90_us, r->p95_us, r->p99_us, r->max_us);
    if (r->server_ok)
      fprintf(f, "%.1f,%.1f,%.1f,%.1f,%.1f,", r->queue_us, r->compute_input_us,
              r->compute_infer_us, r->compute_output_us, r->overhead_us);
    else
      fputs(",,,,,", f);
    fprintf(f, "%llu,%llu,%llu,%.1f,%.1f,%s,%u,%u,%u,%u\n",
            (unsigned long long)r->completed, (unsigned long long)r->errors,
            (unsigned long long)r->delayed, r->send_late_avg_us, r->send_late_max_us,
            r->stable ? "true" : "false", r->windows, r->plan.connections,
            r->plan.streams, r->plan.threads);
  }
  (void)o;
  return close_out(f, path, err);
}

static void json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\')
      fprintf(f, "\\%c", *p);
    else if (*p == '\n')
      fputs("\\n", f);
    else if (*p < 0x20)
      fprintf(f, "\\u%04x", *p);
    else
      fputc(*p, f);
  }
  fputc('"', f);
}

static void json_level(FILE *f, const perf_result_t *r) {
  fprintf(f,
          "    {\"concurrency\": %u, \"request_rate\": %g, \"connections\": %u, "
          "\"streams\": %u, \"threads\": %u,\n",
          r->plan.concurrency, r->plan.rate, r->plan.connections, r->plan.streams,
          r->plan.threads);
  fprintf(
      f,
      "     \"windows\": %u, \"stable\": %s, \"elapsed_s\": %.3f, \"requests\": %llu, "
      "\"responses\": %llu,\n",
      r->windows, r->stable ? "true" : "false", r->elapsed_s,
      (unsigned long long)r->completed, (unsigned long long)r->responses);
  fprintf(f,
          "     \"throughput_infer_per_sec\": %.1f, \"throughput_responses_per_sec\": "
          "%.1f,\n",
          r->infer_per_s, r->responses_per_s);
  if (r->plan.sequences)
    fprintf(f,
            "     \"sequences\": %u, \"sequences_ended\": %llu, "
            "\"throughput_sequences_per_sec\": %.1f,\n",
            r->plan.seq.lanes, (unsigned long long)r->sequences, r->sequences_per_s);
  fprintf(
      f,
      "     \"latency_us\": {\"avg\": %.1f, \"min\": %.1f, \"p50\": %.1f, \"p90\": %.1f, "
      "\"p95\": %.1f, \"p99\": %.1f, \"max\": %.1f},\n",
      r->avg_us, r->min_us, r->p50_us, r->p90_us, r->p95_us, r->p99_us, r->max_us);
  if (r->server_ok) {
    fprintf(f,
            "     \"server\": {\"queue_us\": %.1f, \"compute_input_us\": %.1f, "
            "\"compute_infer_us\": %.1f, \"compute_output_us\": %.1f, \"overhead_us\": "
            "%.1f, \"inference_count\": %llu, \"execution_count\": %llu},\n",
            r->queue_us, r->compute_input_us, r->compute_infer_us, r->compute_output_us,
            r->overhead_us, (unsigned long long)r->server.inference_count,
            (unsigned long long)r->server.execution_count);
  } else {
    fputs("     \"server\": null, \"server_error\": ", f);
    json_string(f, r->server_error);
    fputs(",\n", f);
  }
  fprintf(f,
          "     \"errors\": %llu, \"delayed\": %llu, \"send_late_avg_us\": %.1f, "
          "\"send_late_max_us\": %.1f, \"error_messages\": [",
          (unsigned long long)r->errors, (unsigned long long)r->delayed,
          r->send_late_avg_us, r->send_late_max_us);
  for (size_t i = 0; i < r->error_list.n; i++) {
    fprintf(f, "%s{\"count\": %llu, \"message\": ", i ? ", " : "",
            (unsigned long long)r->error_list.items[i].count);
    json_string(f, r->error_list.items[i].text);
    fputc('}', f);
  }
  fprintf(f, "], \"error_messages_not_kept\": %llu}",
          (unsigned long long)r->error_list.others);
}

bool perf_report_json(const char *path, const perf_options_t *o, const perf_model_t *m,
                      const perf_result_t *rs, size_t n, perf_err_t *err) {
  FILE *f = open_out(path, err);
  if (f == NULL) return false;
  fputs("{\n  \"model\": ", f);
  json_string(f, o->model);
  fputs(", \"version\": ", f);
  json_string(f, o->version);
  fputs(", \"url\": ", f);
  json_string(f, o->url);
  fprintf(f,
          ", \"mode\": \"%s\",\n  \"batch_size\": %u, \"max_batch_size\": %d, "
          "\"decoupled\": %s, \"measurement_interval_ms\": %u, "
          "\"stability_percentage\": %g, \"max_trials\": %u,\n"
          "  \"shared_memory\": \"%s\", \"output_shared_memory_size\": %llu,\n",
          perf_mode_name(o->mode), o->batch_size, (int)m->max_batch_size,
          m->decoupled ? "true" : "false", o->interval_ms, o->stability_pct,
          o->max_trials, perf_shm_mode_name(o->shared_memory),
          (unsigned long long)o->output_shm_size);
  if (m->sequence)
    fprintf(f,
            "  \"sequence\": {\"length\": %u, \"length_variation_pct\": %u, "
            "\"id_start\": %llu, \"id_end\": %llu, \"string_ids\": %s},\n",
            o->seq_length, o->seq_variation, (unsigned long long)o->seq_id_start,
            (unsigned long long)o->seq_id_end, m->string_ids ? "true" : "false");
  fputs("  \"levels\": [\n", f);
  for (size_t i = 0; i < n; i++) {
    json_level(f, &rs[i]);
    fputs(i + 1 < n ? ",\n" : "\n", f);
  }
  fputs("  ]\n}\n", f);
  return close_out(f, path, err);
}
