/* The call threads of a library cache (cache_calls.h): one mutex and one
 * condition variable over a FIFO of intrusive jobs. Blocking is the point
 * here: these threads exist to wait on the library, outside the actor
 * runtime. */
#include "server/cache/cache_calls.h"

#include <pthread.h>
#include <stdlib.h>

#include "server/common/log.h"

enum { MAX_THREADS = 16 };

struct srv_cache_calls {
  pthread_mutex_t lock;
  pthread_cond_t ready; /* a job was queued, or closing */
  srv_cache_job_t *head, *tail;
  uint32_t jobs, max_jobs;
  uint64_t bytes, max_bytes;
  bool closing;
  uint32_t thread_count;
  pthread_t threads[MAX_THREADS];
};

static srv_cache_job_t *pop_locked(srv_cache_calls_t *q) {
  srv_cache_job_t *j = q->head;
  q->head = j->next;
  if (q->head == NULL) q->tail = NULL;
  q->jobs--;
  q->bytes -= j->bytes;
  return j;
}

/* Runs jobs until closing and empty: a closing queue still runs what it
 * holds (requests waiting on a lookup get their answer). */
static void *call_thread(void *arg) {
  srv_cache_calls_t *q = arg;
  pthread_mutex_lock(&q->lock);
  for (;;) {
    while (q->head == NULL && !q->closing) pthread_cond_wait(&q->ready, &q->lock);
    if (q->head == NULL) break;
    srv_cache_job_t *j = pop_locked(q);
    pthread_mutex_unlock(&q->lock);
    j->run(j); /* frees j */
    pthread_mutex_lock(&q->lock);
  }
  pthread_mutex_unlock(&q->lock);
  return NULL;
}

srv_cache_calls_t *srv_cache_calls_new(uint32_t threads, uint32_t max_jobs,
                                       uint64_t max_bytes) {
  if (threads == 0) threads = 1;
  if (threads > MAX_THREADS) threads = MAX_THREADS;
  srv_cache_calls_t *q = calloc(1, sizeof *q);
  if (q == NULL) SRV_FATAL("out of memory");
  pthread_mutex_init(&q->lock, NULL);
  pthread_cond_init(&q->ready, NULL);
  q->max_jobs = max_jobs;
  q->max_bytes = max_bytes;
  for (uint32_t i = 0; i < threads; i++) {
    if (pthread_create(&q->threads[i], NULL, call_thread, q) != 0)
      SRV_FATAL("cannot start a response cache call thread");
    q->thread_count++;
  }
  return q;
}

bool srv_cache_calls_try_push(srv_cache_calls_t *q, srv_cache_job_t *job) {
  job->next = NULL;
  pthread_mutex_lock(&q->lock);
  bool fits = !q->closing && q->jobs < q->max_jobs && job->bytes <= q->max_bytes &&
              q->bytes <= q->max_bytes - job->bytes;
  if (fits) {
    if (q->tail != NULL)
      q->tail->next = job;
    else
      q->head = job;
    q->tail = job;
    q->jobs++;
    q->bytes += job->bytes;
    pthread_cond_signal(&q->ready);
  }
  pthread_mutex_unlock(&q->lock);
  return fits;
}

void srv_cache_calls_free(srv_cache_calls_t *q) {
  if (q == NULL) return;
  pthread_mutex_lock(&q->lock);
  q->closing = true;
  pthread_cond_broadcast(&q->ready);
  pthread_mutex_unlock(&q->lock);
  for (uint32_t i = 0; i < q->thread_count; i++) pthread_join(q->threads[i], NULL);
  pthread_cond_destroy(&q->ready);
  pthread_mutex_destroy(&q->lock);
  free(q);
}
