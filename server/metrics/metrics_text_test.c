/* The /metrics page (metrics_text.h) over a registry of bare models with
 * known counters: Triton's families and labels line by line, Nereid's own
 * families, escaping, and the whole page parsed by prometheus_client
 * (metrics_parse.py). One thread, but for a writer that queues requests
 * while pages are rendered. */
#include "server/metrics/metrics_text.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/config/model_config.h"
#include "server/model/model_bare.h"
#include "test/unit/unit.h"

static const char kAlpha[] =
    "backend: 'b' max_batch_size: 8\n"
    "input [{name: 'IN' data_type: TYPE_INT32 dims: [16]}]\n"
    "output [{name: 'OUT' data_type: TYPE_INT32 dims: [16]}]\n"
    "dynamic_batching {priority_levels: 2 default_priority_level: 1}";

static srv_model_t *bare(const char *name, const char *text) {
  upb_Arena *a = upb_Arena_New();
  char err[256];
  inference_ModelConfig *c =
      cfg_model_config_parse(text, strlen(text), "test", a, err, sizeof err);
  srv_model_t *m = NULL;
  if (c == NULL || srv_model_bare_new(name, c, &m) != NULL) m = NULL;
  upb_Arena_Free(a);
  return m;
}

static void add(srv_duration_t *d, uint64_t count, uint64_t ns) {
  atomic_store(&d->count, count);
  atomic_store(&d->ns, ns);
}

/* alpha: 5 successes of 1 ms, 7 failures (1 rejected, 2 cancelled, 3 by
 * the backend, 1 other), 4 pending, queue depth 3 and 1. */
static _Atomic uint64_t depth[2] = {3, 1};

static srv_sequence_stats_t sequences;

/* Written into several writer slots, as an instance thread, a frontend and
 * the model actor would: the page shows their sums. */
static void fill_alpha(srv_stats_t *s) {
  srv_stats_slot_t *a = &s->slots[0], *b = &s->slots[9],
                   *c = &s->slots[SRV_STATS_SLOTS - 1];
  add(&a->success, 3, 3000000);
  add(&b->success, 2, 2000000);
  add(&a->fail, 4, 100000);
  add(&c->fail, 3, 23000);
  atomic_store(&a->fail_reason[SRV_FAIL_REJECTED], 1);
  atomic_store(&c->fail_reason[SRV_FAIL_CANCELED], 2);
  atomic_store(&b->fail_reason[SRV_FAIL_BACKEND], 3);
  add(&a->queue, 5, 2000000);
  add(&a->compute_input, 5, 10000);
  add(&b->compute_infer, 5, 2900000);
  add(&a->compute_output, 5, 90000);
  atomic_store(&a->inference_count, 9);
  atomic_store(&b->execution_count, 3);
  /* Enqueued 6 on one thread, 2 of them executed on another. */
  atomic_store(&a->pending, 6);
  atomic_store(&b->pending, -2);
  for (int i = 0; i < 5; i++) {
    srv_stats_slot_t *x = i < 2 ? a : c;
    srv_hist_record(&srv_stats_slot_latency(x)->kind[SRV_LAT_REQUEST], 1000000);
    srv_hist_record(&srv_stats_slot_latency(x)->kind[SRV_LAT_QUEUE], 400000);
  }
  s->queue_depth = depth;
  s->queue_levels = 2;
  s->sequences = &sequences; /* as if alpha had a sequence batcher */
  atomic_store(&sequences.active, 6);
  atomic_store(&sequences.backlog, 2);
}

/* An ensemble-like model: two steps with their times. */
static void fill_steps(srv_stats_t *s) {
  s->steps = calloc(2, sizeof *s->steps);
  s->step_count = 2;
  s->steps[0].model_name = "alpha";
  s->steps[0].model_version = "1";
  add(&s->steps[0].time, 4, 8000000);
  s->steps[1].model_name = "q\"m\\x";
  s->steps[1].model_version = "1";
  add(&s->steps[1].time, 4, 4000);
}

#define HAS(text, line) CHECK(strstr((text), (line)) != NULL)
#define LACKS(text, line) CHECK(strstr((text), (line)) == NULL)

