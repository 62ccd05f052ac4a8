/* Host policies: forms and keys refused naming the setting, cpu-cores
 * lists, numa-node checked against this machine, a policy applied to a
 * thread and given back (affinity and memory policy read back from the
 * kernel), the last setting of a policy winning, the JSON for backends. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "server/common/host_policy.h"

#include <numa.h>
#include <numaif.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test/unit/unit.h"

#define MAXNODE (SRV_HOST_POLICY_NODES + 1)

static void expect_message(srv_status_t *st, grpc_status_code code, const char *needle) {
  REQUIRE(st != NULL);
  CHECK_EQ_U64(srv_status_code(st), code);
  CHECK(strstr(srv_status_message(st), needle) != NULL);
  if (strstr(srv_status_message(st), needle) == NULL)
    fprintf(stderr, "  '%s' lacks '%s'\n", srv_status_message(st), needle);
  srv_status_free(st);
}

static void expect_refused(const char *setting, grpc_status_code code,
                           const char *needle) {
  char *list[] = {(char *)setting};
  expect_message(srv_host_policy_check(list, 1), code, needle);
}

static void forms(void) {
  char *good[] = {"cpu,cpu-cores=0-3,6", "gpu_0,cpu-cores=1", "mine,cpu-cores=1023",
                  "gpu_0,numa-node=0", "mine,numa-node=1023"};
  CHECK(srv_host_policy_check(good, 5) == NULL);
  expect_refused("cpu", GRPC_STATUS_INVALID_ARGUMENT, "expected <policy>,<key>=<value>");
  expect_refused(",cpu-cores=1", GRPC_STATUS_INVALID_ARGUMENT, "expected <policy>");
  expect_refused("cpu,cpu-cores=", GRPC_STATUS_INVALID_ARGUMENT, "expected <policy>");
  expect_refused("cpu,cores=1", GRPC_STATUS_INVALID_ARGUMENT, "unknown key 'cores'");
  expect_refused("cpu,cpu-cores=3-1", GRPC_STATUS_INVALID_ARGUMENT, "cpu-cores expects");
  expect_refused("cpu,cpu-cores=1024", GRPC_STATUS_INVALID_ARGUMENT, "below 1024");
  expect_refused("cpu,cpu-cores=1,,2", GRPC_STATUS_INVALID_ARGUMENT, "cpu-cores expects");
  expect_refused("cpu,cpu-cores=-1", GRPC_STATUS_INVALID_ARGUMENT, "cpu-cores expects");
  expect_refused(
      "gpu_0,numa-node=1024", GRPC_STATUS_INVALID_ARGUMENT,
      "'gpu_0,numa-node=1024': numa-node expects a NUMA node number below 1024");
  expect_refused("gpu_0,numa-node=-1", GRPC_STATUS_INVALID_ARGUMENT, "numa-node expects");
  expect_refused("gpu_0,numa-node=0x1", GRPC_STATUS_INVALID_ARGUMENT,
                 "numa-node expects");
  expect_refused("gpu_0,numa-node=99999999999999999999", GRPC_STATUS_INVALID_ARGUMENT,
                 "numa-node expects");
}

/* Whether this process may set memory policies at all (not under a
 * seccomp profile that forbids it), and a node it may allocate on. */
static bool numa_usable(void) { return get_mempolicy(NULL, NULL, 0, NULL, 0) == 0; }

static int first_node(void) {
  for (int node = 0; node <= numa_max_node(); node++)
    if (numa_bitmask_isbitset(numa_all_nodes_ptr, (unsigned)node)) return node;
  return 0;
}

static void numa_nodes_checked(void) {
  char absent[64], present[64];
  snprintf(absent, sizeof absent, "gpu_0,numa-node=%d", numa_max_node() + 1);
  snprintf(present, sizeof present, "gpu_0,numa-node=%d", first_node());
  char *cores[] = {"cpu,cpu-cores=0"};
  CHECK(srv_host_policy_check_nodes(cores, 1) == NULL); /* no NUMA call */
  char *bad[] = {"cpu,cpu-cores=0", absent};
  char *good[] = {present, "cpu,cpu-cores=0"};
  srv_status_t *st = srv_host_policy_check_nodes(bad, 2);
  if (!numa_usable()) {
    fprintf(stderr, "  no NUMA memory policies here: only the refusal is checked\n");
    expect_message(st, GRPC_STATUS_INVALID_ARGUMENT, "cannot set NUMA memory policies");
    expect_message(srv_host_policy_check_nodes(good, 2), GRPC_STATUS_INVALID_ARGUMENT,
                   "cannot set NUMA memory policies");
    return;
  }
  char needle[128];
  snprintf(needle, sizeof needle, "'%s': NUMA node %d is not a node this process may",
           absent, numa_max_node() + 1);
  expect_message(st, GRPC_STATUS_INVALID_ARGUMENT, needle);
  CHECK(srv_host_policy_check_nodes(good, 2) == NULL);
}

