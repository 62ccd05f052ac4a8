/* A library cache's call threads: a few threads that run the library's
 * lookups and insertions, fed by one bounded queue, so that a library
 * waiting on the network (redis) never holds an actor worker or an
 * instance's thread. Push: any thread; jobs run on the call threads. See
 * cache.md, "Library calls off the workers". */
#ifndef NEREID_SERVER_CACHE_CACHE_CALLS_H
#define NEREID_SERVER_CACHE_CACHE_CALLS_H

#include <stdbool.h>
#include <stdint.h>

#include "server/cache/cache.h"

typedef struct srv_cache_calls srv_cache_calls_t;

/** `threads` call threads (1 to 16) and a queue of at most `max_jobs` jobs
 *  holding at most `max_bytes` (the sum of their `bytes`). Main thread. */
srv_cache_calls_t *srv_cache_calls_new(uint32_t threads, uint32_t max_jobs,
                                       uint64_t max_bytes);

/** Queues job (first in, first run); false when the queue is full or
 *  closing, and then job is still the caller's. Any thread; takes the
 *  queue's mutex for a few pointer moves, never waits for a job. */
bool srv_cache_calls_try_push(srv_cache_calls_t *q, srv_cache_job_t *job);

/** Runs what is queued, then stops and joins the threads and frees q.
 *  Nothing may push any more. Main thread. */
void srv_cache_calls_free(srv_cache_calls_t *q);

#endif
