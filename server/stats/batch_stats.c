/* The sparse per-batch-size table (see batch_stats.h). Index i (the batch
 * size, 0 included) lives in node i / NODE_SPAN, leaf (i % NODE_SPAN) /
 * LEAF, slot i % LEAF. Nodes are sized to the part of the limit they cover, so a
 * model with max_batch_size 8 has one node of one pointer. */
#include "server/stats/batch_stats.h"

#include <stdlib.h>

#include "server/common/log.h"

#define NODE_SPAN ((uint64_t)SRV_BATCH_STATS_LEAF * SRV_BATCH_STATS_NODE)

/* Every slot is a `void *_Atomic` (srv_stats_block's): a node slot holds
 * an array of leaf_count(n) leaf slots, a leaf slot an array of LEAF
 * srv_batch_stats_t. */
typedef void *_Atomic slot_t;

struct srv_batch_table {
  uint32_t limit;
  uint32_t node_count;
  slot_t nodes[]; /* node_count of them */
};

srv_batch_table_t *srv_batch_table_new(uint32_t limit) {
  uint32_t nodes = (uint32_t)(limit / NODE_SPAN) + 1;
  srv_batch_table_t *t = calloc(1, sizeof *t + nodes * sizeof t->nodes[0]);
  if (t == NULL) SRV_FATAL("out of memory");
  t->limit = limit;
  t->node_count = nodes;
  return t;
}

/* Leaves in node n: every leaf for the sizes it covers up to the limit. */
static uint32_t leaf_count(const srv_batch_table_t *t, uint32_t n) {
  uint64_t last = t->limit - (uint64_t)n * NODE_SPAN; /* offset of `limit` in it */
  return last >= NODE_SPAN ? SRV_BATCH_STATS_NODE
                           : (uint32_t)(last / SRV_BATCH_STATS_LEAF) + 1;
}

void srv_batch_table_free(srv_batch_table_t *t) {
  if (t == NULL) return;
  for (uint32_t n = 0; n < t->node_count; n++) {
    slot_t *node = atomic_load_explicit(&t->nodes[n], memory_order_relaxed);
    if (node == NULL) continue;
    for (uint32_t l = 0; l < leaf_count(t, n); l++)
      free(atomic_load_explicit(&node[l], memory_order_relaxed));
    free(node);
  }
  free(t);
}

srv_batch_stats_t *srv_batch_table_entry(srv_batch_table_t *t, uint64_t size) {
  if (size > t->limit) return NULL;
  uint32_t n = (uint32_t)(size / NODE_SPAN);
  uint32_t l = (uint32_t)(size % NODE_SPAN / SRV_BATCH_STATS_LEAF);
  /* Every report after a size's first finds both levels made: two loads,
   * not two calls (issue 21). Acquire: as srv_stats_block's own load. */
  slot_t *node = atomic_load_explicit(&t->nodes[n], memory_order_acquire);
  if (node == NULL)
    node = srv_stats_block(&t->nodes[n], leaf_count(t, n) * sizeof(slot_t));
  srv_batch_stats_t *leaf = atomic_load_explicit(&node[l], memory_order_acquire);
  if (leaf == NULL)
    leaf = srv_stats_block(&node[l], SRV_BATCH_STATS_LEAF * sizeof(srv_batch_stats_t));
  return &leaf[size % SRV_BATCH_STATS_LEAF];
}

srv_batch_stats_t *srv_batch_table_next(srv_batch_table_t *t, uint64_t *size) {
  uint64_t i = *size;
  while (i <= t->limit) {
    uint32_t n = (uint32_t)(i / NODE_SPAN);
    /* Acquire (both levels): pairs with the installing CAS, so the zeroed
     * block is seen. */
    slot_t *node = atomic_load_explicit(&t->nodes[n], memory_order_acquire);
    if (node == NULL) {
      i = (uint64_t)(n + 1) * NODE_SPAN;
      continue;
    }
    uint32_t l = (uint32_t)(i % NODE_SPAN / SRV_BATCH_STATS_LEAF);
    srv_batch_stats_t *leaf = atomic_load_explicit(&node[l], memory_order_acquire);
    if (leaf == NULL) {
      i = (uint64_t)n * NODE_SPAN + (uint64_t)(l + 1) * SRV_BATCH_STATS_LEAF;
      continue;
    }
    *size = i;
    return &leaf[i % SRV_BATCH_STATS_LEAF];
  }
  return NULL;
}