/* On a thread of its own: its affinity becomes core 0, the last setting
 * of "cpu"; a policy without settings leaves it; leave gives it back. */
static void *bind_on_thread(void *arg) {
  (void)arg;
  char *list[] = {"cpu,cpu-cores=900", "cpu,cpu-cores=0", "other,cpu-cores=1023"};
  srv_host_policy_saved_t saved;
  cpu_set_t before, set;
  CHECK(pthread_getaffinity_np(pthread_self(), sizeof before, &before) == 0);
  srv_status_t *st = srv_host_policy_enter(list, 3, "gpu_0", &saved);
  CHECK(st == NULL && saved.cores == 0 && saved.node == -1);
  st = srv_host_policy_enter(list, 3, "cpu", &saved);
  CHECK(st == NULL && saved.cores == 1 && saved.node == -1);
  CHECK(pthread_getaffinity_np(pthread_self(), sizeof set, &set) == 0);
  CHECK(CPU_COUNT(&set) == 1 && CPU_ISSET(0, &set));
  srv_host_policy_leave(&saved);
  CHECK(pthread_getaffinity_np(pthread_self(), sizeof set, &set) == 0);
  CHECK(CPU_EQUAL(&set, &before));
  /* A core that is not there: an error naming the policy, nothing set. */
  st = srv_host_policy_enter(list, 3, "other", &saved);
  expect_message(st, GRPC_STATUS_INVALID_ARGUMENT,
                 "host policy 'other': cannot run on cpu-cores 1023");
  CHECK(pthread_getaffinity_np(pthread_self(), sizeof set, &set) == 0);
  CHECK(CPU_EQUAL(&set, &before));
  return NULL;
}

static int mode_now(unsigned long *nodes) {
  int mode = -1;
  CHECK(get_mempolicy(&mode, nodes, MAXNODE, NULL, 0) == 0);
  return mode;
}

/* A thread started under a policy: it inherits the memory binding, and
 * srv_host_policy_thread_node finds the node without entering a policy. */
typedef struct {
  int mode, node;
} child_t;

static void *child_mode(void *arg) {
  unsigned long nodes[SRV_HOST_POLICY_NODES / (8 * sizeof(unsigned long))] = {0};
  child_t *c = arg;
  c->mode = mode_now(nodes);
  c->node = srv_host_policy_thread_node();
  return NULL;
}

/* numa-node alone: memory bound to the node, CPUs the node's; with
 * cpu-cores: the cores narrow the CPUs; leave: the default policy and the
 * old affinity again; a node that is not there: nothing changed. */
static void numa_apply(int node) {
  char alone[64], both[64], gone[64];
  snprintf(alone, sizeof alone, "bound,numa-node=%d", node);
  snprintf(both, sizeof both, "both,numa-node=%d", node);
  snprintf(gone, sizeof gone, "gone,numa-node=%d", numa_max_node() + 1);
  char *list[] = {alone, both, "both,cpu-cores=0", gone, "gone,cpu-cores=0"};
  unsigned long nodes[SRV_HOST_POLICY_NODES / (8 * sizeof(unsigned long))];
  unsigned long bit = 1UL << (node % (8 * sizeof(unsigned long)));
  size_t word = (size_t)node / (8 * sizeof(unsigned long));
  srv_host_policy_saved_t saved;
  cpu_set_t before, set;
  CHECK(pthread_getaffinity_np(pthread_self(), sizeof before, &before) == 0);
  CHECK(mode_now(nodes) == MPOL_DEFAULT);
  CHECK(srv_host_policy_thread_node() == -1);

  REQUIRE(srv_host_policy_enter(list, 5, "bound", &saved) == NULL);
  CHECK(saved.node == node);
  CHECK(srv_host_policy_thread_node() == node);
  CHECK(mode_now(nodes) == MPOL_BIND && nodes[word] == bit);
  CHECK(pthread_getaffinity_np(pthread_self(), sizeof set, &set) == 0);
  CHECK(saved.cores == 0 || CPU_COUNT(&set) == saved.cores);
  child_t child = {-1, -1};
  pthread_t t;
  REQUIRE(pthread_create(&t, NULL, child_mode, &child) == 0);
  pthread_join(t, NULL);
  CHECK(child.mode == MPOL_BIND);
  CHECK(child.node == node);
  srv_host_policy_leave(&saved);
  CHECK(mode_now(nodes) == MPOL_DEFAULT);
  CHECK(srv_host_policy_thread_node() == -1);
  CHECK(pthread_getaffinity_np(pthread_self(), sizeof set, &set) == 0);
  CHECK(CPU_EQUAL(&set, &before));

  REQUIRE(srv_host_policy_enter(list, 5, "both", &saved) == NULL);
  CHECK(saved.cores == 1 && saved.node == node);
  CHECK(mode_now(nodes) == MPOL_BIND && nodes[word] == bit);
  CHECK(pthread_getaffinity_np(pthread_self(), sizeof set, &set) == 0);
  CHECK(CPU_COUNT(&set) == 1 && CPU_ISSET(0, &set));
  srv_host_policy_leave(&saved);
  CHECK(mode_now(nodes) == MPOL_DEFAULT);

  char needle[96];
  snprintf(needle, sizeof needle,
           "host policy 'gone': cannot bind memory to NUMA node %d", numa_max_node() + 1);
  expect_message(srv_host_policy_enter(list, 5, "gone", &saved), GRPC_STATUS_INTERNAL,
                 needle);
  CHECK(mode_now(nodes) == MPOL_DEFAULT);
  CHECK(pthread_getaffinity_np(pthread_self(), sizeof set, &set) == 0);
  CHECK(CPU_EQUAL(&set, &before));
}

