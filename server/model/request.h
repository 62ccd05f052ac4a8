/* An inference request as backends see it (TRITONBACKEND_Request) and the
 * shared state its responses need. A frontend (call actor, stream actor,
 * ensemble step) builds the request in memory it owns and sends it to the
 * model actor; an instance executes it; TRITONBACKEND_RequestRelease hands
 * it back to the owner as a message. Responses reach the owner as messages
 * too, from any thread. */
#ifndef NEREID_SERVER_MODEL_REQUEST_H
#define NEREID_SERVER_MODEL_REQUEST_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "actors/actor.h"
#include "server/shm/shm.h"
#include "server/stats/stats.h"
#include "triton/core/tritonbackend.h"

typedef struct TRITONBACKEND_Model srv_model_t;

/* Message kinds that the owner of a request receives. */
enum {
  SRV_MSG_INFER_RESPONSE = 0x100, /* a TRITONBACKEND_Response (owner frees it) */
  SRV_MSG_INFER_FINAL_FLAGS,      /* srv_final_msg_t: final flag without response */
  SRV_MSG_INFER_RELEASED,         /* the request itself, back from the backend */
  SRV_MSG_INFER_CANCEL_DONE,      /* the request's cancel_msg, back from the model */
  SRV_MSG_INFER_WATCH,            /* the state's watch_msg: start watching now */
};

/** A response factory (TRITONBACKEND_ResponseFactoryNew) is its request's
 *  state and a reference on it. The first one of a request is the one
 *  embedded in the state (issue 21: no allocation per decoupled request);
 *  any further one is malloc'd, so that live factories never share an
 *  address (a backend may key its own tables by them). */
struct TRITONBACKEND_ResponseFactory {
  struct srv_infer_state *state;
};

/** Shared by a request, its responses and its response factories, which may
 *  outlive the request: counted references, freed by the last. It holds a
 *  reference on the model, so a model unloads only once every response
 *  and factory of its requests is gone. */
typedef struct srv_infer_state {
  _Atomic uint32_t refs;
  _Atomic bool cancelled;              /* set by the owner (client cancel, deadline) */
  _Atomic uint32_t responses_reported; /* next response_stats index */
  /* An owner's link with a thread outside the actors that may reach it
   * (the in-process API's TRITONSERVER_InferenceRequestCancel, see
   * ../bls/bls_infer.c); 0 for every other owner. */
  _Atomic uint32_t outside_link;
  act_actor_t *owner;                  /* receives responses and the release */
  void *owner_data;                    /* the owner's own, e.g. its per-request record */
  srv_model_t *model; /* a model reference, dropped with the state; NULL in tests */
  uint64_t request_start_ns;
  /* The shared-memory regions the request reads its inputs from and
   * writes its outputs to; NULL for most. Set before the request is sent,
   * read-only after, freed with the state. */
  srv_shm_uses_t *shm;
  /* preserve_ordering: set when the request is dispatched, then responses
   * pass through the model actor, which alone touches the rest. */
  srv_model_t *reorder;
  struct srv_infer_state *order_next; /* dispatch order */
  act_msg_t *held_head, *held_tail;   /* responses waiting for their turn */
  bool final_held;                    /* the final one is among them */
  /* Lazy cancellation watching (srv_infer_state_watch_lazily): SRV_WATCH_*,
   * and the owner's message that one ask sends it. */
  _Atomic uint8_t watch;
  act_msg_t *watch_msg;
  /* Tracing (server/trace/trace_request.h): the request's trace, NULL
   * when untraced; released with the state, after every response. Set
   * before the request is enqueued, read-only after. `trace_sample`: a
   * frontend's request, which the tracer may sample at enqueue (requests
   * made inside the server carry their parent's child trace or none). */
  struct TRITONSERVER_InferenceTrace *trace;
  bool trace_sample;
  /* The response cache's (../cache/cache_hook.h): set when the request's
   * lookup missed, before it is enqueued; taken by the sender of its
   * response, which inserts it. NULL for every other request. */
  struct srv_cache *cache;
  uint64_t cache_key_hi, cache_key_lo, cache_lookup_ns;
  /* The request's first factory, filled in by the ResponseFactoryNew
   * (any backend thread) that claims `factory_taken`; never given back,
   * so a later factory of the same request is another one. The factory's
   * own reference keeps the state, and so this room, alive. */
  struct TRITONBACKEND_ResponseFactory factory;
  _Atomic bool factory_taken;
} srv_infer_state_t;

/* Whether the owner learns of a client cancel on its own (EAGER, the
 * default) or waits to be asked (LAZY) by whoever sees that the request
 * takes time: the model actor's queue sweep, a backend polling
 * IsCancelled, a scheduler that holds requests out of the queue. */
enum { SRV_WATCH_EAGER, SRV_WATCH_LAZY, SRV_WATCH_ASKED, SRV_WATCH_OFF };

