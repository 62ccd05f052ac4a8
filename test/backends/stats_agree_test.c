/* The built-in backends' request and batch statistics of the same runs
 * agree: over known traffic (single requests, then dynamic batches) the
 * compute_input and compute_output totals of inference_stats equal those
 * summed over batch_stats, and batch_stats account for every request.
 * Before, the response sends counted in the requests' compute_output and
 * in the batches' compute_infer (compute_output 0), so perf_analyzer's
 * breakdown and batch_stats disagreed. Test thread and the server's. */
#include <string.h>
#include <time.h>

#include "server/model/model_view.h"
#include "server/repository/registry.h"
#include "server/stats/batch_stats.h"
#include "test/backends/call.h"
#include "test/unit/unit.h"

enum { SINGLES = 20, BATCHED = 32 };

static const char *kConfig =
    "{\"name\":\"ident\",\"backend\":\"identity\",\"max_batch_size\":8,"
    "\"dynamic_batching\":{\"max_queue_delay_microseconds\":20000},"
    "\"input\":[{\"name\":\"INPUT0\",\"data_type\":\"TYPE_INT32\",\"dims\":[16]}],"
    "\"output\":[{\"name\":\"OUTPUT0\",\"data_type\":\"TYPE_INT32\",\"dims\":[16]}]}";

typedef struct {
  uint64_t requests, input_ns, output_ns;  /* inference_stats */
  uint64_t batched, b_input_ns, b_output_ns; /* batch_stats summed */
} totals_t;

static bool totals_read(bt_server_t *s, totals_t *t) {
  srv_model_t *m = NULL;
  srv_status_t *st = srv_registry_acquire(s->srv.registry, "ident", 5, -1, &m);
  if (st != NULL) {
    srv_status_free(st);
    return false;
  }
  srv_stats_t *x = srv_model_stats(m);
  memset(t, 0, sizeof *t);
  srv_stats_totals_t sum;
  srv_stats_totals(x, &sum);
  t->requests = sum.success.count;
  t->input_ns = sum.compute_input.ns;
  t->output_ns = sum.compute_output.ns;
  srv_batch_stats_t *b;
  for (uint64_t size = 0; (b = srv_batch_table_next(x->batches, &size)) != NULL; size++) {
    t->batched += size * srv_stat_load(&b->compute_output.count);
    t->b_input_ns += srv_stat_load(&b->compute_input.ns);
    t->b_output_ns += srv_stat_load(&b->compute_output.ns);
  }
  srv_model_unref(m);
  return true;
}

/* Sends n requests at once and waits for all. */
static bool run(bt_server_t *s, int n) {
  static int32_t data[16];
  int64_t shape[2] = {1, 16};
  bt_call_t *calls[BATCHED];
  bool ok = true;
  for (int i = 0; i < n; i++) {
    calls[i] = bt_call_new(s, "ident");
    bt_call_input(calls[i], "INPUT0", TRITONSERVER_TYPE_INT32, shape, 2, data, sizeof data, 1);
    ok = bt_call_send(calls[i]) && ok;
  }
  for (int i = 0; i < n; i++) {
    ok = bt_call_wait_done(calls[i], bt_ms(10000)) && ok;
    bt_call_free(calls[i]);
  }
  return ok;
}

/* Batch reports follow the releases: wait until they cover every request. */
static bool settled(bt_server_t *s, uint64_t want, totals_t *t) {
  for (int i = 0; i < bt_ms(5000); i++) {
    if (totals_read(s, t) && t->requests == want && t->batched == want) return true;
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
  fprintf(stderr, "  requests %llu, batched %llu, wanted %llu\n",
          (unsigned long long)t->requests, (unsigned long long)t->batched,
          (unsigned long long)want);
  return false;
}

static void agree_body(bt_server_t *s) {
  for (int i = 0; i < SINGLES; i++) REQUIRE(run(s, 1));
  REQUIRE(run(s, BATCHED));
  totals_t t;
  REQUIRE(settled(s, SINGLES + BATCHED, &t));
  /* Sending a response takes time: the totals are not trivially zero. */
  CHECK(t.output_ns > 0);
  CHECK_EQ_U64(t.b_output_ns, t.output_ns);
  CHECK_EQ_U64(t.b_input_ns, t.input_ns);
}

static void request_and_batch_totals_agree(void) {
  CHECK(bt_with_model(BT_BACKENDS, NULL, "ident", kConfig, agree_body));
}

UNIT_MAIN("stats_agree", UNIT_CASE(request_and_batch_totals_agree))
