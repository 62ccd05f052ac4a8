/* Timer-ordered job queue and its thread. The mutex guards the heap and the
 * stop flag; the scheduler thread steps jobs outside it, so pushes from the
 * execute thread never wait on a server call. */
#include "backends/repeat/repeat_sched.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "backends/common/clock.h"
#include "backends/common/error.h"

/* While jobs wait for their delay, cancellation is checked this often, so a
 * cancelled stream ends soon even when its next DELAY is long. */
#define CANCEL_POLL_NS 20000000ull

struct repeat_sched {
  pthread_mutex_t mu;
  pthread_cond_t cv;   /* CLOCK_MONOTONIC: due times are monotonic */
  repeat_job_t **heap; /* min-heap on due_ns */
  size_t len, cap;
  bool stopping;
  pthread_t thread;
};

/* ---- heap (callers hold mu) --------------------------------------------- */

static void swap(repeat_job_t **h, size_t i, size_t j) {
  repeat_job_t *t = h[i];
  h[i] = h[j];
  h[j] = t;
}

static void sift_up(repeat_job_t **h, size_t i) {
  while (i > 0 && h[(i - 1) / 2]->due_ns > h[i]->due_ns) {
    swap(h, i, (i - 1) / 2);
    i = (i - 1) / 2;
  }
}

static void sift_down(repeat_job_t **h, size_t len, size_t i) {
  for (;;) {
    size_t l = 2 * i + 1, r = l + 1, m = i;
    if (l < len && h[l]->due_ns < h[m]->due_ns) m = l;
    if (r < len && h[r]->due_ns < h[m]->due_ns) m = r;
    if (m == i) return;
    swap(h, i, m);
    i = m;
  }
}

static bool heap_push(repeat_sched_t *s, repeat_job_t *job) {
  if (s->len == s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 16;
    repeat_job_t **h = realloc(s->heap, cap * sizeof *h);
    if (h == NULL) return false;
    s->heap = h;
    s->cap = cap;
  }
  s->heap[s->len] = job;
  sift_up(s->heap, s->len++);
  return true;
}

static repeat_job_t *heap_pop(repeat_sched_t *s) {
  repeat_job_t *top = s->heap[0];
  s->heap[0] = s->heap[--s->len];
  sift_down(s->heap, s->len, 0);
  return top;
}

/* Makes cancelled jobs due now; their next step sends the final flag. */
static void promote_cancelled(repeat_sched_t *s) {
  bool moved = false;
  for (size_t i = 0; i < s->len; i++) {
    bool cancelled = false;
    BK_LOG_IF_ERROR(
        TRITONBACKEND_ResponseFactoryIsCancelled(s->heap[i]->factory, &cancelled),
        "checking for cancellation");
    if (cancelled && s->heap[i]->due_ns != 0) {
      s->heap[i]->due_ns = 0;
      moved = true;
    }
  }
  for (size_t i = s->len / 2; moved && i-- > 0;) sift_down(s->heap, s->len, i);
}

/* ---- thread --------------------------------------------------------------- */

static void wait_until(repeat_sched_t *s, uint64_t ns) {
  struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
  int rc = pthread_cond_timedwait(&s->cv, &s->mu, &ts);
  if (rc == ETIMEDOUT) promote_cancelled(s);
}

/* Sleeps until the earliest job is due (or a push/stop wakes it), steps it
 * outside the lock, and requeues it unless it finished. */
static void *run(void *arg) {
  repeat_sched_t *s = arg;
  pthread_mutex_lock(&s->mu);
  for (;;) {
    if (s->len == 0) {
      if (s->stopping) break;
      pthread_cond_wait(&s->cv, &s->mu);
      continue;
    }
    uint64_t now = bk_now_ns(), due = s->heap[0]->due_ns;
    if (due > now) {
      wait_until(s, due - now > CANCEL_POLL_NS ? now + CANCEL_POLL_NS : due);
      continue;
    }
    repeat_job_t *job = heap_pop(s);
    pthread_mutex_unlock(&s->mu);
    bool done = repeat_job_step(job);
    if (done) repeat_job_free(job);
    pthread_mutex_lock(&s->mu);
    /* Popping made room, so this push cannot need memory. */
    if (!done) heap_push(s, job);
  }
  pthread_mutex_unlock(&s->mu);
  return NULL;
}

TRITONSERVER_Error *repeat_sched_start(repeat_sched_t **out) {
  repeat_sched_t *s = calloc(1, sizeof *s);
  if (s == NULL) return bk_error(TRITONSERVER_ERROR_INTERNAL, "out of memory");
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_mutex_init(&s->mu, NULL);
  pthread_cond_init(&s->cv, &attr);
  pthread_condattr_destroy(&attr);
  int rc = pthread_create(&s->thread, NULL, run, s);
  if (rc != 0) {
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    free(s);
    return bk_error(TRITONSERVER_ERROR_INTERNAL,
                    "repeat: cannot start a thread (error %d)", rc);
  }
  *out = s;
  return NULL;
}

bool repeat_sched_push(repeat_sched_t *s, repeat_job_t *job) {
  pthread_mutex_lock(&s->mu);
  bool ok = heap_push(s, job);
  /* Wake the thread: this job may be due before the one it sleeps for. */
  if (ok) pthread_cond_signal(&s->cv);
  pthread_mutex_unlock(&s->mu);
  return ok;
}

void repeat_sched_stop(repeat_sched_t *s) {
  pthread_mutex_lock(&s->mu);
  s->stopping = true;
  pthread_cond_signal(&s->cv);
  pthread_mutex_unlock(&s->mu);
  pthread_join(s->thread, NULL);
  pthread_cond_destroy(&s->cv);
  pthread_mutex_destroy(&s->mu);
  free(s->heap);
  free(s);
}
