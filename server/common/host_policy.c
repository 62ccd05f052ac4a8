/* Host policies (see host_policy.h): the flag strings parsed on demand,
 * and a policy applied to the calling thread (its CPUs and, through
 * libnuma's set_mempolicy, its memory). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* cpu_set_t, pthread_setaffinity_np */
#endif
#include "server/common/host_policy.h"

#include <errno.h>
#include <jansson.h>
#include <numa.h>
#include <numaif.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/common/log.h"

_Static_assert(sizeof(cpu_set_t) == sizeof(((srv_host_policy_saved_t *)0)->cpus),
               "srv_host_policy_saved_t holds a cpu_set_t");

/* Bits of a node mask, plus one: set_mempolicy and get_mempolicy read
 * maxnode as one more than the bits they use. */
#define NODE_MASK_MAXNODE (SRV_HOST_POLICY_NODES + 1)
#define LONG_BITS (8 * sizeof(unsigned long))

/* "<policy>,<key>=<value>" split in place into a copy's parts. */
typedef struct {
  char buf[1024];
  const char *policy, *key, *value;
} setting_t;

static bool setting_split(const char *text, setting_t *s) {
  if (strlen(text) >= sizeof s->buf) return false;
  strcpy(s->buf, text);
  char *comma = strchr(s->buf, ',');
  if (comma == NULL || comma == s->buf) return false;
  char *eq = strchr(comma + 1, '=');
  if (eq == NULL || eq == comma + 1 || eq[1] == '\0') return false;
  *comma = '\0';
  *eq = '\0';
  s->policy = s->buf;
  s->key = comma + 1;
  s->value = eq + 1;
  return strlen(s->policy) <= SRV_HOST_POLICY_NAME_MAX;
}

/* A decimal core number below CPU_SETSIZE; *p moves past it. */
static bool core_parse(const char **p, int *core) {
  if (**p < '0' || **p > '9') return false;
  long v = 0;
  while (**p >= '0' && **p <= '9') {
    v = v * 10 + (**p - '0');
    if (v >= CPU_SETSIZE) return false;
    (*p)++;
  }
  *core = (int)v;
  return true;
}

/* A whole decimal NUMA node number below SRV_HOST_POLICY_NODES. */
static bool node_parse(const char *text, int *node) {
  long v = 0;
  const char *p = text;
  if (*p == '\0') return false;
  for (; *p >= '0' && *p <= '9'; p++) {
    v = v * 10 + (*p - '0');
    if (v >= SRV_HOST_POLICY_NODES) return false;
  }
  if (*p != '\0') return false;
  *node = (int)v;
  return true;
}

/* "0-3,6" into *set (cleared first). */
static bool cores_parse(const char *text, cpu_set_t *set) {
  CPU_ZERO(set);
  const char *p = text;
  for (;;) {
    int lo, hi;
    if (!core_parse(&p, &lo)) return false;
    hi = lo;
    if (*p == '-') {
      p++;
      if (!core_parse(&p, &hi) || hi < lo) return false;
    }
    for (int c = lo; c <= hi; c++) CPU_SET(c, set);
    if (*p == '\0') return true;
    if (*p++ != ',') return false;
  }
}

srv_status_t *srv_host_policy_check(char *const *settings, size_t n) {
  for (size_t i = 0; i < n; i++) {
    setting_t s;
    cpu_set_t set;
    if (!setting_split(settings[i], &s))
      return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                            "--host-policy '%.1024s': expected <policy>,<key>=<value> "
                            "(a policy name of at most %d bytes)",
                            settings[i], SRV_HOST_POLICY_NAME_MAX);
    int node;
    if (strcmp(s.key, "numa-node") == 0) {
      if (!node_parse(s.value, &node))
        return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                              "--host-policy '%s': numa-node expects a NUMA node "
                              "number below %d",
                              settings[i], SRV_HOST_POLICY_NODES);
      continue;
    }
    if (strcmp(s.key, "cpu-cores") != 0)
      return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                            "--host-policy '%s': unknown key '%s' (numa-node or "
                            "cpu-cores)",
                            settings[i], s.key);
    if (!cores_parse(s.value, &set))
      return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                            "--host-policy '%s': cpu-cores expects cores and ranges "
                            "such as 0-3,6, each below %d",
                            settings[i], CPU_SETSIZE);
  }
  return NULL;
}

/* The value of the last `key` setting of `policy`, split into *s; NULL
 * when none. */
static const char *setting_last(char *const *settings, size_t n, const char *policy,
                                const char *key, setting_t *s) {
  size_t last = n;
  for (size_t i = 0; i < n; i++)
    if (setting_split(settings[i], s) && strcmp(s->policy, policy) == 0 &&
        strcmp(s->key, key) == 0)
      last = i;
  if (last == n || !setting_split(settings[last], s)) return NULL;
  return s->value;
}

