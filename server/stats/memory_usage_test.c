/* Reported memory usage: a reporter's report replaces its last one, a
 * (type, id) given twice in one report keeps its last size, reporters sum
 * per (type, id) in type-then-id order, the bound holds; and the backend
 * API on top, NULLs refused. Main thread. */
#include "server/stats/memory_usage.h"

#include <stdlib.h>

#include "server/api/buffer_attributes.h"
#include "server/api/error.h"
#include "server/model/model.h"
#include "test/unit/unit.h"

static void reports_replace_and_sum(void) {
  srv_memory_usage_t *u = srv_memory_usage_new();
  int model, instance;
  uint32_t n = 7;
  CHECK(srv_memory_usage_sum(u, &n) == NULL && n == 0);
  const srv_memory_use_t first[3] = {{TRITONSERVER_MEMORY_GPU, 1, 10},
                                     {TRITONSERVER_MEMORY_CPU, 0, 5},
                                     {TRITONSERVER_MEMORY_GPU, 1, 40}};
  CHECK(srv_memory_usage_report(u, &model, first, 3));
  const srv_memory_use_t inst[2] = {{TRITONSERVER_MEMORY_GPU, 0, 7},
                                    {TRITONSERVER_MEMORY_GPU, 1, 2}};
  CHECK(srv_memory_usage_report(u, &instance, inst, 2));
  srv_memory_use_t *sum = srv_memory_usage_sum(u, &n);
  REQUIRE(sum != NULL && n == 3);
  CHECK(sum[0].type == TRITONSERVER_MEMORY_CPU && sum[0].byte_size == 5);
  CHECK(sum[1].type == TRITONSERVER_MEMORY_GPU && sum[1].id == 0 && sum[1].byte_size == 7);
  CHECK(sum[2].type == TRITONSERVER_MEMORY_GPU && sum[2].id == 1 && sum[2].byte_size == 42);
  free(sum);
  /* The model reports again: its old figures go. */
  const srv_memory_use_t second[1] = {{TRITONSERVER_MEMORY_CPU_PINNED, 0, 3}};
  CHECK(srv_memory_usage_report(u, &model, second, 1));
  sum = srv_memory_usage_sum(u, &n);
  REQUIRE(sum != NULL && n == 3);
  CHECK(sum[0].type == TRITONSERVER_MEMORY_CPU_PINNED && sum[0].byte_size == 3);
  CHECK(sum[2].byte_size == 2);
  free(sum);
  /* An empty report clears the reporter. */
  CHECK(srv_memory_usage_report(u, &instance, NULL, 0));
  CHECK(srv_memory_usage_report(u, &model, NULL, 0));
  CHECK(srv_memory_usage_sum(u, &n) == NULL && n == 0);
  srv_memory_use_t *big = calloc(SRV_MEMORY_USES_MAX + 1, sizeof *big);
  REQUIRE(big != NULL);
  CHECK(!srv_memory_usage_report(u, &model, big, SRV_MEMORY_USES_MAX + 1));
  CHECK(srv_memory_usage_report(u, &model, big, SRV_MEMORY_USES_MAX));
  sum = srv_memory_usage_sum(u, &n);
  CHECK(n == 1 && sum != NULL); /* all the same pair */
  free(sum);
  free(big);
  srv_memory_usage_free(u);
}

static int code_of(TRITONSERVER_Error *err) {
  if (err == NULL) return -1;
  int c = (int)TRITONSERVER_ErrorCode(err);
  TRITONSERVER_ErrorDelete(err);
  return c;
}

static void backend_api(void) {
  srv_model_t model = {.name = "m"};
  srv_stats_init(&model.stats, 0);
  struct TRITONBACKEND_ModelInstance inst = {.model = &model};
  TRITONSERVER_BufferAttributes a;
  api_buffer_attributes_describe(&a, 64, TRITONSERVER_MEMORY_GPU, 0, NULL);
  TRITONSERVER_BufferAttributes *usage[2] = {&a, NULL};
  CHECK(code_of(TRITONBACKEND_ModelReportMemoryUsage(&model, usage, 1)) == -1);
  CHECK(code_of(TRITONBACKEND_ModelInstanceReportMemoryUsage(&inst, usage, 1)) == -1);
  CHECK(code_of(TRITONBACKEND_ModelReportMemoryUsage(&model, usage, 2)) ==
        TRITONSERVER_ERROR_INVALID_ARG);
  CHECK(code_of(TRITONBACKEND_ModelReportMemoryUsage(&model, NULL, 1)) ==
        TRITONSERVER_ERROR_INVALID_ARG);
  CHECK(code_of(TRITONBACKEND_ModelInstanceReportMemoryUsage(NULL, usage, 1)) ==
        TRITONSERVER_ERROR_INVALID_ARG);
  uint32_t n = 0;
  srv_memory_use_t *sum = srv_memory_usage_sum(model.stats.memory, &n);
  REQUIRE(sum != NULL && n == 1);
  CHECK(sum[0].byte_size == 128); /* the model's 64 and the instance's 64 */
  free(sum);
  srv_stats_free(&model.stats);
}

UNIT_MAIN("memory_usage", UNIT_CASE(reports_replace_and_sum), UNIT_CASE(backend_api))
