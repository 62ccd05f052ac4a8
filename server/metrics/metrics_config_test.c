/* --metrics-config (metrics_config.h): Triton's defaults, every key, and
 * errors that name the setting and leave the config unchanged. */
#include "server/metrics/metrics_config.h"

#include <string.h>

#include "test/unit/unit.h"

/* The error's text for `setting` (a fresh config), or "" when it parsed. */
static const char *error_of(const char *setting) {
  static char text[SRV_STATUS_MESSAGE_MAX];
  srv_metrics_config_t c, before;
  srv_metrics_config_init(&c);
  before = c;
  srv_status_t *st = srv_metrics_config_parse(&c, setting);
  if (st == NULL) return "";
  snprintf(text, sizeof text, "%s", srv_status_message(st));
  CHECK(memcmp(&c, &before, sizeof c) == 0); /* nothing changed */
  srv_status_free(st);
  return text;
}

static void test_defaults(void) {
  srv_metrics_config_t c;
  srv_metrics_config_init(&c);
  CHECK(c.counter_latencies && !c.summary_latencies && !c.histogram_latencies);
  REQUIRE(c.quantile_count == 4);
  CHECK(c.quantiles[0].quantile == 0.5 && c.quantiles[0].error == 0.05);
  CHECK(c.quantiles[3].quantile == 0.99 && c.quantiles[3].error == 0.001);
  REQUIRE(c.bucket_count == 13);
  CHECK(c.buckets[0] == 100 && c.buckets[12] == 1000000);
}

static void test_keys(void) {
  srv_metrics_config_t c;
  srv_metrics_config_init(&c);
  CHECK(srv_metrics_config_parse(&c, "summary_latencies=true") == NULL);
  CHECK(srv_metrics_config_parse(&c, "counter_latencies=false") == NULL);
  CHECK(srv_metrics_config_parse(&c, "histogram_latencies=true") == NULL);
  CHECK(c.summary_latencies && !c.counter_latencies && c.histogram_latencies);
  CHECK(srv_metrics_config_parse(&c, "summary_quantiles=0.5:0.05,0.9:0.01") == NULL);
  REQUIRE(c.quantile_count == 2);
  CHECK(c.quantiles[1].quantile == 0.9 && c.quantiles[1].error == 0.01);
  CHECK(srv_metrics_config_parse(&c, "summary_quantiles=1:0") == NULL);
  CHECK(c.quantile_count == 1 && c.quantiles[0].quantile == 1.0);
  CHECK(srv_metrics_config_parse(&c, "histogram_buckets=10,20.5,1e3") == NULL);
  REQUIRE(c.bucket_count == 3);
  CHECK(c.buckets[0] == 10 && c.buckets[1] == 20.5 && c.buckets[2] == 1000);
}

static void test_errors(void) {
  CHECK_STREQ(error_of("summary_latencies"),
              "--metrics-config 'summary_latencies': expected <key>=<value>");
  CHECK_STREQ(error_of("=true"), "--metrics-config '=true': expected <key>=<value>");
  CHECK_STREQ(error_of("summary_latencies="),
              "--metrics-config 'summary_latencies=': the value is empty");
  CHECK_STREQ(error_of("summary_latencies=yes"),
              "--metrics-config 'summary_latencies=yes': the value must be 'true' or "
              "'false'");
  CHECK_STREQ(error_of("summary_latency=true"),
              "--metrics-config 'summary_latency=true': unknown key 'summary_latency' "
              "(known: counter_latencies, summary_latencies, summary_quantiles, "
              "histogram_latencies, histogram_buckets)");
  CHECK_STREQ(error_of("summary_quantiles=0.5"),
              "--metrics-config 'summary_quantiles=0.5': '0.5' is not <quantile>:<error> "
              "(e.g. 0.9:0.01)");
  CHECK_STREQ(error_of("summary_quantiles=0.5:0.05,"),
              "--metrics-config 'summary_quantiles=0.5:0.05,': '' is not "
              "<quantile>:<error> (e.g. 0.9:0.01)");
  CHECK_STREQ(error_of("summary_quantiles=1.5:0.1"),
              "--metrics-config 'summary_quantiles=1.5:0.1': quantile '1.5' is not a "
              "number in [0, 1]");
  CHECK_STREQ(error_of("summary_quantiles=0.9:x"),
              "--metrics-config 'summary_quantiles=0.9:x': error 'x' of quantile 0.9 is "
              "not a number in [0, 1]");
  CHECK_STREQ(error_of("histogram_buckets=10,,20"),
              "--metrics-config 'histogram_buckets=10,,20': bucket '' is not a positive "
              "number of microseconds");
  CHECK_STREQ(error_of("histogram_buckets=0"),
              "--metrics-config 'histogram_buckets=0': bucket '0' is not a positive "
              "number of microseconds");
  CHECK_STREQ(error_of("histogram_buckets=inf"),
              "--metrics-config 'histogram_buckets=inf': bucket 'inf' is not a positive "
              "number of microseconds");
  CHECK_STREQ(error_of("histogram_buckets=100,50"),
              "--metrics-config 'histogram_buckets=100,50': bucket '50' is not above the "
              "one before it (buckets must ascend)");
  char many[2048] = "histogram_buckets=1";
  for (int i = 2; i <= SRV_METRICS_BUCKETS_MAX + 1; i++)
    snprintf(many + strlen(many), sizeof many - strlen(many), ",%d", i);
  CHECK(strstr(error_of(many), "more than 64 buckets") != NULL);
}

UNIT_MAIN("metrics_config", UNIT_CASE(test_defaults), UNIT_CASE(test_keys),
          UNIT_CASE(test_errors))
