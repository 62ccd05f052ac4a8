/* Host policies: forms and keys refused naming the setting, cpu-cores
 * lists, the last setting of a policy winning, the JSON for backends. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "server/common/host_policy.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "test/unit/unit.h"

static void expect_refused(const char *setting, grpc_status_code code,
                           const char *needle) {
  char *list[] = {(char *)setting};
  srv_status_t *st = srv_host_policy_check(list, 1);
  REQUIRE(st != NULL);
  CHECK_EQ_U64(srv_status_code(st), code);
  CHECK(strstr(srv_status_message(st), needle) != NULL);
  if (strstr(srv_status_message(st), needle) == NULL)
    fprintf(stderr, "  '%s' lacks '%s'\n", srv_status_message(st), needle);
  srv_status_free(st);
}

static void forms(void) {
  char *good[] = {"cpu,cpu-cores=0-3,6", "gpu_0,cpu-cores=1", "mine,cpu-cores=1023"};
  CHECK(srv_host_policy_check(good, 3) == NULL);
  expect_refused("cpu", GRPC_STATUS_INVALID_ARGUMENT, "expected <policy>,<key>=<value>");
  expect_refused(",cpu-cores=1", GRPC_STATUS_INVALID_ARGUMENT, "expected <policy>");
  expect_refused("cpu,cpu-cores=", GRPC_STATUS_INVALID_ARGUMENT, "expected <policy>");
  expect_refused("cpu,cores=1", GRPC_STATUS_INVALID_ARGUMENT, "unknown key 'cores'");
  expect_refused("cpu,cpu-cores=3-1", GRPC_STATUS_INVALID_ARGUMENT, "cpu-cores expects");
  expect_refused("cpu,cpu-cores=1024", GRPC_STATUS_INVALID_ARGUMENT, "below 1024");
  expect_refused("cpu,cpu-cores=1,,2", GRPC_STATUS_INVALID_ARGUMENT, "cpu-cores expects");
  expect_refused("cpu,cpu-cores=-1", GRPC_STATUS_INVALID_ARGUMENT, "cpu-cores expects");
  expect_refused("gpu_0,numa-node=0", GRPC_STATUS_UNIMPLEMENTED,
                 "Nereid binds no memory to NUMA nodes");
}

/* On a thread of its own: its affinity becomes core 0, the last setting
 * of "cpu"; a policy without cores leaves it. */
static void *bind_on_thread(void *arg) {
  (void)arg;
  char *list[] = {"cpu,cpu-cores=900", "cpu,cpu-cores=0", "other,cpu-cores=1023"};
  int cores = -1;
  srv_status_t *st = srv_host_policy_bind_thread(list, 3, "gpu_0", &cores);
  CHECK(st == NULL && cores == 0);
  st = srv_host_policy_bind_thread(list, 3, "cpu", &cores);
  CHECK(st == NULL && cores == 1);
  cpu_set_t set;
  CHECK(pthread_getaffinity_np(pthread_self(), sizeof set, &set) == 0);
  CHECK(CPU_COUNT(&set) == 1 && CPU_ISSET(0, &set));
  /* A core that is not there: an error naming the policy, nothing set. */
  st = srv_host_policy_bind_thread(list, 3, "other", &cores);
  CHECK(st != NULL && strstr(srv_status_message(st), "host policy 'other'") != NULL);
  srv_status_free(st);
  CHECK(pthread_getaffinity_np(pthread_self(), sizeof set, &set) == 0);
  CHECK(CPU_COUNT(&set) == 1 && CPU_ISSET(0, &set));
  return NULL;
}

static void cores_and_json(void) {
  char *list[] = {"cpu,cpu-cores=0-1", "gpu_0,cpu-cores=5", "cpu,cpu-cores=2,4-5"};
  pthread_t t;
  REQUIRE(pthread_create(&t, NULL, bind_on_thread, NULL) == 0);
  pthread_join(t, NULL);
  char *j = srv_host_policy_json(list, 3, "cpu");
  CHECK_STREQ(j, "{\"cpu\":{\"cpu-cores\":\"2,4-5\"}}");
  free(j);
  j = srv_host_policy_json(list, 3, "model");
  CHECK_STREQ(j, "{\"model\":{}}");
  free(j);
}

UNIT_MAIN("host_policy", UNIT_CASE(forms), UNIT_CASE(cores_and_json))