static void check_triton_families(const char *t) {
  HAS(t,
      "# HELP nv_inference_request_success Number of successful inference requests, "
      "all batch sizes\n# TYPE nv_inference_request_success counter\n");
  HAS(t, "\nnv_inference_request_success{model=\"alpha\",version=\"1\"} 5\n");
  HAS(t,
      "\nnv_inference_request_failure{model=\"alpha\",reason=\"REJECTED\",version=\"1\"} "
      "1\n");
  HAS(t,
      "\nnv_inference_request_failure{model=\"alpha\",reason=\"CANCELED\",version=\"1\"} "
      "2\n");
  HAS(t,
      "\nnv_inference_request_failure{model=\"alpha\",reason=\"BACKEND\",version=\"1\"} "
      "3\n");
  HAS(t,
      "\nnv_inference_request_failure{model=\"alpha\",reason=\"OTHER\",version=\"1\"} "
      "1\n");
  HAS(t, "\nnv_inference_count{model=\"alpha\",version=\"1\"} 9\n");
  HAS(t, "\nnv_inference_exec_count{model=\"alpha\",version=\"1\"} 3\n");
  HAS(t, "\nnv_inference_request_duration_us{model=\"alpha\",version=\"1\"} 5000\n");
  HAS(t, "\nnv_inference_queue_duration_us{model=\"alpha\",version=\"1\"} 2000\n");
  HAS(t, "\nnv_inference_compute_input_duration_us{model=\"alpha\",version=\"1\"} 10\n");
  HAS(t,
      "\nnv_inference_compute_infer_duration_us{model=\"alpha\",version=\"1\"} 2900\n");
  HAS(t, "\nnv_inference_compute_output_duration_us{model=\"alpha\",version=\"1\"} 90\n");
  HAS(t, "# TYPE nv_inference_pending_request_count gauge\n");
  HAS(t, "\nnv_inference_pending_request_count{model=\"alpha\",version=\"1\"} 4\n");
  /* The other model: zeros, its name escaped. */
  HAS(t, "\nnv_inference_request_success{model=\"q\\\"m\\\\x\",version=\"1\"} 0\n");
  HAS(t,
      "\nnv_inference_request_failure{model=\"q\\\"m\\\\x\",reason=\"OTHER\",version="
      "\"1\"} 0\n");
}

static void check_latency_families(const char *t) {
  HAS(t, "# TYPE nv_inference_request_summary_us summary\n");
  HAS(t, "\nnv_inference_request_summary_us_count{model=\"alpha\",version=\"1\"} 5\n");
  HAS(t, "\nnv_inference_request_summary_us_sum{model=\"alpha\",version=\"1\"} 5000\n");
  /* 5 x 1000 us in bucket [960, 1024): rank 3 of 5 is 960 + 64 * 3/5,
   * rank ceil(0.9 * 5) = 5 the bucket's top. */
  HAS(t,
      "\nnv_inference_request_summary_us{model=\"alpha\",version=\"1\",quantile=\"0.5\"} "
      "998.4\n");
  HAS(t,
      "\nnv_inference_request_summary_us{model=\"alpha\",version=\"1\",quantile=\"0.9\"} "
      "1024\n");
  HAS(t,
      "\nnv_inference_queue_summary_us{model=\"alpha\",version=\"1\",quantile=\"0.5\"} ");
  /* No observation: NaN, as prometheus-cpp's summaries. */
  HAS(t,
      "\nnv_inference_request_summary_us{model=\"q\\\"m\\\\x\",version=\"1\","
      "quantile=\"0.5\"} NaN\n");
  HAS(t, "# TYPE nereid_inference_request_histogram_us histogram\n");
  HAS(t,
      "\nnereid_inference_request_histogram_us_bucket{model=\"alpha\",version=\"1\","
      "le=\"500\"} 0\n");
  HAS(t,
      "\nnereid_inference_request_histogram_us_bucket{model=\"alpha\",version=\"1\","
      "le=\"1000\"} 5\n");
  HAS(t,
      "\nnereid_inference_request_histogram_us_bucket{model=\"alpha\",version=\"1\","
      "le=\"+Inf\"} 5\n");
  HAS(t,
      "\nnereid_inference_queue_histogram_us_bucket{model=\"alpha\",version=\"1\","
      "le=\"500\"} 5\n");
}