srv_infer_state_t *srv_infer_state_new(act_actor_t *owner);

/** Whether the `held` references of the caller are all that is left on s.
 *  Responses and final-flags messages in flight and response factories
 *  each hold one, so then no answer to the request can come any more.
 *  Acquire: pairs with their release decrements. Any thread. */
static inline bool srv_infer_state_only_held(srv_infer_state_t *s, uint32_t held) {
  return atomic_load_explicit(&s->refs, memory_order_acquire) == held;
}
void srv_infer_state_ref(srv_infer_state_t *s);
void srv_infer_state_unref(srv_infer_state_t *s);

/** The owner will start watching for a client cancel only when asked:
 *  the first srv_request_watch_ask sends it `ask` (its kind set to
 *  SRV_MSG_INFER_WATCH). Before the request is sent (the send publishes
 *  both). The owner then must call srv_infer_state_watch_end before it may
 *  go. The owner's actor. */
void srv_infer_state_watch_lazily(srv_infer_state_t *s, act_msg_t *ask);

/** Whether s's owner waits to be asked (LAZY, not asked yet). Relaxed: a
 *  hint for whoever may ask later (the ask itself decides). */
static inline bool srv_infer_state_watch_lazy(srv_infer_state_t *s) {
  return atomic_load_explicit(&s->watch, memory_order_relaxed) == SRV_WATCH_LAZY;
}

/** Asks a LAZY owner, once, to watch: it is worth it now (the request
 *  waited, or a backend polls for cancellation). Nothing for an EAGER
 *  owner, or once asked or ended. Any thread that holds s (a request or
 *  factory of it) while the owner has not ended watching. */
void srv_request_watch_ask(srv_infer_state_t *s);

/** Ends lazy watching: no ask can be sent after it. True when an ask was
 *  sent (before): its message reaches the owner, which must stay until it
 *  does. The owner's actor, before it drops its reference on s. */
bool srv_infer_state_watch_end(srv_infer_state_t *s);

/** One contiguous piece of an input tensor's data: host memory unless it
 *  lies in a client's CUDA shared-memory region. */
typedef struct {
  const void *base;
  uint64_t size;
  TRITONSERVER_MemoryType memory_type; /* 0: TRITONSERVER_MEMORY_CPU */
  int64_t memory_type_id;
} srv_buffer_t;

/** An input's data for one host policy (Triton's
 *  AppendInputDataWithHostPolicy): an instance whose policy it names reads
 *  it instead of the input's own buffers. */
typedef struct {
  const char *policy;
  const srv_buffer_t *buffers;
  uint32_t buffer_count;
  uint64_t byte_size;
} srv_policy_data_t;

/** An input tensor (TRITONBACKEND_Input). Data is referenced, not copied. */
struct TRITONBACKEND_Input {
  const char *name;
  TRITONSERVER_DataType datatype;
  const int64_t *shape; /* full shape, batch dimension included */
  uint32_t dims_count;
  uint64_t byte_size;
  const srv_buffer_t *buffers;
  uint32_t buffer_count;
  const srv_policy_data_t *policies; /* none from most frontends */
  uint32_t policy_count;
  /* A host copy of a one-buffer input in GPU memory, made the first time
   * a backend asks for it in host memory; freed at the release. */
  void *staged;
  /* One per buffer, made the first time a backend asks for any
   * (TRITONBACKEND_InputBufferAttributes); freed at the release. */
  TRITONSERVER_BufferAttributes *attrs;
};

/** srv_input_release's freeing; call srv_input_release. */
void srv_input_release_owned(struct TRITONBACKEND_Input *in);

/** Frees what backends made an input make (its host copy, its buffer
 *  attributes). The releasing backend's thread. Inline: nearly every input
 *  has neither, and then no call is made (issue 21). */
static inline void srv_input_release(struct TRITONBACKEND_Input *in) {
  if (in->staged != NULL || in->attrs != NULL) srv_input_release_owned(in);
}

