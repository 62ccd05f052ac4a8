/* The workers' side of the load, shared by load.c (threads, schedule,
 * windows), unary.c (ModelInfer calls) and stream.c (ModelStreamInfer
 * streams) and pacer.c (the open loop's timing). Every call and stream
 * belongs to one worker: it is created on that worker's completion queue
 * and only that worker's thread touches it, so every gRPC batch starts on
 * the thread that polls its queue. Crossing threads: the stop flag
 * (atomic), the window (the worker's mu), and in open loop the few fields
 * shared with the worker's pacer thread (under pace_mu; see pacer.c). */
#ifndef NEREID_TOOLS_PERF_LOAD_INTERNAL_H
#define NEREID_TOOLS_PERF_LOAD_INTERNAL_H

#include <grpc/grpc.h>
#include <pthread.h>
#include <stdatomic.h>

#include "tools/perf/load.h"

/* What completed: a tag is embedded in its call or stream, one per kind
 * of batch that can be outstanding. */
typedef enum {
  TAG_UNARY = 1,
  TAG_STREAM_START,
  TAG_STREAM_RECV,
  TAG_STREAM_SEND,
  TAG_STREAM_CLOSE,
  TAG_STREAM_STATUS,
  TAG_DOORBELL,
} tag_kind_t;

typedef struct {
  tag_kind_t kind;
  void *owner; /* the perf_unary_t or perf_stream_t */
} perf_tag_t;

typedef struct perf_worker perf_worker_t;

/* One ModelInfer call at a time; reused call after call. */
typedef struct perf_unary {
  perf_tag_t tag;
  perf_worker_t *w;
  unsigned channel;
  grpc_call *call; /* NULL while idle */
  grpc_metadata_array initial_md, trailing_md;
  grpc_byte_buffer *send, *recv;
  grpc_status_code status;
  grpc_slice details;
  uint64_t start_ns;            /* sent, or scheduled in open loop */
  struct perf_unary *next_free; /* open loop: the worker's idle calls */
  perf_seq_t
      *seq; /* sequence mode: the lane whose step it carries (closed loop: always) */
} perf_unary_t;

/* A request of a stream, from its enqueueing to its last response. */
typedef struct {
  uint64_t start_ns;
  perf_seq_t *seq; /* sequence mode: the lane whose step it is */
  uint32_t next;   /* pending FIFO or free list */
  bool busy;       /* in use (pending or sent) */
  bool failed;     /* an error was counted for it */
} stream_req_t;

#define STREAM_NONE UINT32_MAX

typedef struct perf_stream {
  perf_tag_t tag_start, tag_recv, tag_send, tag_close, tag_status;
  perf_worker_t *w;
  unsigned channel;
  unsigned depth;    /* closed loop: requests kept in flight */
  perf_seq_t *lanes; /* closed loop, sequence mode: depth lanes, one request each */
  grpc_call *call;   /* NULL: not open */
  grpc_metadata_array initial_md, trailing_md;
  grpc_byte_buffer *send, *recv;
  grpc_status_code status;
  grpc_slice details;
  unsigned batches; /* outstanding batches on call */
  bool send_busy, close_sent, status_done;
  /* Requests by id (the index, sent as the request's `id`). */
  stream_req_t *reqs;
  uint32_t cap, inflight;
  uint32_t free_head;            /* free ids */
  uint32_t pend_head, pend_tail; /* ids waiting for the send */
} perf_stream_t;

struct perf_worker {
  /* Set before the thread starts; read-only for it. */
  perf_load_t *load;
  unsigned index;
  grpc_completion_queue *cq;
  pthread_t thread;
  pthread_t pacer; /* open loop only */
  /* Open loop: shared with the pacer under pace_mu (the worker writes them
   * under it, and may read its own writes without it). */
  pthread_mutex_t pace_mu;
  pthread_cond_t pace_cond; /* the worker moved next_send_ns, or the load stops */
  uint64_t next_send_ns;
  bool capped;      /* --max-inflight holds due requests back */
  bool sleeping;    /* the worker waits in its completion queue */
  bool rung;        /* the doorbell was cancelled and has not come back yet */
  uint64_t rung_ns; /* when (set by the pacer) */
  uint64_t wake_ns; /* smoothed time from the ring to the worker's wake-up */
  /* How long before a send the pacer rings (its own lateness plus
   * wake_ns, capped); the worker stays awake that close to a send. A hint:
   * relaxed, any recent value will do. */
  _Atomic uint64_t lead_ns;
  bool stopping;
  grpc_call *doorbell; /* a call that is never sent: cancelling it wakes the worker */
  perf_tag_t doorbell_tag;
  grpc_metadata_array doorbell_md;
  grpc_status_code doorbell_status;
  grpc_slice doorbell_details;
  /* Owned by the worker thread. */
  perf_unary_t **unary; /* closed loop: its calls; open loop: every call made */
  size_t nunary, unary_cap;
  perf_unary_t *free_unary; /* open loop: idle calls */
  perf_stream_t *streams;
  size_t nstreams, next_stream;
  size_t next_request; /* rotation over the prebuilt requests */
  size_t next_channel;
  size_t inflight, max_inflight;
  /* Sequence mode: the worker's lanes; in open loop, the idle ones wait in
   * a FIFO (a scheduled send takes the one idle longest). */
  perf_seq_t *seqs;
  size_t nseqs;
  perf_seq_t *idle_head, *idle_tail;
  bool cancelled;
  uint64_t stop_ns;
  double gap_ns; /* open loop: mean gap between this worker's sends */
  uint64_t rng;
  /* Shared with the main thread: under mu. */
  pthread_mutex_t mu;
  perf_window_t win;
};