/* The nodes this process may allocate on, "0,2,3", cut to fit `size`. */
static void nodes_list(char *out, size_t size) {
  size_t used = 0;
  out[0] = '\0';
  for (int node = 0; node <= numa_max_node() && used < size; node++) {
    if (!numa_bitmask_isbitset(numa_all_nodes_ptr, (unsigned)node)) continue;
    int w = snprintf(out + used, size - used, "%s%d", used > 0 ? "," : "", node);
    if (w < 0) break;
    used += (size_t)w;
  }
}

srv_status_t *srv_host_policy_check_nodes(char *const *settings, size_t n) {
  for (size_t i = 0; i < n; i++) {
    setting_t s;
    int node;
    if (!setting_split(settings[i], &s) || strcmp(s.key, "numa-node") != 0 ||
        !node_parse(s.value, &node))
      continue;
    /* numa_available's own probe, made here to keep its errno: EPERM
     * where seccomp forbids the call (Docker's default profile, unless
     * CAP_SYS_NICE), ENOSYS on a kernel without NUMA. */
    if (get_mempolicy(NULL, NULL, 0, NULL, 0) != 0)
      return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                            "--host-policy '%s': this process cannot set NUMA memory "
                            "policies (get_mempolicy: %s; in a container they need "
                            "CAP_SYS_NICE)",
                            settings[i], strerror(errno));
    if (node > numa_max_node() ||
        !numa_bitmask_isbitset(numa_all_nodes_ptr, (unsigned)node)) {
      char nodes[128];
      nodes_list(nodes, sizeof nodes);
      return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                            "--host-policy '%s': NUMA node %d is not a node this "
                            "process may allocate memory on (nodes: %s)",
                            settings[i], node, nodes);
    }
  }
  return NULL;
}

/* The CPUs of NUMA node `node`, from sysfs: the same list form as
 * cpu-cores. An empty set for a node without CPUs (memory only). Read
 * here rather than through numa_node_to_cpus, whose cache is not safe
 * for loader threads that call it at once. */
static bool node_cpus(int node, cpu_set_t *set) {
  char path[64], text[8192];
  snprintf(path, sizeof path, "/sys/devices/system/node/node%d/cpulist", node);
  FILE *f = fopen(path, "r");
  if (f == NULL) return false;
  size_t len = fread(text, 1, sizeof text - 1, f);
  bool whole = feof(f) && !ferror(f);
  fclose(f);
  if (!whole) return false;
  text[len] = '\0';
  while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == ' ')) text[--len] = '\0';
  if (len == 0) {
    CPU_ZERO(set);
    return true;
  }
  return cores_parse(text, set);
}

/* The thread's CPUs for the policy: cpu-cores, else the node's; an empty
 * set leaves the affinity as it is. */
static srv_status_t *cpus_target(const char *policy, const char *cores, int node,
                                 cpu_set_t *set) {
  CPU_ZERO(set);
  if (cores != NULL) {
    if (!cores_parse(cores, set)) CPU_ZERO(set); /* checked at start */
    return NULL;
  }
  if (node >= 0 && !node_cpus(node, set))
    return srv_status_new(GRPC_STATUS_INTERNAL,
                          "host policy '%s': cannot read the CPUs of NUMA node %d "
                          "(/sys/devices/system/node/node%d/cpulist)",
                          policy, node, node);
  return NULL;
}

static void cpus_restore(const srv_host_policy_saved_t *saved) {
  cpu_set_t old;
  memcpy(&old, saved->cpus, sizeof old);
  int rc = pthread_setaffinity_np(pthread_self(), sizeof old, &old);
  if (rc != 0)
    SRV_ERROR("host policy: cannot give a thread its CPUs back: %s", strerror(rc));
}

/* The node the thread's memory is bound to, as srv_host_policy_thread_node
 * answers it; THREAD_NODE_UNKNOWN until set or asked. Per thread: only that
 * thread reads or writes it. */
#define THREAD_NODE_UNKNOWN (-2)
static _Thread_local int thread_node = THREAD_NODE_UNKNOWN;

/* MPOL_BIND to `node`, the thread's previous policy kept in *saved. */
static srv_status_t *memory_bind(const char *policy, int node,
                                 srv_host_policy_saved_t *saved) {
  unsigned long mask[SRV_HOST_POLICY_NODES / LONG_BITS] = {0};
  mask[node / LONG_BITS] = 1UL << (node % LONG_BITS);
  if (get_mempolicy(&saved->mode, saved->nodes, NODE_MASK_MAXNODE, NULL, 0) != 0 ||
      set_mempolicy(MPOL_BIND, mask, NODE_MASK_MAXNODE) != 0)
    return srv_status_new(GRPC_STATUS_INTERNAL,
                          "host policy '%s': cannot bind memory to NUMA node %d: %s",
                          policy, node, strerror(errno));
  saved->node = node;
  saved->thread_node = thread_node;
  thread_node = node;
  return NULL;
}

srv_status_t *srv_host_policy_memory_enter(const char *policy, int node,
                                           srv_host_policy_saved_t *saved) {
  saved->cores = 0;
  saved->node = -1;
  return memory_bind(policy, node, saved);
}