static void check_own_families(const char *t) {
  HAS(t, "# TYPE nereid_queue_depth gauge\n");
  HAS(t, "\nnereid_queue_depth{model=\"alpha\",priority=\"1\",version=\"1\"} 3\n");
  HAS(t, "\nnereid_queue_depth{model=\"alpha\",priority=\"2\",version=\"1\"} 1\n");
  HAS(t,
      "\nnereid_ensemble_step_count{model=\"q\\\"m\\\\x\",step=\"0\",step_model="
      "\"alpha\","
      "step_version=\"1\",version=\"1\"} 4\n");
  HAS(t,
      "\nnereid_ensemble_step_duration_us{model=\"q\\\"m\\\\x\",step=\"1\","
      "step_model=\"q\\\"m\\\\x\",step_version=\"1\",version=\"1\"} 4\n");
  HAS(t,
      "# TYPE nereid_sequence_active gauge\n"
      "nereid_sequence_active{model=\"alpha\",version=\"1\"} 6\n");
  HAS(t, "\nnereid_sequence_backlog{model=\"alpha\",version=\"1\"} 2\n");
  LACKS(t, "nereid_sequence_active{model=\"q");
  HAS(t, "# TYPE nv_cpu_utilization gauge\nnv_cpu_utilization ");
  HAS(t, "# TYPE nv_cpu_memory_total_bytes gauge\nnv_cpu_memory_total_bytes ");
  HAS(t, "# TYPE nv_cpu_memory_used_bytes gauge\nnv_cpu_memory_used_bytes ");
  HAS(t, "# HELP custom_x A custom one\n# TYPE custom_x counter\ncustom_x 2\n");
}

/* The page through metrics_parse.py; its output into *out. */
static int parse_with_python(const char *page, srv_metrics_buf_t *out) {
  char in[] = "/tmp/metrics_text_test.XXXXXX";
  int fd = mkstemp(in);
  if (fd < 0) return -1;
  FILE *f = fdopen(fd, "w");
  fputs(page, f);
  fclose(f);
  char cmd[256];
  snprintf(cmd, sizeof cmd, "/usr/bin/python3 server/metrics/metrics_parse.py < %s", in);
  FILE *p = popen(cmd, "r");
  char chunk[4096];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, p)) > 0)
    srv_metrics_buf_append(out, chunk, n);
  int rc = pclose(p);
  unlink(in);
  return rc;
}

static void check_parsed(const char *page) {
  srv_metrics_buf_t py = {0};
  int rc = parse_with_python(page, &py);
  CHECK(rc == 0);
  if (rc != 0) fprintf(stderr, "%s\n", py.data ? py.data : "(no output)");
  const char *t = py.data ? py.data : "";
  HAS(t, "# family nv_inference_request_failure counter\n");
  /* The parser names a counter's samples with _total. */
  HAS(t,
      "nv_inference_request_failure_total{model=alpha,reason=BACKEND,version=1} 3.0\n");
  HAS(t, "# family nv_inference_request_summary_us summary\n");
  HAS(t, "nv_inference_request_summary_us{model=alpha,quantile=0.5,version=1} 998.4\n");
  HAS(t, "# family nereid_inference_request_histogram_us histogram\n");
  HAS(t,
      "nereid_inference_request_histogram_us_bucket{le=1000,model=alpha,version=1} "
      "5.0\n");
  HAS(t, "nv_inference_pending_request_count{model=alpha,version=1} 4.0\n");
  HAS(t, "nereid_queue_depth{model=alpha,priority=2,version=1} 1.0\n");
  srv_metrics_buf_free(&py);
}

