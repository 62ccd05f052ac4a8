/* Host CPU and memory (see cpu_stats.h): the sampler reads /proc, any
 * thread reads what it published. */
#include "server/metrics/cpu_stats.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

bool srv_cpu_stat_parse(const char *text, uint64_t *busy, uint64_t *total) {
  const char *line = text;
  while (line != NULL && strncmp(line, "cpu ", 4) != 0) {
    line = strchr(line, '\n');
    if (line != NULL) line++;
  }
  if (line == NULL) return false;
  uint64_t user, nice, sys, idle, iowait, irq, softirq, steal = 0;
  int n = sscanf(line + 4,
                 "%" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
                 " %" SCNu64 " %" SCNu64,
                 &user, &nice, &sys, &idle, &iowait, &irq, &softirq, &steal);
  if (n < 7) return false;
  *busy = user + nice + sys + irq + softirq + steal;
  *total = *busy + idle + iowait;
  return true;
}

double srv_cpu_utilization(uint64_t busy0, uint64_t total0, uint64_t busy1,
                           uint64_t total1) {
  if (total1 <= total0 || busy1 < busy0) return 0.0;
  double u = (double)(busy1 - busy0) / (double)(total1 - total0);
  return u > 1.0 ? 1.0 : u;
}

static bool meminfo_kb(const char *text, const char *key, uint64_t *kb) {
  size_t klen = strlen(key);
  for (const char *line = text; line != NULL && *line != '\0';) {
    if (strncmp(line, key, klen) == 0 && line[klen] == ':')
      return sscanf(line + klen + 1, "%" SCNu64, kb) == 1;
    line = strchr(line, '\n');
    if (line != NULL) line++;
  }
  return false;
}

bool srv_meminfo_parse(const char *text, uint64_t *total, uint64_t *used) {
  uint64_t t, avail;
  if (!meminfo_kb(text, "MemTotal", &t) || !meminfo_kb(text, "MemAvailable", &avail))
    return false;
  *total = t * 1024u;
  *used = (t > avail ? t - avail : 0) * 1024u;
  return true;
}

/* The whole of a small /proc file, NUL-terminated; false if unreadable. */
static bool slurp(const char *path, char *buf, size_t cap) {
  FILE *f = fopen(path, "r");
  if (f == NULL) return false;
  size_t n = fread(buf, 1, cap - 1, f);
  fclose(f);
  buf[n] = '\0';
  return n > 0;
}

/* Relaxed throughout: each value is read alone, and publishes nothing. */
void srv_metrics_cpu_sample(srv_metrics_cpu_t *c) {
  /* On the stack, not thread-local: libtritonserver.so's thread-locals
   * must stay small enough to fit the static TLS that a dlopen may use
   * (common/block_pool.c). The first lines are all we read. */
  char buf[16384];
  uint64_t busy, total;
  if (slurp("/proc/stat", buf, sizeof buf) && srv_cpu_stat_parse(buf, &busy, &total)) {
    if (c->have_prev) {
      double u = srv_cpu_utilization(c->busy, c->total, busy, total);
      uint64_t bits;
      memcpy(&bits, &u, sizeof bits);
      atomic_store_explicit(&c->utilization_bits, bits, memory_order_relaxed);
    }
    c->busy = busy;
    c->total = total;
    c->have_prev = true;
  }
  uint64_t mt, mu;
  if (slurp("/proc/meminfo", buf, sizeof buf) && srv_meminfo_parse(buf, &mt, &mu)) {
    atomic_store_explicit(&c->mem_total, mt, memory_order_relaxed);
    atomic_store_explicit(&c->mem_used, mu, memory_order_relaxed);
  }
}

void srv_metrics_cpu_init(srv_metrics_cpu_t *c) {
  memset(c, 0, sizeof *c);
  srv_metrics_cpu_sample(c);
}

double srv_metrics_cpu_utilization(const srv_metrics_cpu_t *c) {
  uint64_t bits = atomic_load_explicit(&((srv_metrics_cpu_t *)c)->utilization_bits,
                                       memory_order_relaxed);
  double u;
  memcpy(&u, &bits, sizeof u);
  return u;
}

uint64_t srv_metrics_cpu_mem_total(const srv_metrics_cpu_t *c) {
  return atomic_load_explicit(&((srv_metrics_cpu_t *)c)->mem_total, memory_order_relaxed);
}

uint64_t srv_metrics_cpu_mem_used(const srv_metrics_cpu_t *c) {
  return atomic_load_explicit(&((srv_metrics_cpu_t *)c)->mem_used, memory_order_relaxed);
}
