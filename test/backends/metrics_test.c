/* The /metrics page over a real server (server/metrics/metrics.md): the
 * recorder backend executes slowly, so a case can read the pending gauge
 * and the queue depth while requests wait, then the counters, summaries
 * and histograms once they are answered, and requests refused, cancelled
 * in the queue and cancelled during execute under Triton's failure
 * reasons. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "server/metrics/metrics_text.h"
#include "test/backends/call.h"
#include "test/unit/unit.h"

#define REC_CONFIG                                                                  \
  "{\"name\":\"rec\",\"backend\":\"recorder\",\"max_batch_size\":1,"                \
  "\"input\":[{\"name\":\"INPUT0\",\"data_type\":\"TYPE_INT32\",\"dims\":[-1]}],"   \
  "\"output\":[{\"name\":\"OUTPUT0\",\"data_type\":\"TYPE_INT32\",\"dims\":[-1]}]," \
  "\"dynamic_batching\":{\"priority_levels\":2,\"default_priority_level\":2%s},"    \
  "\"parameters\":{\"execute_delay_ms\":{\"string_value\":\"%d\"},"                 \
  "\"record_file\":{\"string_value\":\"%s\"}}}"

static srv_metrics_config_t cfg;
static int delay_ms;
static char record[512];

/* The value of the series that starts with `series` ("name{labels}"), or
 * -1 when the page has none. */
static double value_of(bt_server_t *s, const char *series) {
  srv_metrics_buf_t page = {0};
  srv_metrics_render(&s->srv, &cfg, NULL, &page);
  char key[512];
  snprintf(key, sizeof key, "\n%s ", series);
  const char *at = strstr(page.data, key);
  double v = at != NULL ? strtod(at + strlen(key), NULL) : -1;
  srv_metrics_buf_free(&page);
  return v;
}

/* Whether the series reaches `want` within a few seconds. */
static bool reaches(bt_server_t *s, const char *series, double want) {
  double v = -1;
  for (int i = 0; i < 500; i++) {
    v = value_of(s, series);
    if (v == want) return true;
    nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
  }
  fprintf(stderr, "  %s is %g, not %g\n", series, v, want);
  return false;
}

static bt_call_t *request(bt_server_t *s) {
  static const int32_t data[1] = {7};
  static const int64_t shape[2] = {1, 1};
  bt_call_t *c = bt_call_new(s, "rec");
  bt_call_input(c, "INPUT0", TRITONSERVER_TYPE_INT32, shape, 2, data, sizeof data, 1);
  return c;
}

#define M "{model=\"rec\",version=\"1\"}"

/* One request executes (slowly), two wait in priority level 2. */
static void pending_body(bt_server_t *s) {
  bt_call_t *calls[3];
  for (int i = 0; i < 3; i++) REQUIRE(bt_call_send((calls[i] = request(s))));
  CHECK(reaches(s, "nv_inference_pending_request_count" M, 2));
  CHECK(reaches(s, "nereid_queue_depth{model=\"rec\",priority=\"2\",version=\"1\"}", 2));
  CHECK(value_of(s, "nereid_queue_depth{model=\"rec\",priority=\"1\",version=\"1\"}") ==
        0);
  for (int i = 0; i < 3; i++) CHECK(bt_call_wait_done(calls[i], bt_ms(10000)));
  CHECK(reaches(s, "nv_inference_request_success" M, 3));
  CHECK(value_of(s, "nv_inference_pending_request_count" M) == 0);
  CHECK(value_of(s, "nereid_queue_depth{model=\"rec\",priority=\"2\",version=\"1\"}") ==
        0);
  /* Batch statistics come after the release (fixture.h, bt_stats_reach). */
  CHECK(reaches(s, "nv_inference_exec_count" M, 3));
  CHECK(reaches(s, "nv_inference_request_summary_us_count" M, 3));
  CHECK(reaches(s,
                "nereid_inference_request_histogram_us_bucket{model=\"rec\","
                "version=\"1\",le=\"+Inf\"}",
                3));
  /* Each waited for the ones before it: at least one delay of queueing. */
  CHECK(value_of(s, "nv_inference_queue_duration_us" M) >= 3 * delay_ms * 1000);
  /* The second request took two delays; the estimate is within 12.5%. */
  double p50 = value_of(s,
                        "nv_inference_request_summary_us{model=\"rec\","
                        "version=\"1\",quantile=\"0.5\"}");
  CHECK(p50 >= 2 * delay_ms * 1000 * 0.875);
  for (int i = 0; i < 3; i++) bt_call_free(calls[i]);
}

