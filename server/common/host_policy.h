/* tritonserver's host policies (--host-policy=<policy>,<key>=<value>,
 * TRITONSERVER_ServerOptionsSetHostPolicy): settings for the instances
 * whose policy they name ("cpu", "gpu_<N>", "model", or an instance
 * group's host_policy). cpu-cores is the CPU affinity of the instance's
 * threads; numa-node binds their memory to that NUMA node (libnuma) and,
 * without cpu-cores, runs them on the node's CPUs. Checks are pure
 * functions over the flag strings (any thread); enter/leave change the
 * calling thread only. */
#ifndef NEREID_SERVER_COMMON_HOST_POLICY_H
#define NEREID_SERVER_COMMON_HOST_POLICY_H

#include <stdbool.h>
#include <stddef.h>

#include "server/common/status.h"

/** Longest policy name. */
#define SRV_HOST_POLICY_NAME_MAX 256
/** NUMA node numbers are below this (the kernel's largest MAX_NUMNODES). */
#define SRV_HOST_POLICY_NODES 1024

/** Checks every setting: its form, a known key, a cpu-cores list ("0-3,6":
 *  cores and ranges below CPU_SETSIZE), a numa-node number below
 *  SRV_HOST_POLICY_NODES. The message names the flag and the setting. */
srv_status_t *srv_host_policy_check(char *const *settings, size_t n);

/** Checks every numa-node against this machine, once at start, after
 *  srv_host_policy_check: the process can set memory policies
 *  (numa_available) and may allocate on that node. The message names the
 *  setting and the node. No numa-node setting: no NUMA call at all. */
srv_status_t *srv_host_policy_check_nodes(char *const *settings, size_t n);

/** What a thread held before srv_host_policy_enter changed it; opaque. */
typedef struct {
  unsigned long cpus[1024 / (8 * sizeof(unsigned long))]; /* a cpu_set_t */
  unsigned long nodes[SRV_HOST_POLICY_NODES / (8 * sizeof(unsigned long))];
  int mode;        /* get_mempolicy's mode, flags included */
  int cores;       /* CPUs the thread was given; 0: affinity untouched */
  int node;        /* the node its memory was bound to; -1: untouched */
  int thread_node; /* srv_host_policy_thread_node's answer before */
} srv_host_policy_saved_t;

/** Applies `policy` (its last cpu-cores and numa-node settings) to the
 *  calling thread, keeping what it held in *saved: its CPU affinity
 *  (cpu-cores, else the node's CPUs) and, with numa-node, its memory
 *  policy (MPOL_BIND to the node). Threads it creates afterwards inherit
 *  both. NULL once applied (a policy without settings changes nothing and
 *  makes no system call), else a status naming the policy and the reason,
 *  the thread unchanged. Only after srv_host_policy_check. */
srv_status_t *srv_host_policy_enter(char *const *settings, size_t n, const char *policy,
                                    srv_host_policy_saved_t *saved);

/** Binds the calling thread's memory to `node` (MPOL_BIND) and nothing
 *  else, keeping its previous memory policy in *saved for
 *  srv_host_policy_leave: the pinned pools (server/cuda/pinned.c) are
 *  allocated so. NULL once bound, else INTERNAL naming `policy` and the
 *  reason, the thread unchanged. `node` below SRV_HOST_POLICY_NODES. */
srv_status_t *srv_host_policy_memory_enter(const char *policy, int node,
                                           srv_host_policy_saved_t *saved);

/** Gives the calling thread back what srv_host_policy_enter (or
 *  srv_host_policy_memory_enter) saved (on that same thread). A failure is
 *  logged: it cannot be undone either. */
void srv_host_policy_leave(const srv_host_policy_saved_t *saved);

/** The NUMA node the calling thread's memory is bound to, -1 when none (or
 *  several): what srv_host_policy_enter set on this thread, else, asked
 *  once per thread and remembered, the kernel's (get_mempolicy: a thread
 *  created under a policy inherits it). A thread that changes its memory
 *  policy by other means than this file is not seen. Only where numa-node
 *  settings passed srv_host_policy_check_nodes; the pinned pools ask it
 *  only when there are several. */
int srv_host_policy_thread_node(void);

/** The distinct NUMA nodes that policies name (each policy's last
 *  numa-node), ascending, into nodes[0..max); their count (at most max).
 *  Only after srv_host_policy_check. */
size_t srv_host_policy_nodes(char *const *settings, size_t n, int *nodes, size_t max);

/** The policy as TRITONBACKEND_ModelInstanceHostPolicy gives it,
 *  {"<policy>":{"cpu-cores":"...","numa-node":"..."}}, JSON-escaped; the
 *  caller frees it. Only after srv_host_policy_check. */
char *srv_host_policy_json(char *const *settings, size_t n, const char *policy);

#endif
