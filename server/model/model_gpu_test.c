/* KIND_GPU instance groups against a stand-in runtime with two mock GPUs
 * (test/cuda_mock, first on LD_LIBRARY_PATH): Triton's KIND_AUTO, every GPU
 * when a group lists none, its gpu id check and message. One thread. */
#include <stdio.h>
#include <string.h>

#include "server/config/model_config.h"
#include "server/cuda/cuda.h"
#include "server/model/model_bare.h"
#include "test/unit/unit.h"

/* The completed config JSON of a model made from `text`, or the error. */
static srv_status_t *complete(const char *text, char *json, size_t len) {
  upb_Arena *a = upb_Arena_New();
  char err[256];
  inference_ModelConfig *c =
      cfg_model_config_parse(text, strlen(text), "test", a, err, sizeof err);
  if (c == NULL) {
    upb_Arena_Free(a);
    return srv_status_new(GRPC_STATUS_INTERNAL, "config does not parse: %s", err);
  }
  srv_model_t *m = NULL;
  srv_status_t *st = srv_model_bare_new("m", c, &m);
  upb_Arena_Free(a);
  if (st != NULL) return st;
  size_t n;
  snprintf(json, len, "%s", srv_model_bare_config_json(m, &n));
  srv_model_bare_free(m);
  return NULL;
}

static void gpu_instance_groups(void) {
  REQUIRE(srv_cuda_device_count(NULL) == 2);
  char json[4096];
  /* No gpus listed: every GPU. */
  REQUIRE(complete("backend: 'b' instance_group [{kind: KIND_GPU count: 2}]", json,
                   sizeof json) == NULL);
  CHECK(strstr(json, "\"kind\":\"KIND_GPU\"") != NULL);
  CHECK(strstr(json, "\"gpus\":[0,1]") != NULL);
  /* KIND_AUTO: GPU where GPUs exist, with all of them. */
  REQUIRE(complete("backend: 'b'", json, sizeof json) == NULL);
  CHECK(strstr(json, "\"kind\":\"KIND_GPU\"") != NULL);
  /* KIND_AUTO naming a GPU the server lacks: CPU, then refused as a CPU
   * group that lists GPUs (Triton's order). */
  srv_status_t *st =
      complete("backend: 'b' instance_group [{gpus: [7]}]", json, sizeof json);
  REQUIRE(st != NULL);
  CHECK(strstr(srv_status_message(st), "is KIND_CPU but lists GPUs") != NULL);
  srv_status_free(st);
  st = complete("backend: 'b' instance_group [{name: 'g' kind: KIND_GPU gpus: [1, 2]}]",
                json, sizeof json);
  REQUIRE(st != NULL);
  CHECK_STREQ(srv_status_message(st),
              "instance group g of model m specifies invalid or unsupported gpu id 2. "
              "GPUs with at least the minimum required CUDA compute compatibility of "
              "6.000000 are: 0, 1");
  srv_status_free(st);
  /* count x GPUs is held to the instance limit: 600 on each of 2 GPUs. */
  st = complete("backend: 'b' instance_group [{kind: KIND_GPU count: 600}]", json,
                sizeof json);
  if (st == NULL) {
    /* Completion lists the GPUs; instance creation (not run here) refuses. */
    CHECK(strstr(json, "\"count\":600") != NULL);
  } else {
    srv_status_free(st);
  }
}

UNIT_MAIN("model_gpu", UNIT_CASE(gpu_instance_groups))
