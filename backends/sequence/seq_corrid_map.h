/* Accumulators keyed by correlation ID, for models whose sequence batcher
 * uses the `oldest` strategy (requests of any sequence in any batch slot).
 * Bounded: the server frees a sequence that idles past
 * max_sequence_idle_microseconds without telling the backend, so a
 * sequence that never sends END would otherwise hold its entry forever;
 * when the map is full, a new sequence replaces the one stepped least
 * recently. Single-threaded: one map per model instance, used only by
 * that instance's execute thread. */
#ifndef NEREID_BACKENDS_SEQUENCE_SEQ_CORRID_MAP_H
#define NEREID_BACKENDS_SEQUENCE_SEQ_CORRID_MAP_H

#include <stdbool.h>
#include <stdint.h>

/* Largest capacity a map accepts. */
#define SEQ_CORRID_MAP_MAX (1u << 16)

typedef struct seq_corrid_map seq_corrid_map_t;

/** A map for at most `capacity` sequences (1 .. SEQ_CORRID_MAP_MAX, larger
 *  values are clamped). Its memory is allocated here, once; NULL when out
 *  of memory. */
seq_corrid_map_t *seq_corrid_map_new(uint32_t capacity);

/** Frees the map; NULL is fine. */
void seq_corrid_map_free(seq_corrid_map_t *m);

/** Key's accumulator into *acc; false (*acc untouched) when key has none. */
bool seq_corrid_map_get(const seq_corrid_map_t *m, uint64_t key, int32_t *acc);

/** Sets key's accumulator and marks key as the most recently stepped. When
 *  key is new and the map is full, the least recently stepped sequence is
 *  dropped first; returns true in that case (worth a log line). */
bool seq_corrid_map_put(seq_corrid_map_t *m, uint64_t key, int32_t acc);

/** Forgets key (its sequence ended); nothing happens when key is absent. */
void seq_corrid_map_remove(seq_corrid_map_t *m, uint64_t key);

/** Number of sequences held. */
uint32_t seq_corrid_map_count(const seq_corrid_map_t *m);

#endif
