/* --metrics-config parsing (see metrics_config.h). Main thread. */
#include "server/metrics/metrics_config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define INVALID(...) srv_status_new(GRPC_STATUS_INVALID_ARGUMENT, __VA_ARGS__)

static const double default_buckets[] = {100,    250,    500,    1000,  2500,
                                         5000,   10000,  25000,  50000, 100000,
                                         250000, 500000, 1000000};
static const srv_metrics_quantile_t default_quantiles[] = {
    {0.5, 0.05}, {0.9, 0.01}, {0.95, 0.001}, {0.99, 0.001}};

void srv_metrics_config_init(srv_metrics_config_t *c) {
  memset(c, 0, sizeof *c);
  c->counter_latencies = true;
  c->quantile_count = sizeof default_quantiles / sizeof default_quantiles[0];
  memcpy(c->quantiles, default_quantiles, sizeof default_quantiles);
  c->bucket_count = sizeof default_buckets / sizeof default_buckets[0];
  memcpy(c->buckets, default_buckets, sizeof default_buckets);
}

/* The number spelled by [s, end) exactly, or false. */
static bool number(const char *s, const char *end, double *out) {
  if (s == end || end - s > 64) return false;
  char buf[65];
  memcpy(buf, s, (size_t)(end - s));
  buf[end - s] = '\0';
  char *stop;
  errno = 0;
  *out = strtod(buf, &stop);
  return errno == 0 && *stop == '\0' && isfinite(*out);
}

static srv_status_t *boolean(const char *setting, const char *v, bool *out) {
  if (strcmp(v, "true") == 0) {
    *out = true;
  } else if (strcmp(v, "false") == 0) {
    *out = false;
  } else {
    return INVALID("--metrics-config '%s': the value must be 'true' or 'false'", setting);
  }
  return NULL;
}

/* The next comma-separated item of a list at *p, [*start, *end); *p moves
 * past it (NULL after the last). False once the list is done. */
static bool next_item(const char **p, const char **start, const char **end) {
  if (*p == NULL) return false;
  *start = *p;
  *end = strchr(*start, ',');
  if (*end == NULL) {
    *end = *start + strlen(*start);
    *p = NULL;
  } else {
    *p = *end + 1;
  }
  return true;
}

static srv_status_t *quantiles(const char *setting, const char *v,
                               srv_metrics_config_t *c) {
  srv_metrics_quantile_t q[SRV_METRICS_QUANTILES_MAX];
  uint32_t n = 0;
  for (const char *rest = v, *p, *end; next_item(&rest, &p, &end);) {
    const char *colon = memchr(p, ':', (size_t)(end - p));
    int len = (int)(end - p);
    if (n == SRV_METRICS_QUANTILES_MAX)
      return INVALID("--metrics-config '%s': more than %d quantiles", setting,
                     SRV_METRICS_QUANTILES_MAX);
    if (colon == NULL)
      return INVALID(
          "--metrics-config '%s': '%.*s' is not <quantile>:<error> (e.g. 0.9:0.01)",
          setting, len, p);
    if (!number(p, colon, &q[n].quantile) || q[n].quantile < 0 || q[n].quantile > 1)
      return INVALID("--metrics-config '%s': quantile '%.*s' is not a number in [0, 1]",
                     setting, (int)(colon - p), p);
    if (!number(colon + 1, end, &q[n].error) || q[n].error < 0 || q[n].error > 1)
      return INVALID(
          "--metrics-config '%s': error '%.*s' of quantile %.*s is not a number "
          "in [0, 1]",
          setting, (int)(end - colon - 1), colon + 1, (int)(colon - p), p);
    n++;
  }
  memcpy(c->quantiles, q, n * sizeof q[0]);
  c->quantile_count = n;
  return NULL;
}

static srv_status_t *buckets(const char *setting, const char *v,
                             srv_metrics_config_t *c) {
  double b[SRV_METRICS_BUCKETS_MAX];
  uint32_t n = 0;
  for (const char *rest = v, *p, *end; next_item(&rest, &p, &end);) {
    if (n == SRV_METRICS_BUCKETS_MAX)
      return INVALID("--metrics-config '%s': more than %d buckets", setting,
                     SRV_METRICS_BUCKETS_MAX);
    if (!number(p, end, &b[n]) || b[n] <= 0)
      return INVALID(
          "--metrics-config '%s': bucket '%.*s' is not a positive number of "
          "microseconds",
          setting, (int)(end - p), p);
    if (n > 0 && b[n] <= b[n - 1])
      return INVALID(
          "--metrics-config '%s': bucket '%.*s' is not above the one before it "
          "(buckets must ascend)",
          setting, (int)(end - p), p);
    n++;
  }
  memcpy(c->buckets, b, n * sizeof b[0]);
  c->bucket_count = n;
  return NULL;
}

srv_status_t *srv_metrics_config_parse(srv_metrics_config_t *c, const char *setting) {
  const char *eq = strchr(setting, '=');
  if (eq == NULL || eq == setting)
    return INVALID("--metrics-config '%s': expected <key>=<value>", setting);
  size_t klen = (size_t)(eq - setting);
  const char *v = eq + 1;
  if (*v == '\0') return INVALID("--metrics-config '%s': the value is empty", setting);
#define KEY(k) (klen == sizeof(k) - 1 && memcmp(setting, k, klen) == 0)
  if (KEY("counter_latencies")) return boolean(setting, v, &c->counter_latencies);
  if (KEY("summary_latencies")) return boolean(setting, v, &c->summary_latencies);
  if (KEY("histogram_latencies")) return boolean(setting, v, &c->histogram_latencies);
  if (KEY("summary_quantiles")) return quantiles(setting, v, c);
  if (KEY("histogram_buckets")) return buckets(setting, v, c);
#undef KEY
  return INVALID(
      "--metrics-config '%s': unknown key '%.*s' (known: counter_latencies, "
      "summary_latencies, summary_quantiles, histogram_latencies, "
      "histogram_buckets)",
      setting, (int)klen, setting);
}
