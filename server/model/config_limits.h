/* Bounds on what a model configuration may ask for: list lengths, tensor
 * ranks, name lengths, instances, priority levels and durations. Checked
 * once the config is parsed and before anything is sized from it, so that
 * a config can only be refused, never make the server allocate, spawn or
 * loop without bound. Any thread; the checks only read the config. The
 * README's "Limits" table lists every bound and why it is where it is. */
#ifndef NEREID_SERVER_MODEL_CONFIG_LIMITS_H
#define NEREID_SERVER_MODEL_CONFIG_LIMITS_H

#include <stdint.h>

#include "model_config.upb.h"
#include "server/common/status.h"

/** Entries in any one repeated field or map (inputs, outputs, instance
 *  groups, parameters, specific versions, ensemble steps...). */
#define SRV_CONFIG_LIST_MAX 4096u

/** Entries of a tensor shape: repeated integer fields named dims, shape or
 *  dim. The request checks print shapes of at most this rank. */
#define SRV_CONFIG_DIMS_MAX 64u

/** Bytes in a string field called `name` (tensors, instance groups...). */
#define SRV_CONFIG_NAME_MAX 1024u

/** Instances of one model version: each group's count, and their sum.
 *  Each instance is a thread. */
#define SRV_CONFIG_INSTANCES_MAX 1024u

/** dynamic_batching.priority_levels: the queue holds one list per level and
 *  scans them in order. */
#define SRV_CONFIG_PRIORITY_LEVELS_MAX 4096u

/** Any *_microseconds field: 365 days. Deadlines are kept in nanoseconds
 *  on the monotonic clock; this keeps now + delay far from overflowing. */
#define SRV_CONFIG_MICROSECONDS_MAX (365ull * 24 * 3600 * 1000 * 1000)

/** Sequence slots of one model version with sequence_batching: instances
 *  x slots per instance (max(1, max_batch_size), or
 *  oldest.max_candidate_sequences). Each slot holds its sequence's state
 *  buffers and queue. Checked by srv_seq_config_read (sched/), not by
 *  srv_config_limits_check. */
#define SRV_CONFIG_SEQUENCE_SLOTS_MAX 65536u

/** Bytes of initial state data (sequence_batching.state.initial_state):
 *  each data_file's size, each state's initial data, and all of a model
 *  version's together; 1 GiB. Checked by srv_seq_config_read, before a
 *  file is read. */
#define SRV_CONFIG_INITIAL_STATE_MAX ((uint64_t)1 << 30)

/** Checks the bounds above on `config`, all but the two of sequence
 *  batching. The status (INVALID_ARGUMENT) names the model, `source` (the
 *  config.pbtxt path, "config override"...), the field, its value and the
 *  limit. Time linear in the config's size. */
srv_status_t *srv_config_limits_check(const inference_ModelConfig *config,
                                      const char *model, const char *source);

/** The instances the config's groups ask for, summed in 64 bits (a count
 *  below 1 counts as 1, as completion makes it). */
uint64_t srv_config_instance_total(const inference_ModelConfig *config);

#endif