static void test_render(void) {
  srv_model_t *alpha = bare("alpha", kAlpha), *odd = bare("q\"m\\x", kAlpha);
  REQUIRE(alpha != NULL && odd != NULL);
  fill_alpha(srv_model_stats(alpha));
  fill_steps(srv_model_stats(odd));
  srv_server_t srv = {.registry = srv_registry_new()};
  srv_model_t *av[] = {alpha}, *ov[] = {odd};
  srv_registry_entry_t entries[] = {
      {.name = "alpha",
       .state = SRV_MODEL_STATE_READY,
       .versions = av,
       .version_count = 1},
      {.name = "q\"m\\x",
       .state = SRV_MODEL_STATE_READY,
       .versions = ov,
       .version_count = 1},
  };
  srv_registry_publish(srv.registry, entries, 2);
  TRITONSERVER_MetricFamily *fam;
  TRITONSERVER_Metric *custom;
  REQUIRE(TRITONSERVER_MetricFamilyNew(&fam, TRITONSERVER_METRIC_KIND_COUNTER, "custom_x",
                                       "A custom one") == NULL);
  REQUIRE(TRITONSERVER_MetricNew(&custom, fam, NULL, 0) == NULL);
  REQUIRE(TRITONSERVER_MetricIncrement(custom, 2) == NULL);

  srv_metrics_config_t cfg;
  srv_metrics_config_init(&cfg);
  REQUIRE(srv_metrics_config_parse(&cfg, "summary_latencies=true") == NULL);
  REQUIRE(srv_metrics_config_parse(&cfg, "histogram_latencies=true") == NULL);
  REQUIRE(srv_metrics_config_parse(&cfg, "histogram_buckets=500,1000,2000") == NULL);
  srv_metrics_cpu_t cpu;
  srv_metrics_cpu_init(&cpu);
  srv_metrics_buf_t page = {0};
  srv_metrics_render(&srv, &cfg, &cpu, &page);
  REQUIRE(page.data != NULL && page.len == strlen(page.data));
  check_triton_families(page.data);
  check_latency_families(page.data);
  check_own_families(page.data);
  check_parsed(page.data);

  /* Counters off, CPU off: those families are gone. */
  page.len = 0;
  REQUIRE(srv_metrics_config_parse(&cfg, "counter_latencies=false") == NULL);
  REQUIRE(srv_metrics_config_parse(&cfg, "summary_latencies=false") == NULL);
  srv_metrics_render(&srv, &cfg, NULL, &page);
  LACKS(page.data, "nv_inference_request_duration_us");
  LACKS(page.data, "_summary_us");
  LACKS(page.data, "nv_cpu_");
  HAS(page.data, "\nnv_inference_request_success{model=\"alpha\",version=\"1\"} 5\n");
  srv_metrics_buf_free(&page);

  TRITONSERVER_MetricDelete(custom);
  TRITONSERVER_MetricFamilyDelete(fam);
  srv_registry_free(srv.registry);
  srv_model_stats(alpha)->sequences = NULL; /* the test's */
  srv_model_bare_free(alpha);
  srv_model_bare_free(odd);
}

/* No model, no CPU, no custom metric: an empty page, still a string. */
static void test_empty(void) {
  srv_server_t srv = {.registry = srv_registry_new()};
  srv_metrics_config_t cfg;
  srv_metrics_config_init(&cfg);
  srv_metrics_buf_t page = {0};
  srv_metrics_render(&srv, &cfg, NULL, &page);
  REQUIRE(page.data != NULL);
  CHECK_STREQ(page.data, "");
  srv_metrics_buf_free(&page);
  srv_registry_free(srv.registry);
}

/* With namespaces, one name in two: each series has tritonserver's
 * namespace label, after model, so no two lines share their labels. */
static void test_namespaces(void) {
  srv_model_t *a = bare("alpha", kAlpha), *b = bare("alpha", kAlpha);
  REQUIRE(a != NULL && b != NULL);
  srv_server_t srv = {.registry = srv_registry_new()};
  srv_model_t *av[] = {a}, *bv[] = {b};
  srv_registry_entry_t entries[] = {
      {.name = "alpha",
       .ns = "/b",
       .state = SRV_MODEL_STATE_READY,
       .versions = bv,
       .version_count = 1},
      {.name = "alpha",
       .ns = "/a",
       .state = SRV_MODEL_STATE_READY,
       .versions = av,
       .version_count = 1},
  };
  srv_registry_publish(srv.registry, entries, 2);
  srv_metrics_config_t cfg;
  srv_metrics_config_init(&cfg);
  srv_metrics_buf_t page = {0};
  srv_metrics_render(&srv, &cfg, NULL, &page);
  HAS(page.data,
      "\nnv_inference_request_success{model=\"alpha\",namespace=\"/a\",version=\"1\"} 0\n"
      "nv_inference_request_success{model=\"alpha\",namespace=\"/b\",version=\"1\"} 0\n");
  srv_metrics_buf_free(&page);
  srv_registry_free(srv.registry);
  srv_model_bare_free(a);
  srv_model_bare_free(b);
}