/* The record file for this case, fresh, under the test's temporary folder. */
static void record_at(const char *name) {
  const char *dir = getenv("TEST_TMPDIR");
  snprintf(record, sizeof record, "%s/%s", dir ? dir : "/tmp", name);
  unlink(record);
}

static void pending_and_latencies(void) {
  char config[1024];
  delay_ms = bt_ms(100);
  record_at("pending.log");
  snprintf(config, sizeof config, REC_CONFIG, "", delay_ms, record);
  CHECK(bt_with_model(BT_TEST_BACKENDS, NULL, "rec", config, pending_body));
}

#define FAILURES(reason) \
  "nv_inference_request_failure{model=\"rec\",reason=\"" reason "\",version=\"1\"}"

/* One request executes (5 s), one waits (the queue holds one), one is
 * refused: REJECTED. The waiting one is cancelled in the queue (the
 * scheduler's CANCELED), the executing one during execute (the backend's
 * report, CANCELED as the request was cancelled). */
static void failures_body(bt_server_t *s) {
  bt_call_t *running = request(s), *waiting = request(s), *refused = request(s);
  REQUIRE(bt_call_send_cancellable(running));
  CHECK(bt_file_waits_for(record, "execute_start", bt_ms(5000)));
  CHECK(value_of(s, "nv_inference_pending_request_count" M) == 0); /* executing */
  REQUIRE(bt_call_send_cancellable(waiting));
  CHECK(reaches(s, "nereid_queue_depth{model=\"rec\",priority=\"2\",version=\"1\"}", 1));
  REQUIRE(bt_call_send(refused));
  CHECK(bt_call_wait_done(refused, bt_ms(5000)));
  CHECK(reaches(s, FAILURES("REJECTED"), 1));
  bt_call_cancel(waiting);
  CHECK(bt_call_wait_done(waiting, bt_ms(5000)));
  CHECK(reaches(s, FAILURES("CANCELED"), 1));
  bt_call_cancel(running);
  CHECK(bt_call_wait_done(running, bt_ms(10000)));
  CHECK(reaches(s, FAILURES("CANCELED"), 2));
  CHECK(value_of(s, FAILURES("REJECTED")) == 1);
  CHECK(value_of(s, FAILURES("BACKEND")) == 0);
  CHECK(value_of(s, FAILURES("OTHER")) == 0);
  CHECK(value_of(s, "nv_inference_pending_request_count" M) == 0);
  bt_call_free(running);
  bt_call_free(waiting);
  bt_call_free(refused);
}

static void failure_reasons(void) {
  char config[1024];
  record_at("cancelled.log");
  snprintf(config, sizeof config, REC_CONFIG,
           ",\"default_queue_policy\":{\"max_queue_size\":1}", bt_ms(5000), record);
  CHECK(bt_with_model(BT_TEST_BACKENDS, NULL, "rec", config, failures_body));
}

int main(void) {
  srv_metrics_config_init(&cfg);
  if (srv_metrics_config_parse(&cfg, "summary_latencies=true") != NULL ||
      srv_metrics_config_parse(&cfg, "histogram_latencies=true") != NULL)
    return 1;
  static const unit_case_t cases[] = {UNIT_CASE(pending_and_latencies),
                                      UNIT_CASE(failure_reasons)};
  return unit_run("metrics", cases, sizeof cases / sizeof cases[0]);
}
