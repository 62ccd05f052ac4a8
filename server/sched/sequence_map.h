/* Sequences by correlation ID, for the sequence scheduler's model actor:
 * a concurrencykit hash set (ck_hs) of srv_seq_t, keyed by the ID, which
 * is an integer or a string. The model actor's alone: one writer, no
 * reader elsewhere, so no lock and no epoch. */
#ifndef NEREID_SERVER_SCHED_SEQUENCE_MAP_H
#define NEREID_SERVER_SCHED_SEQUENCE_MAP_H

#include <stdbool.h>
#include <stdint.h>

#include "server/model/request.h"

struct srv_seq_slot;

/** A sequence the model actor knows: bound to a slot, or in the backlog. */
typedef struct srv_seq {
  uint64_t id;     /* the integer ID; 0 for a string one */
  char *id_string; /* the string ID (owned), or NULL */
  uint32_t id_len; /* bytes of id_string */
  unsigned long hash;
  bool mapped;               /* in the map (no END routed yet) */
  uint64_t owner;            /* its last START's seq_owner (request.h) */
  struct srv_seq_slot *slot; /* bound slot, or NULL while in the backlog */
  TRITONBACKEND_Request *backlog_head, *backlog_tail; /* before it has a slot */
  struct srv_seq *backlog_next;
} srv_seq_t;

typedef struct srv_seq_map srv_seq_map_t;

srv_seq_map_t *srv_seq_map_new(void);
void srv_seq_map_free(srv_seq_map_t *map);

/** Fills key's ID fields from request r (the string is borrowed). */
void srv_seq_key_of(srv_seq_map_t *map, const TRITONBACKEND_Request *r, srv_seq_t *key);

/** The sequence with key's ID, or NULL. */
srv_seq_t *srv_seq_map_get(srv_seq_map_t *map, const srv_seq_t *key);

/** A new sequence with key's ID (its string copied), added to the map. */
srv_seq_t *srv_seq_map_add(srv_seq_map_t *map, const srv_seq_t *key);

/** Takes s out of the map; it stays valid (seq->mapped false). */
void srv_seq_map_remove(srv_seq_map_t *map, srv_seq_t *s);

/** Frees s (out of the map). */
void srv_seq_free_one(srv_seq_t *s);

/** Sequences in the map. */
uint64_t srv_seq_map_count(const srv_seq_map_t *map);

/** Prints the ID of s into buf ("42", or the string, cut to fit). */
void srv_seq_id_print(const srv_seq_t *s, char *buf, size_t size);

#endif
