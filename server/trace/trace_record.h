/* The JSON text of one sampled trace tree (a request's trace and its
 * children: ensemble steps, BLS calls), as Triton's trace file holds it:
 * entries separated by commas, without the enclosing brackets. Appended by
 * whichever thread reports an activity, under the record's mutex (only
 * sampled requests pay it); shared by the traces of the tree, and handed
 * to the writer by the last one released. */
#ifndef NEREID_SERVER_TRACE_TRACE_RECORD_H
#define NEREID_SERVER_TRACE_TRACE_RECORD_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "triton/core/tritonserver.h"

/** Text one record may hold; entries past it are dropped (the writer logs
 *  it): a TENSORS trace of large tensors must not take the memory. */
#define SRV_TRACE_RECORD_MAX (64u << 20)

struct srv_trace_writer;

typedef struct srv_trace_record {
  pthread_mutex_t mu; /* guards text, len, cap, dropped */
  char *text;
  size_t len, cap;
  uint32_t dropped;        /* entries that did not fit */
  _Atomic uint32_t shares; /* one per trace of the tree */
  uint32_t log_frequency;  /* the setting's when sampled (0: the main file) */
  struct srv_trace_writer *writer;
  struct srv_trace_record *next; /* the writer's queue */
} srv_trace_record_t;

/** Grows the heap buffer *p (capacity *cap, doubling from `first`) to
 *  hold `need` bytes; out of memory is fatal. The record's text, an
 *  entry's and the writer's pending files share it. */
void srv_trace_text_grow(char **p, size_t *cap, size_t need, size_t first);

srv_trace_record_t *srv_trace_record_new(struct srv_trace_writer *w,
                                         uint32_t log_frequency);
void srv_trace_record_free(srv_trace_record_t *r);

/** One more trace of the tree shares r. */
void srv_trace_record_share(srv_trace_record_t *r);

/** A trace of the tree is done; the last hands r to its writer. */
void srv_trace_record_drop(srv_trace_record_t *r);

/** The first entry of a trace: id, model, version, request id (when not
 *  empty) and parent id (when not 0). Strings are JSON-escaped. */
void srv_trace_record_info(srv_trace_record_t *r, uint64_t id, const char *model,
                           int64_t version, const char *request_id, uint64_t parent_id);

/** {"id":..,"timestamps":[{"name":..,"ns":..}]} */
void srv_trace_record_stamp(srv_trace_record_t *r, uint64_t id, const char *name,
                            uint64_t ns);

/** {"id":..,"activity":..,"tensor":{"name","data","shape","dtype"}}: the
 *  data as Triton prints it (elements joined by commas; BYTES elements
 *  quoted; FP16 and BF16 empty), bounded by byte_size whatever the shape
 *  says. Host memory only. */
void srv_trace_record_tensor(srv_trace_record_t *r, uint64_t id, const char *activity,
                             const char *name, TRITONSERVER_DataType datatype,
                             const void *base, size_t byte_size, const int64_t *shape,
                             uint64_t dims);

#endif