int srv_host_policy_thread_node(void) {
  if (thread_node != THREAD_NODE_UNKNOWN) return thread_node;
  /* Once per thread: a thread created under a policy inherits the bind
   * without entering it. One node set: that node; none or several: -1. */
  unsigned long mask[SRV_HOST_POLICY_NODES / LONG_BITS] = {0};
  int mode, node = -1, count = 0;
  if (get_mempolicy(&mode, mask, NODE_MASK_MAXNODE, NULL, 0) == 0)
    for (size_t w = 0; w < sizeof mask / sizeof mask[0]; w++)
      for (unsigned b = 0; b < LONG_BITS; b++)
        if (mask[w] & (1UL << b)) {
          node = (int)(w * LONG_BITS + b);
          count++;
        }
  thread_node = count == 1 ? node : -1;
  return thread_node;
}

size_t srv_host_policy_nodes(char *const *settings, size_t n, int *nodes, size_t max) {
  size_t count = 0;
  for (size_t i = 0; i < n; i++) {
    setting_t s, later;
    int node;
    if (!setting_split(settings[i], &s) || strcmp(s.key, "numa-node") != 0 ||
        !node_parse(s.value, &node))
      continue;
    bool last = true; /* a later numa-node of the same policy wins */
    for (size_t j = i + 1; j < n && last; j++)
      last =
          !(setting_split(settings[j], &later) && strcmp(later.key, "numa-node") == 0 &&
            strcmp(later.policy, s.policy) == 0);
    size_t at = 0;
    while (at < count && nodes[at] < node) at++;
    if (!last || (at < count && nodes[at] == node) || count == max) continue;
    memmove(&nodes[at + 1], &nodes[at], (count - at) * sizeof nodes[0]);
    nodes[at] = node;
    count++;
  }
  return count;
}

srv_status_t *srv_host_policy_enter(char *const *settings, size_t n, const char *policy,
                                    srv_host_policy_saved_t *saved) {
  setting_t cs, ns;
  const char *cores = setting_last(settings, n, policy, "cpu-cores", &cs);
  const char *node_text = setting_last(settings, n, policy, "numa-node", &ns);
  int node = -1;
  saved->cores = 0;
  saved->node = -1;
  if (node_text != NULL && !node_parse(node_text, &node))
    node = -1; /* checked at start */
  if (cores == NULL && node < 0) return NULL;
  cpu_set_t set, old;
  srv_status_t *st = cpus_target(policy, cores, node, &set);
  if (st != NULL) return st;
  if (CPU_COUNT(&set) > 0) {
    int rc = pthread_getaffinity_np(pthread_self(), sizeof old, &old);
    if (rc == 0) rc = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    if (rc != 0 && cores != NULL)
      return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                            "host policy '%s': cannot run on cpu-cores %s: %s", policy,
                            cores, strerror(rc));
    if (rc != 0)
      return srv_status_new(
          GRPC_STATUS_INTERNAL,
          "host policy '%s': cannot run on the CPUs of NUMA node %d: %s", policy, node,
          strerror(rc));
    memcpy(saved->cpus, &old, sizeof old);
    saved->cores = CPU_COUNT(&set);
  }
  if (node < 0) return NULL;
  st = memory_bind(policy, node, saved);
  if (st != NULL && saved->cores > 0) {
    cpus_restore(saved); /* not OK: nothing changed */
    saved->cores = 0;
  }
  return st;
}

void srv_host_policy_leave(const srv_host_policy_saved_t *saved) {
  if (saved->node >= 0) {
    thread_node = saved->thread_node;
    /* The mode comes back with its flags, as set_mempolicy takes it;
     * MPOL_DEFAULT takes no nodes. */
    int rc = saved->mode == MPOL_DEFAULT
                 ? set_mempolicy(MPOL_DEFAULT, NULL, 0)
                 : set_mempolicy(saved->mode, saved->nodes, NODE_MASK_MAXNODE);
    if (rc != 0)
      SRV_ERROR("host policy: cannot give a thread its memory policy back: %s",
                strerror(errno));
  }
  if (saved->cores > 0) cpus_restore(saved);
}

char *srv_host_policy_json(char *const *settings, size_t n, const char *policy) {
  setting_t cs, ns;
  const char *cores = setting_last(settings, n, policy, "cpu-cores", &cs);
  const char *node = setting_last(settings, n, policy, "numa-node", &ns);
  json_t *inner = json_object();
  if (inner == NULL ||
      (cores != NULL &&
       json_object_set_new(inner, "cpu-cores", json_string(cores)) != 0) ||
      (node != NULL && json_object_set_new(inner, "numa-node", json_string(node)) != 0))
    SRV_FATAL("out of memory");
  json_t *doc = json_object();
  if (doc == NULL || json_object_set_new(doc, policy, inner) != 0)
    SRV_FATAL("out of memory");
  char *out = json_dumps(doc, JSON_COMPACT);
  json_decref(doc);
  if (out == NULL) SRV_FATAL("out of memory");
  return out;
}
