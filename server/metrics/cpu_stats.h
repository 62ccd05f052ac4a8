/* CPU utilization and memory of the host, as tritonserver reports them
 * (nv_cpu_utilization, nv_cpu_memory_total_bytes, nv_cpu_memory_used_bytes):
 * /proc/stat deltas between two samples, and /proc/meminfo. One thread
 * samples (the metrics server's timer, every --metrics-interval-ms); any
 * thread reads the published values. */
#ifndef NEREID_SERVER_METRICS_CPU_STATS_H
#define NEREID_SERVER_METRICS_CPU_STATS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct {
  /* The sampler's alone: the previous /proc/stat totals. */
  uint64_t busy, total;
  bool have_prev;
  /* Published (relaxed stores; readers load each alone). */
  _Atomic uint64_t utilization_bits; /* a double in [0, 1], as its bits */
  _Atomic uint64_t mem_total, mem_used;
} srv_metrics_cpu_t;

/** Zeroes c and takes a first sample (utilization needs two: it reads 0
 *  until the next srv_metrics_cpu_sample). Main thread, before sampling. */
void srv_metrics_cpu_init(srv_metrics_cpu_t *c);

/** Reads /proc/stat and /proc/meminfo and publishes the utilization over
 *  the time since the last sample and the memory now. A file that cannot
 *  be read leaves its values as they were. One thread at a time. */
void srv_metrics_cpu_sample(srv_metrics_cpu_t *c);

/** The published values. Any thread. */
double srv_metrics_cpu_utilization(const srv_metrics_cpu_t *c);
uint64_t srv_metrics_cpu_mem_total(const srv_metrics_cpu_t *c);
uint64_t srv_metrics_cpu_mem_used(const srv_metrics_cpu_t *c);

/* ---- The parsers, pure, for tests ---- */

/** From /proc/stat's text, the aggregate "cpu" line: busy = user + nice +
 *  system + irq + softirq + steal, total = busy + idle + iowait (guest
 *  time is already inside user and nice). False when the line is missing
 *  or short. */
bool srv_cpu_stat_parse(const char *text, uint64_t *busy, uint64_t *total);

/** Busy share of the time between two samples, in [0, 1]; 0 when no time
 *  passed or the counters went back. */
double srv_cpu_utilization(uint64_t busy0, uint64_t total0, uint64_t busy1,
                           uint64_t total1);

/** From /proc/meminfo's text, in bytes: total = MemTotal, used = MemTotal -
 *  MemAvailable (tritonserver's reckoning). False when either is missing. */
bool srv_meminfo_parse(const char *text, uint64_t *total, uint64_t *used);

#endif
