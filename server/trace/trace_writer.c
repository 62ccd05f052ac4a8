/* The trace file writer (see trace_writer.h). Producers: any thread that
 * drops a record's last share, under `mu`. Everything about the files is
 * the writer thread's alone. */
#include "server/trace/trace_writer.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/common/log.h"
#include "server/common/memory.h"
#include "server/trace/trace_record.h"

struct srv_trace_writer {
  pthread_t thread;
  pthread_mutex_t mu; /* guards the queue, queued, stop and the counts */
  pthread_cond_t cond;
  srv_trace_record_t *head, *tail;
  size_t queued; /* bytes in the queue */
  bool stop;
  uint64_t written, dropped;
  /* The writer thread's alone. */
  char *path;
  FILE *main;     /* `path`, once its first trace came */
  uint32_t index; /* next `path.<index>` */
  char *pending;  /* traces waiting for their indexed file, comma-joined */
  size_t pending_len, pending_cap;
  uint32_t pending_count;
  uint64_t io_errors; /* logged: the first, then every 1000th */
};

/* A file that cannot be made or written (its folder went, the disk is
 * full) fails for every trace: the log says so without one line each. */
static void io_error(srv_trace_writer_t *w, const char *what, const char *file) {
  if (w->io_errors++ % 1000 == 0)
    SRV_ERROR("trace file '%s': %s: %s (%llu trace file errors so far)", file, what,
              strerror(errno), (unsigned long long)w->io_errors);
}

/* One whole array in `path.<index>`. */
static void indexed_write(srv_trace_writer_t *w) {
  if (w->pending_count == 0) return;
  size_t n = strlen(w->path) + 16;
  char *name = malloc(n);
  if (name == NULL) SRV_FATAL("out of memory");
  snprintf(name, n, "%s.%u", w->path, w->index++);
  FILE *f = fopen(name, "w");
  if (f == NULL) {
    io_error(w, "cannot create", name);
  } else {
    fputc('[', f);
    fwrite(w->pending, 1, w->pending_len, f);
    fputc(']', f);
    if (fclose(f) != 0) io_error(w, "cannot write", name);
  }
  free(name);
  w->pending_len = 0;
  w->pending_count = 0;
}

static void pending_add(srv_trace_writer_t *w, const srv_trace_record_t *r) {
  srv_trace_text_grow(&w->pending, &w->pending_cap, w->pending_len + r->len + 1, 4096);
  if (w->pending_len > 0) w->pending[w->pending_len++] = ',';
  memcpy(w->pending + w->pending_len, r->text, r->len);
  w->pending_len += r->len;
  w->pending_count++;
  if (w->pending_count >= r->log_frequency) indexed_write(w);
}

static void main_add(srv_trace_writer_t *w, const srv_trace_record_t *r) {
  bool first = w->main == NULL;
  if (first) {
    w->main = fopen(w->path, "w");
    if (w->main == NULL) {
      io_error(w, "cannot create", w->path);
      return;
    }
  }
  fputc(first ? '[' : ',', w->main);
  fwrite(r->text, 1, r->len, w->main);
  /* Flushed per batch (writer_loop), so a reader sees whole traces. */
}

static void record_write(srv_trace_writer_t *w, srv_trace_record_t *r) {
  if (r->dropped > 0)
    SRV_WARN("a trace left out %u entries past its limit of %u bytes", r->dropped,
             SRV_TRACE_RECORD_MAX);
  if (r->len > 0) {
    if (r->log_frequency == 0)
      main_add(w, r);
    else
      pending_add(w, r);
  }
  srv_trace_record_free(r);
}

static void *writer_loop(void *arg) {
  srv_trace_writer_t *w = arg;
  pthread_mutex_lock(&w->mu);
  for (;;) {
    while (w->head == NULL && !w->stop) pthread_cond_wait(&w->cond, &w->mu);
    srv_trace_record_t *batch = w->head;
    bool stop = w->stop && batch == NULL;
    w->head = w->tail = NULL;
    w->queued = 0;
    if (stop) break;
    pthread_mutex_unlock(&w->mu);
    uint64_t n = 0;
    while (batch != NULL) {
      srv_trace_record_t *next = batch->next;
      record_write(w, batch);
      batch = next;
      n++;
    }
    if (w->main != NULL && fflush(w->main) != 0) io_error(w, "cannot write", w->path);
    pthread_mutex_lock(&w->mu);
    w->written += n;
  }
  pthread_mutex_unlock(&w->mu);
  /* Shutdown: what waits for its index goes to the next one (Triton's). */
  indexed_write(w);
  if (w->main != NULL) {
    fputc(']', w->main);
    if (fclose(w->main) != 0) io_error(w, "cannot write", w->path);
    w->main = NULL;
  }
  return NULL;
}

srv_status_t *srv_trace_writer_start(const char *path, srv_trace_writer_t **out) {
  srv_trace_writer_t *w = calloc(1, sizeof *w);
  if (w == NULL) SRV_FATAL("out of memory");
  w->path = srv_strdup(path);
  pthread_mutex_init(&w->mu, NULL);
  pthread_cond_init(&w->cond, NULL);
  int rc = pthread_create(&w->thread, NULL, writer_loop, w);
  if (rc != 0) {
    pthread_cond_destroy(&w->cond);
    pthread_mutex_destroy(&w->mu);
    free(w->path);
    free(w);
    return srv_status_new(GRPC_STATUS_RESOURCE_EXHAUSTED,
                          "cannot start the trace file writer: %s", strerror(rc));
  }
  *out = w;
  return NULL;
}

void srv_trace_writer_push(srv_trace_writer_t *w, srv_trace_record_t *r) {
  r->next = NULL;
  pthread_mutex_lock(&w->mu);
  if (w->stop || w->queued + r->len > SRV_TRACE_QUEUE_MAX) {
    bool first = w->dropped == 0;
    w->dropped++;
    pthread_mutex_unlock(&w->mu);
    if (first)
      SRV_WARN("trace file writer behind by more than %u bytes: traces are dropped",
               SRV_TRACE_QUEUE_MAX);
    srv_trace_record_free(r);
    return;
  }
  w->queued += r->len;
  bool wake = w->head == NULL;
  if (w->tail != NULL)
    w->tail->next = r;
  else
    w->head = r;
  w->tail = r;
  pthread_mutex_unlock(&w->mu);
  if (wake) pthread_cond_signal(&w->cond);
}

void srv_trace_writer_counts(srv_trace_writer_t *w, uint64_t *written,
                             uint64_t *dropped) {
  pthread_mutex_lock(&w->mu);
  *written = w->written;
  *dropped = w->dropped;
  pthread_mutex_unlock(&w->mu);
}

void srv_trace_writer_stop(srv_trace_writer_t *w) {
  pthread_mutex_lock(&w->mu);
  w->stop = true;
  pthread_mutex_unlock(&w->mu);
  pthread_cond_signal(&w->cond);
  pthread_join(w->thread, NULL);
  if (w->dropped > 0)
    SRV_WARN("%llu traces were dropped", (unsigned long long)w->dropped);
  pthread_cond_destroy(&w->cond);
  pthread_mutex_destroy(&w->mu);
  free(w->pending);
  free(w->path);
  free(w);
}
