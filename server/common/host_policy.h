/* tritonserver's host policies (--host-policy=<policy>,<key>=<value>,
 * TRITONSERVER_ServerOptionsSetHostPolicy): settings for the instances
 * whose policy they name ("cpu", "gpu_<N>", "model", or an instance
 * group's host_policy). Nereid applies cpu-cores (the CPU affinity of the
 * instance's thread); numa-node is refused (no memory binding). Pure
 * functions over the flag strings: any thread. */
#ifndef NEREID_SERVER_COMMON_HOST_POLICY_H
#define NEREID_SERVER_COMMON_HOST_POLICY_H

#include <stdbool.h>
#include <stddef.h>

#include "server/common/status.h"

/** Longest policy name. */
#define SRV_HOST_POLICY_NAME_MAX 256

/** Checks every setting: its form, a known key, a cpu-cores list ("0-3,6":
 *  cores and ranges below CPU_SETSIZE); numa-node is UNIMPLEMENTED. The
 *  message names the flag and the setting. */
srv_status_t *srv_host_policy_check(char *const *settings, size_t n);

/** Sets the calling thread's CPU affinity to the cores of `policy` (its
 *  last cpu-cores setting). NULL with *cores 0 when no setting gives it
 *  cores, NULL with *cores the count once set, else a status naming the
 *  policy and the reason (the thread's affinity is unchanged). Only after
 *  srv_host_policy_check. */
srv_status_t *srv_host_policy_bind_thread(char *const *settings, size_t n,
                                          const char *policy, int *cores);

/** The policy as TRITONBACKEND_ModelInstanceHostPolicy gives it,
 *  {"<policy>":{"cpu-cores":"..."}}, JSON-escaped; the caller frees it.
 *  Only after srv_host_policy_check. */
char *srv_host_policy_json(char *const *settings, size_t n, const char *policy);

#endif