static void *numa_on_thread(void *arg) {
  numa_apply(*(int *)arg);
  return NULL;
}

static void threads_bound(void) {
  pthread_t t;
  REQUIRE(pthread_create(&t, NULL, bind_on_thread, NULL) == 0);
  pthread_join(t, NULL);
  if (!numa_usable()) {
    fprintf(stderr, "  no NUMA memory policies here: numa-node not applied\n");
    return;
  }
  int node = first_node();
  REQUIRE(pthread_create(&t, NULL, numa_on_thread, &node) == 0);
  pthread_join(t, NULL);
}

/* Memory only, as the pinned pools bind it: the CPUs stay. */
static void memory_only(int node) {
  unsigned long nodes[SRV_HOST_POLICY_NODES / (8 * sizeof(unsigned long))];
  cpu_set_t before, set;
  CHECK(pthread_getaffinity_np(pthread_self(), sizeof before, &before) == 0);
  srv_host_policy_saved_t saved;
  REQUIRE(srv_host_policy_memory_enter("pool", node, &saved) == NULL);
  CHECK(saved.cores == 0 && saved.node == node);
  CHECK(mode_now(nodes) == MPOL_BIND);
  CHECK(srv_host_policy_thread_node() == node);
  CHECK(pthread_getaffinity_np(pthread_self(), sizeof set, &set) == 0);
  CHECK(CPU_EQUAL(&set, &before));
  srv_host_policy_leave(&saved);
  CHECK(mode_now(nodes) == MPOL_DEFAULT);
  CHECK(srv_host_policy_thread_node() == -1);
}

static void *memory_only_on_thread(void *arg) {
  memory_only(*(int *)arg);
  return NULL;
}

static void nodes_named(void) {
  /* Each policy's last numa-node, distinct, ascending. */
  char *list[] = {"a,numa-node=7", "b,numa-node=3",    "b,numa-node=1", "c,cpu-cores=0",
                  "d,numa-node=7", "e,numa-node=1023", "f,numa-node=0"};
  int nodes[8];
  size_t n = srv_host_policy_nodes(list, 7, nodes, 8);
  REQUIRE(n == 4);
  CHECK(nodes[0] == 0 && nodes[1] == 1 && nodes[2] == 7 && nodes[3] == 1023);
  CHECK(srv_host_policy_nodes(list, 3, nodes, 8) == 2);
  CHECK(srv_host_policy_nodes(list + 3, 1, nodes, 8) == 0);
  if (!numa_usable()) return;
  int node = first_node();
  pthread_t t;
  REQUIRE(pthread_create(&t, NULL, memory_only_on_thread, &node) == 0);
  pthread_join(t, NULL);
}

static void json(void) {
  char *list[] = {"cpu,cpu-cores=0-1", "gpu_0,cpu-cores=5", "cpu,cpu-cores=2,4-5",
                  "gpu_0,numa-node=1", "gpu_0,numa-node=0"};
  char *j = srv_host_policy_json(list, 5, "cpu");
  CHECK_STREQ(j, "{\"cpu\":{\"cpu-cores\":\"2,4-5\"}}");
  free(j);
  j = srv_host_policy_json(list, 5, "gpu_0");
  CHECK_STREQ(j, "{\"gpu_0\":{\"cpu-cores\":\"5\",\"numa-node\":\"0\"}}");
  free(j);
  j = srv_host_policy_json(list, 5, "model");
  CHECK_STREQ(j, "{\"model\":{}}");
  free(j);
}

UNIT_MAIN("host_policy", UNIT_CASE(forms), UNIT_CASE(numa_nodes_checked),
          UNIT_CASE(threads_bound), UNIT_CASE(nodes_named), UNIT_CASE(json))
