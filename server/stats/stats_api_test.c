/* TRITONBACKEND_ModelInstanceReportStatistics and ...ReportBatchStatistics
 * as Triton counts them: inferences per successful request (at least one
 * each), executions and per-size entries per batch report, batch size 0
 * (what Triton's identity backend reports for a model that does not
 * batch) accepted. Main thread. */
#include "server/model/model.h"
#include "server/stats/batch_stats.h"
#include "test/unit/unit.h"

static uint64_t ld(_Atomic uint64_t *v) { return srv_stat_load(v); }

static srv_stats_totals_t totals(srv_stats_t *s) {
  srv_stats_totals_t t;
  srv_stats_totals(s, &t);
  return t;
}

static void batch_size_zero_is_an_execution(void) {
  srv_model_t model = {.name = "identity_nobatch"};
  srv_stats_init(&model.stats, 0);
  struct TRITONBACKEND_ModelInstance inst = {.model = &model};
  TRITONBACKEND_Request req = {.model = &model,
                               .state = srv_infer_state_new(NULL),
                               .batch_size = 1};
  for (int i = 0; i < 3; i++) {
    CHECK(TRITONBACKEND_ModelInstanceReportStatistics(&inst, &req, true, 100, 110, 150, 160) ==
          NULL);
    CHECK(TRITONBACKEND_ModelInstanceReportBatchStatistics(&inst, 0, 100, 100, 160, 160) ==
          NULL);
  }
  srv_stats_t *s = &model.stats;
  CHECK_EQ_U64(totals(s).inference_count, 3);
  CHECK_EQ_U64(totals(s).execution_count, 3);
  CHECK_EQ_U64(totals(s).success.count, 3);
  uint64_t size = 0;
  srv_batch_stats_t *b = srv_batch_table_next(s->batches, &size);
  REQUIRE(b != NULL);
  CHECK_EQ_U64(size, 0);
  CHECK_EQ_U64(ld(&b->compute_infer.count), 3);
  CHECK_EQ_U64(ld(&b->compute_infer.ns), 3 * 60);
  /* Size 1 shares the leaf but never ran: no count. */
  size = 1;
  b = srv_batch_table_next(s->batches, &size);
  CHECK(b != NULL && ld(&b->compute_infer.count) == 0);
  srv_infer_state_unref(req.state);
  srv_stats_free(s);
}

/* Inferences come from the requests (their batch sizes), executions from
 * the batch reports; a failed request infers nothing. */
static void inferences_per_request(void) {
  srv_model_t model = {.name = "batching"};
  srv_stats_init(&model.stats, 8);
  struct TRITONBACKEND_ModelInstance inst = {.model = &model};
  TRITONBACKEND_Request a = {.model = &model, .state = srv_infer_state_new(NULL),
                             .batch_size = 3};
  TRITONBACKEND_Request b = {.model = &model, .state = srv_infer_state_new(NULL),
                             .batch_size = 2};
  CHECK(TRITONBACKEND_ModelInstanceReportStatistics(&inst, &a, true, 1, 2, 3, 4) == NULL);
  CHECK(TRITONBACKEND_ModelInstanceReportStatistics(&inst, &b, false, 1, 2, 3, 4) == NULL);
  CHECK(TRITONBACKEND_ModelInstanceReportBatchStatistics(&inst, 3, 1, 2, 3, 4) == NULL);
  CHECK_EQ_U64(totals(&model.stats).inference_count, 3);
  CHECK_EQ_U64(totals(&model.stats).execution_count, 1);
  CHECK_EQ_U64(totals(&model.stats).fail.count, 1);
  /* Past max_batch_size: refused (Triton takes any size). */
  TRITONSERVER_Error *err = TRITONBACKEND_ModelInstanceReportBatchStatistics(&inst, 9, 1, 2, 3, 4);
  CHECK(err != NULL && TRITONSERVER_ErrorCode(err) == TRITONSERVER_ERROR_INVALID_ARG);
  TRITONSERVER_ErrorDelete(err);
  srv_infer_state_unref(a.state);
  srv_infer_state_unref(b.state);
  srv_stats_free(&model.stats);
}

UNIT_MAIN("stats_api", UNIT_CASE(batch_size_zero_is_an_execution),
          UNIT_CASE(inferences_per_request))