struct perf_load {
  perf_load_config_t cfg;
  grpc_channel **channels;
  void **infer_method;  /* per channel: registered ModelInfer */
  void **stream_method; /* per channel: registered ModelStreamInfer */
  perf_worker_t *workers;
  /* Set by the main thread to stop the load; workers poll it after each
   * event (acquire pairs with the main thread's release, though nothing
   * else is published with it). */
  atomic_bool stop;
};

/* Recording, from the worker thread. ended: the request was a sequence's
 * last step. */
void perf_worker_ok(perf_worker_t *w, uint64_t latency_ns, bool ended);
void perf_worker_error(perf_worker_t *w, const char *msg, size_t len);
void perf_worker_status_error(perf_worker_t *w, grpc_status_code code,
                              const grpc_slice *details);
void perf_worker_responses(perf_worker_t *w, uint64_t n);
/* The next prebuilt request body (a new reference). */
grpc_slice perf_worker_next_body(perf_worker_t *w);
/* A request finished (either way); closed loop sends the next. */
void perf_worker_request_done(perf_worker_t *w);
/* Sequence mode: takes lane seq's next step, its sequence's last when the
 * load stops. */
void perf_worker_seq_step(perf_worker_t *w, perf_seq_t *seq);
/* Whether the lane's next step is still to be sent: always while the load
 * runs; once it stops, only the END of a sequence left open (not after the
 * drain cancelled what was in flight). */
bool perf_worker_seq_goes_on(const perf_worker_t *w, const perf_seq_t *seq);
/* Open loop, sequence mode: the lane's step finished; it sends its END at
 * once if the load stops with its sequence open, else waits idle. */
void perf_worker_lane_done(perf_worker_t *w, perf_seq_t *seq, uint64_t now);
/* Open loop: a stream's lane is given up (the stream ended under it). */
void perf_worker_lane_idle(perf_worker_t *w, perf_seq_t *seq);

/* pacer.c: open loop only. */
void perf_pacer_init(perf_worker_t *w);
void perf_pacer_destroy(perf_worker_t *w);
void *perf_pacer_main(void *worker);
/* Worker thread: (re)arms the doorbell unless stopping. */
void perf_doorbell_arm(perf_worker_t *w);
void perf_doorbell_done(perf_worker_t *w);
/* Worker thread: the schedule moved (next, capped); wakes the pacer. */
void perf_pacer_update(perf_worker_t *w, uint64_t next_send_ns, bool capped);
/* Worker thread, around its wait in the completion queue. */
void perf_pacer_sleeping(perf_worker_t *w, bool sleeping);
/* Worker thread: whether the next send is so close that the worker should
 * poll its queue instead of sleeping. */
bool perf_pacer_send_is_near(perf_worker_t *w);
/* Worker thread: stop; the doorbell is cancelled and not re-armed. */
void perf_pacer_stop(perf_worker_t *w);
/* Main thread, after setting the stop flag: wakes the pacer. */
void perf_pacer_wake(perf_worker_t *w);

/* unary.c */
perf_unary_t *perf_unary_new(perf_worker_t *w, unsigned channel);
void perf_unary_start(perf_unary_t *u, uint64_t start_ns);
void perf_unary_done(perf_unary_t *u, bool ok);
void perf_unary_free(perf_unary_t *u);

/* stream.c */
void perf_stream_init(perf_stream_t *s, perf_worker_t *w, unsigned channel,
                      unsigned depth);
void perf_stream_open(perf_stream_t *s);
/* seq: the lane whose step it is (sequence mode), else NULL. */
void perf_stream_enqueue(perf_stream_t *s, uint64_t start_ns, perf_seq_t *seq);
void perf_stream_event(perf_stream_t *s, perf_tag_t *tag, bool ok);
/* The worker is stopping: half-close once nothing is in flight. */
void perf_stream_wind_down(perf_stream_t *s);
bool perf_stream_closed(const perf_stream_t *s);
void perf_stream_cancel(perf_stream_t *s);
void perf_stream_destroy(perf_stream_t *s);

#endif
