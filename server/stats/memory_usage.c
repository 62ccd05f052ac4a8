/* Reported memory usage (see memory_usage.h). Reporters are few (the model
 * and its instances) and each holds few pairs: plain arrays under a mutex,
 * merged and sorted only when read. */
#include "server/stats/memory_usage.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "server/common/log.h"

typedef struct {
  const void *who;
  srv_memory_use_t *uses;
  uint32_t count;
} reporter_t;

struct srv_memory_usage {
  pthread_mutex_t mu;
  reporter_t *reporters;
  uint32_t count, cap;
};

srv_memory_usage_t *srv_memory_usage_new(void) {
  srv_memory_usage_t *u = calloc(1, sizeof *u);
  if (u == NULL) SRV_FATAL("out of memory");
  pthread_mutex_init(&u->mu, NULL);
  return u;
}

void srv_memory_usage_free(srv_memory_usage_t *u) {
  if (u == NULL) return;
  for (uint32_t i = 0; i < u->count; i++) free(u->reporters[i].uses);
  free(u->reporters);
  pthread_mutex_destroy(&u->mu);
  free(u);
}

static int use_order(const void *pa, const void *pb) {
  const srv_memory_use_t *a = pa, *b = pb;
  if (a->type != b->type) return a->type < b->type ? -1 : 1;
  return a->id < b->id ? -1 : a->id > b->id;
}

/* Sorts uses[0..n) and folds equal (type, id) pairs into one, summing
 * their sizes. Returns how many are left. */
static uint32_t fold_sum(srv_memory_use_t *uses, uint32_t n) {
  if (n == 0) return 0;
  qsort(uses, n, sizeof *uses, use_order);
  uint32_t out = 0;
  for (uint32_t i = 1; i < n; i++) {
    if (use_order(&uses[out], &uses[i]) == 0)
      uses[out].byte_size += uses[i].byte_size;
    else
      uses[++out] = uses[i];
  }
  return out + 1;
}

/* A copy of uses where a pair given twice keeps its last size, as Triton's
 * map assignment does; NULL with *out 0 when there is nothing. Quadratic,
 * over at most SRV_MEMORY_USES_MAX entries. */
static srv_memory_use_t *distinct_last(const srv_memory_use_t *uses, uint32_t n,
                                       uint32_t *out) {
  *out = 0;
  if (n == 0) return NULL;
  srv_memory_use_t *d = malloc(n * sizeof *d);
  if (d == NULL) SRV_FATAL("out of memory");
  for (uint32_t i = 0; i < n; i++) {
    uint32_t j = 0;
    while (j < *out && use_order(&d[j], &uses[i]) != 0) j++;
    d[j] = uses[i];
    if (j == *out) (*out)++;
  }
  return d;
}

bool srv_memory_usage_report(srv_memory_usage_t *u, const void *reporter,
                             const srv_memory_use_t *uses, uint32_t count) {
  if (count > SRV_MEMORY_USES_MAX) return false;
  uint32_t n;
  srv_memory_use_t *d = distinct_last(uses, count, &n);
  pthread_mutex_lock(&u->mu);
  reporter_t *r = NULL;
  for (uint32_t i = 0; i < u->count && r == NULL; i++)
    if (u->reporters[i].who == reporter) r = &u->reporters[i];
  if (r == NULL) {
    if (u->count == u->cap) {
      u->cap = u->cap ? 2 * u->cap : 4;
      u->reporters = realloc(u->reporters, u->cap * sizeof *u->reporters);
      if (u->reporters == NULL) SRV_FATAL("out of memory");
    }
    r = &u->reporters[u->count++];
    r->who = reporter;
    r->uses = NULL;
  }
  free(r->uses);
  r->uses = d;
  r->count = n;
  pthread_mutex_unlock(&u->mu);
  return true;
}

srv_memory_use_t *srv_memory_usage_sum(srv_memory_usage_t *u, uint32_t *count) {
  pthread_mutex_lock(&u->mu);
  uint64_t total = 0;
  for (uint32_t i = 0; i < u->count; i++) total += u->reporters[i].count;
  srv_memory_use_t *all = NULL;
  if (total > 0) {
    all = malloc(total * sizeof *all);
    if (all == NULL) SRV_FATAL("out of memory");
    uint64_t at = 0;
    for (uint32_t i = 0; i < u->count; i++) {
      if (u->reporters[i].count == 0) continue; /* its uses are NULL */
      memcpy(all + at, u->reporters[i].uses, u->reporters[i].count * sizeof *all);
      at += u->reporters[i].count;
    }
  }
  pthread_mutex_unlock(&u->mu);
  *count = fold_sum(all, (uint32_t)total);
  if (*count == 0) {
    free(all);
    return NULL;
  }
  return all;
}
