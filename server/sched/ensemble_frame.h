/* The memory of an ensemble run (ensemble.md): frames of tensors and step
 * requests. A frame is one block whose layout ensemble_setup.c computes
 * once per ensemble; the ensemble's actor alone touches frames. */
#ifndef NEREID_SERVER_SCHED_ENSEMBLE_FRAME_H
#define NEREID_SERVER_SCHED_ENSEMBLE_FRAME_H

#include <stdbool.h>
#include <stdint.h>

#include "server/model/request.h"
#include "server/model/response.h"

enum { ENS_UNSET = 0, ENS_SET, ENS_ABSENT /* an optional input not given */ };

/** A tensor's value in a frame, by reference: a client's input buffers,
 *  or the buffer of a step response's output (`owner`, kept by the frame). */
typedef struct {
  const int64_t *shape;
  uint32_t dims_count;
  TRITONSERVER_DataType datatype;
  uint64_t byte_size;
  const srv_buffer_t *buffers;
  uint32_t buffer_count;
  srv_buffer_t one; /* a step output's single buffer */
  TRITONBACKEND_Response *owner;
  uint8_t state; /* ENS_* */
} ens_value_t;

struct ens_frame;

/** One step request of a frame. A step is finished once its last answer
 *  and its release came back and no cancel of it is out. */
typedef struct {
  TRITONBACKEND_Request req; /* first: a released request is its step */
  struct ens_frame *frame;
  TRITONBACKEND_Input *inputs; /* in the frame's block */
  uint32_t index;              /* the step's */
  uint64_t start_ns, answer_ns; /* the send; the last answer */
  bool started, answered, released, finished;
} ens_step_t;

/** The run of one ensemble request (in its root frame). */
typedef struct srv_ens_run {
  TRITONBACKEND_Request *request;
  srv_model_t *model;
  TRITONSERVER_Error *error; /* the first; the run ends with it */
  bool answered;             /* a response with the outputs went out */
  /* In the actor's list of runs whose owner watches lazily and was not
   * asked yet, oldest first (ensemble.c, "lazy watching"). */
  struct srv_ens_run *unwatched_prev, *unwatched_next;
  bool unwatched;
} ens_run_t;

typedef struct ens_frame {
  struct ens_frame *parent, *children, *next_sibling; /* next_sibling: pool too */
  struct ens_frame *next_check; /* the actor's list of frames to look at */
  bool check_queued;
  ens_run_t *run;
  ens_run_t own_run; /* used in root frames */
  uint32_t scope;
  uint32_t pending; /* steps of its scope (and its answer) not finished */
  uint32_t running; /* steps started and not finished */
  uint32_t live_children;
  uint32_t kept_count;
  /* Set once when the block is made (they point into it), kept through
   * the pool: frame_open clears only what is above. */
  ens_value_t *tensors;          /* per tensor; only its scope's are used */
  uint32_t *wait;                /* per step, then the answer: inputs missing */
  ens_step_t *steps;             /* per step */
  TRITONBACKEND_Response **kept; /* step responses whose outputs it holds */
} ens_frame_t;

#endif
