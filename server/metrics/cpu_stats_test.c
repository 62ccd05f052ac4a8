/* Host CPU and memory (cpu_stats.h): the /proc parsers on fixed texts,
 * utilization between two samples, and a live sample of this machine. */
#include "server/metrics/cpu_stats.h"

#include <string.h>

#include "test/unit/unit.h"

static const char kStat[] =
    "cpu  100 20 30 400 50 6 7 8 9 10\n"
    "cpu0 50 10 15 200 25 3 3 4 4 5\n"
    "intr 12345\n";

static void test_stat(void) {
  uint64_t busy, total;
  REQUIRE(srv_cpu_stat_parse(kStat, &busy, &total));
  CHECK_EQ_U64(busy, 100 + 20 + 30 + 6 + 7 + 8); /* guest is inside user */
  CHECK_EQ_U64(total, busy + 400 + 50);
  CHECK(!srv_cpu_stat_parse("cpu0 1 2 3 4 5 6 7\n", &busy, &total));
  CHECK(!srv_cpu_stat_parse("cpu  1 2 3\n", &busy, &total));
  /* An older kernel without steal. */
  REQUIRE(srv_cpu_stat_parse("intr 1\ncpu  1 2 3 4 5 6 7\n", &busy, &total));
  CHECK_EQ_U64(busy, 1 + 2 + 3 + 6 + 7);
}

static void test_utilization(void) {
  CHECK(srv_cpu_utilization(100, 1000, 150, 1100) == 0.5);
  CHECK(srv_cpu_utilization(100, 1000, 100, 1000) == 0.0); /* no time */
  CHECK(srv_cpu_utilization(100, 1000, 90, 1100) == 0.0);  /* went back */
  CHECK(srv_cpu_utilization(0, 0, 300, 200) == 1.0);       /* clamped */
}

static void test_meminfo(void) {
  uint64_t total, used;
  REQUIRE(
      srv_meminfo_parse("MemTotal:       1000 kB\nMemFree:  100 kB\n"
                        "MemAvailable:    400 kB\n",
                        &total, &used));
  CHECK_EQ_U64(total, 1000 * 1024);
  CHECK_EQ_U64(used, 600 * 1024);
  CHECK(!srv_meminfo_parse("MemTotal: 1000 kB\n", &total, &used));
  CHECK(!srv_meminfo_parse("MemTotalX: 1 kB\nMemAvailable: 1 kB\n", &total, &used));
}

static void test_live(void) {
  srv_metrics_cpu_t c;
  srv_metrics_cpu_init(&c);
  CHECK(srv_metrics_cpu_utilization(&c) == 0.0);
  CHECK(srv_metrics_cpu_mem_total(&c) > 0);
  CHECK(srv_metrics_cpu_mem_used(&c) <= srv_metrics_cpu_mem_total(&c));
  volatile uint64_t spin = 0;
  for (int i = 0; i < 20000000; i++) spin += (uint64_t)i;
  srv_metrics_cpu_sample(&c);
  double u = srv_metrics_cpu_utilization(&c);
  CHECK(u >= 0.0 && u <= 1.0);
}

UNIT_MAIN("cpu_stats", UNIT_CASE(test_stat), UNIT_CASE(test_utilization),
          UNIT_CASE(test_meminfo), UNIT_CASE(test_live))
