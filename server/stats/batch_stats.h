/* Statistics per batch size of one model version (Triton's batch_stats),
 * kept sparse: a two-level table whose blocks are made on the first report
 * of a size in their range and installed with a CAS. Memory follows the
 * batch sizes that really ran, never max_batch_size, which may be in the
 * millions (Triton puts no bound on it). Instance threads report, any
 * thread reads; lock-free. */
#ifndef NEREID_SERVER_STATS_BATCH_STATS_H
#define NEREID_SERVER_STATS_BATCH_STATS_H

#include <stdint.h>

#include "server/stats/stats.h"

/** Batch sizes per leaf block, and leaves per node: a node covers
 *  SRV_BATCH_STATS_LEAF * SRV_BATCH_STATS_NODE sizes. */
#define SRV_BATCH_STATS_LEAF 16u
#define SRV_BATCH_STATS_NODE 4096u

typedef struct srv_batch_table srv_batch_table_t;

/** A table for batch sizes 0..limit; its top level takes 8 bytes per
 *  65536 sizes of `limit`. Size 0 is what Triton's backends report for a
 *  model that does not batch (Triton's identity backend does). */
srv_batch_table_t *srv_batch_table_new(uint32_t limit);

/** Frees the table and its blocks. When no thread uses it any more. */
void srv_batch_table_free(srv_batch_table_t *t);

/** The statistics of batch size `size`, made on first use; NULL when size
 *  is past the limit. Any thread, lock-free. */
srv_batch_stats_t *srv_batch_table_entry(srv_batch_table_t *t, uint64_t size);

/** The entry of the smallest size >= *size that has one (whose block was
 *  made), with *size set to it; NULL when there is none. Skips absent
 *  blocks whole, so a walk costs the blocks made, not the limit. Any
 *  thread. */
srv_batch_stats_t *srv_batch_table_next(srv_batch_table_t *t, uint64_t *size);

#endif