struct TRITONBACKEND_Request {
  act_msg_t msg; /* to the model actor; back to the owner when released */
  srv_model_t *model;
  srv_infer_state_t *state;
  const char *id; /* never NULL: "" when the client gave none */
  uint64_t correlation_id;
  const char *correlation_id_string; /* NULL unless a string id was given */
  uint32_t flags;                    /* TRITONSERVER_RequestFlag */
  struct TRITONBACKEND_Input *inputs;
  uint32_t input_count;
  /* Inputs the server adds after the client's (sequence controls, implicit
   * states): set by a sequence slot before it lends the request out, in
   * memory the slot owns; backends see them after `inputs`. */
  struct TRITONBACKEND_Input *extra_inputs;
  uint32_t extra_count;
  /* Who gets the request when released: the state's owner unless set (a
   * sequence slot, which hands it on to the owner). */
  act_actor_t *release_to;
  /* The sequence scheduler's (sched/sequence.h): the slot that holds the
   * request's sequence (set when routed), whether it went into a batch
   * (set at dispatch, read by the slot once released), and whether it is
   * a padding request the scheduler made. */
  struct srv_seq_slot *seq_slot;
  bool seq_dispatched, seq_padding;
  /* Who starts the sequence when the request is a START: the stream's
   * token (srv_stream_sequences_note), 0 for any other caller. A stream's
   * end ends only the sequences it still owns. */
  uint64_t seq_owner;
  /* The model actor's count of STARTs routed to the slot, this one
   * included: tells the slot's FREED of an earlier sequence from the one
   * a START begins after it (sched/sequence.md, "Cancel"). */
  uint32_t seq_epoch;
  /* The ensemble scheduler's (sched/ensemble.c): the run of an ensemble
   * request, NULL once it ended. */
  struct srv_ens_run *ens_run;
  const char **outputs; /* requested outputs; all of the model's by default */
  uint32_t output_count;
  uint32_t batch_size; /* leading dimension, or 1 without batching */
  uint64_t queue_start_ns;
  /* Parameters for the backend (request_params.h), in the owner's memory;
   * NULL when the request carries none. */
  struct srv_request_param *params;
  uint32_t param_count, param_room;
  uint32_t priority;   /* 0: the model's default priority level */
  uint64_t timeout_us; /* the client's queue timeout; 0: none given */
  _Atomic bool released;
  /* The statistics whose pending gauge (srv_stats_pending_add) counts
   * the request: set by srv_model_enqueue, cleared by
   * srv_request_pending_end when execution starts or at the release,
   * whichever comes first. Messages order the two; no atomic needed. */
  srv_stats_t *pending;
  act_msg_t cancel_msg; /* owner -> model actor -> owner (srv_request_cancel) */
  uint8_t cancel;       /* the owner's alone: SRV_CANCEL_*, see srv_request_cancel */
  /* The model actor's alone, while the request waits in its queue. */
  struct TRITONBACKEND_Request *next, *prev;
  uint64_t timeout_at_ns; /* the queue policy's deadline; 0: none */
  uint32_t heap_slot;     /* index + 1 in the timeout heap; 0: not in it */
  uint32_t level;         /* priority level index */
  bool queued, delayed;
};

/* Where a request's cancel is (TRITONBACKEND_Request.cancel). */
enum { SRV_CANCEL_NONE, SRV_CANCEL_OUT, SRV_CANCEL_BACK };

/** Cancels a request its owner sent to a model (client cancel, deadline):
 *  backends see it through TRITONBACKEND_RequestIsCancelled and
 *  ResponseFactoryIsCancelled, and a request still queued is answered
 *  CANCELLED and released without running. False, and nothing done, when
 *  r was cancelled before (one cancel per request).
 *
 *  After true the cancel is *out* until r->cancel_msg comes back to the
 *  owner as SRV_MSG_INFER_CANCEL_DONE and the owner hands it to
 *  srv_request_cancel_back. While it is out, the model actor reads r and
 *  r->state whenever it gets to the cancel, which may be after the release
 *  and the final response have reached the owner: so the owner keeps r's
 *  memory, leaves r->state as it is and keeps the reference on the state
 *  that r->state stands for, whatever else came back
 *  (srv_request_cancel_out). The owner's actor, after srv_model_enqueue. */
bool srv_request_cancel(TRITONBACKEND_Request *r);

/** Takes r out of its model's pending gauge, if it is still in it. The
 *  thread that holds r: its instance before execute, or its releaser. */
static inline void srv_request_pending_end(TRITONBACKEND_Request *r) {
  if (r->pending == NULL) return;
  srv_stats_pending_add(r->pending, -1); /* this thread's slot: see stats.h */
  r->pending = NULL;
}

/** Whether r's cancel is out: the owner may not free r, change r->state or
 *  drop the state's reference it stands for yet. The owner's actor. */
static inline bool srv_request_cancel_out(const TRITONBACKEND_Request *r) {
  return r->cancel == SRV_CANCEL_OUT;
}

/** The request whose cancel came back as `msg` (SRV_MSG_INFER_CANCEL_DONE):
 *  nothing reads it on the cancel's behalf any more. The owner's actor. */
static inline TRITONBACKEND_Request *srv_request_cancel_back(act_msg_t *msg) {
  TRITONBACKEND_Request *r =
      (TRITONBACKEND_Request *)((char *)msg -
                                offsetof(TRITONBACKEND_Request, cancel_msg));
  r->cancel = SRV_CANCEL_BACK;
  return r;
}

/** Final flag sent by TRITONBACKEND_ResponseFactorySendFlags. It holds a
 *  reference on the request's state, which the receiver drops. */
typedef struct {
  act_msg_t msg;
  uint32_t flags;
  srv_infer_state_t *state;
} srv_final_msg_t;

#endif