/* Requests that only arrive, as the scheduler queues them: +1 on the
 * pending gauge, then the queue's depth stored with release (queue.c),
 * until the reader has its pages. */
static _Atomic uint64_t arriving_depth[1];
static _Atomic int arrivals_stop;

static void *arrive(void *arg) {
  srv_stats_t *s = arg;
  for (uint64_t i = 1; !atomic_load_explicit(&arrivals_stop, memory_order_relaxed); i++) {
    srv_stats_pending_add(s, 1);
    atomic_store_explicit(&arriving_depth[0], i, memory_order_release);
  }
  return NULL;
}

static uint64_t value_after(const char *page, const char *series) {
  const char *at = strstr(page, series);
  return at == NULL ? UINT64_MAX : strtoull(at + strlen(series), NULL, 10);
}

static const char kPendingArr[] =
    "\nnv_inference_pending_request_count{model=\"arr\",version=\"1\"} ";
static const char kQueuedArr[] =
    "\nnereid_queue_depth{model=\"arr\",priority=\"1\",version=\"1\"} ";

/* While requests arrive, no page shows more queued than pending: the
 * depths are read before the pending sum. (A page that read them while it
 * rendered, after the sum, showed the arrivals in between as queued and
 * not pending; e2e metrics_test's test_queue_depth_per_priority caught it
 * under TSan.) */
static void test_depth_read_before_pending(void) {
  srv_model_t *m = bare("arr", kAlpha);
  REQUIRE(m != NULL);
  srv_stats_t *s = srv_model_stats(m);
  const _Atomic uint64_t *own_depth = s->queue_depth;
  uint32_t own_levels = s->queue_levels;
  s->queue_depth = arriving_depth;
  s->queue_levels = 1;
  srv_server_t srv = {.registry = srv_registry_new()};
  srv_model_t *mv[] = {m};
  srv_registry_entry_t entry = {
      .name = "arr", .state = SRV_MODEL_STATE_READY, .versions = mv, .version_count = 1};
  srv_registry_publish(srv.registry, &entry, 1);
  srv_metrics_config_t cfg;
  srv_metrics_config_init(&cfg);
  pthread_t writer;
  REQUIRE(pthread_create(&writer, NULL, arrive, s) == 0);
  while (atomic_load(&arriving_depth[0]) == 0) sched_yield(); /* the writer is on */
  srv_metrics_buf_t page = {0};
  int behind = 0;
  for (int i = 0; i < 20000; i++) {
    page.len = 0;
    srv_metrics_render(&srv, &cfg, NULL, &page);
    uint64_t pending = value_after(page.data, kPendingArr);
    uint64_t queued = value_after(page.data, kQueuedArr);
    REQUIRE(pending != UINT64_MAX && queued != UINT64_MAX);
    if (pending < queued) behind++;
  }
  atomic_store(&arrivals_stop, 1);
  pthread_join(writer, NULL);
  CHECK_EQ_U64(behind, 0);
  /* At rest both read the arrivals. */
  page.len = 0;
  srv_metrics_render(&srv, &cfg, NULL, &page);
  uint64_t arrived = atomic_load(&arriving_depth[0]);
  CHECK(arrived > 0);
  CHECK_EQ_U64(value_after(page.data, kQueuedArr), arrived);
  CHECK_EQ_U64(value_after(page.data, kPendingArr), arrived);
  srv_metrics_buf_free(&page);
  srv_registry_free(srv.registry);
  s->queue_depth = own_depth;
  s->queue_levels = own_levels;
  srv_model_bare_free(m);
}

UNIT_MAIN("metrics_text", UNIT_CASE(test_render), UNIT_CASE(test_empty),
          UNIT_CASE(test_namespaces), UNIT_CASE(test_depth_read_before_pending))
