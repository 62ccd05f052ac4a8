/* GPU metrics (gpu_stats.h) against the stand-in NVML (test/nvml_mock,
 * first on LD_LIBRARY_PATH): two GPUs of known values rendered under
 * tritonserver's names, the energy counter moving from 0, and a driver
 * that lists no GPU leaving the page without GPU families. */
#include "server/metrics/gpu_stats.h"

#include <stdlib.h>
#include <string.h>

#include "test/unit/unit.h"

#define UUID0 "GPU-00000000-1111-2222-3333-444444444444"
#define UUID1 "GPU-55555555-6666-7777-8888-999999999999"

static void test_two_gpus(void) {
  setenv("NEREID_MOCK_NVML_GPUS", "2", 1);
  srv_metrics_gpu_t g;
  REQUIRE(srv_metrics_gpu_init(&g));
  CHECK_EQ_U64(g.count, 2);
  srv_metrics_gpu_sample(&g);
  srv_metrics_buf_t b = {0};
  srv_metrics_gpu_render(&g, &b);
  static const char *const want[] = {
      "# HELP nv_gpu_utilization GPU utilization rate [0.0 - 1.0)\n"
      "# TYPE nv_gpu_utilization gauge\n"
      "nv_gpu_utilization{gpu_uuid=\"" UUID0
      "\"} 0.42\n"
      "nv_gpu_utilization{gpu_uuid=\"" UUID1 "\"} 0.07\n",
      "# TYPE nv_gpu_memory_total_bytes gauge\n"
      "nv_gpu_memory_total_bytes{gpu_uuid=\"" UUID0 "\"} 85899345920\n",
      "nv_gpu_memory_used_bytes{gpu_uuid=\"" UUID1 "\"} 2147483648\n",
      "# HELP nv_gpu_power_usage GPU power usage in watts\n",
      "nv_gpu_power_usage{gpu_uuid=\"" UUID0 "\"} 123.456\n",
      "# HELP nv_gpu_power_limit GPU power management limit in watts\n",
      "nv_gpu_power_limit{gpu_uuid=\"" UUID1 "\"} 300\n",
      "# HELP nv_energy_consumption GPU energy consumption in joules since the "
      "Triton Server started\n# TYPE nv_energy_consumption counter\n",
      /* init read 5000 J, init's and this sample read +2 J each */
      "nv_energy_consumption{gpu_uuid=\"" UUID0 "\"} 4\n",
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    if (strstr(b.data, want[i]) == NULL) {
      CHECK(!"missing from the page");
      fprintf(stderr, "want:\n%s\npage:\n%s\n", want[i], b.data);
    }
  }
  srv_metrics_buf_free(&b);
  srv_metrics_gpu_free(&g);
  CHECK(g.count == 0 && g.dl == NULL);
}

static void test_no_gpu(void) {
  setenv("NEREID_MOCK_NVML_GPUS", "0", 1);
  srv_metrics_gpu_t g;
  CHECK(!srv_metrics_gpu_init(&g));
  srv_metrics_buf_t b = {0};
  srv_metrics_gpu_render(&g, &b);
  CHECK(b.len == 0);
  srv_metrics_buf_free(&b);
  srv_metrics_gpu_free(&g); /* empty: nothing to do */
}

UNIT_MAIN("gpu_stats", UNIT_CASE(test_two_gpus), UNIT_CASE(test_no_gpu))
