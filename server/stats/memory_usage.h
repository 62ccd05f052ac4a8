/* The memory a model version's backend says its model and its instances
 * hold (TRITONBACKEND_ModelReportMemoryUsage and
 * ...ModelInstanceReportMemoryUsage), shown as ModelStatistics'
 * memory_usage. As in Triton, each reporter's latest report replaces its
 * previous one, and the statistics show the sum over reporters per memory
 * type and id. Reports come at load and reads with ModelStatistics, both
 * rare: one mutex, any thread. */
#ifndef NEREID_SERVER_STATS_MEMORY_USAGE_H
#define NEREID_SERVER_STATS_MEMORY_USAGE_H

#include <stdbool.h>
#include <stdint.h>

#include "triton/core/tritonserver.h"

/** Most entries one report may hold. */
#define SRV_MEMORY_USES_MAX 1024u

/** Bytes held in memory of one type on one device. */
typedef struct {
  TRITONSERVER_MemoryType type;
  int64_t id;
  uint64_t byte_size;
} srv_memory_use_t;

typedef struct srv_memory_usage srv_memory_usage_t;

srv_memory_usage_t *srv_memory_usage_new(void);

/** When no thread uses it any more. NULL is fine. */
void srv_memory_usage_free(srv_memory_usage_t *u);

/** Replaces what `reporter` (the model or one instance) reported before
 *  with `uses`; a (type, id) given twice keeps the last size, as Triton's
 *  map does. False, and nothing changed, past SRV_MEMORY_USES_MAX
 *  entries. */
bool srv_memory_usage_report(srv_memory_usage_t *u, const void *reporter,
                             const srv_memory_use_t *uses, uint32_t count);

/** The sums over reporters per (type, id), ordered by type then id, in a
 *  malloc'd array the caller frees (NULL when there is none); *count says
 *  how many. */
srv_memory_use_t *srv_memory_usage_sum(srv_memory_usage_t *u, uint32_t *count);

#endif
