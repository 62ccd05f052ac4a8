/* The rate limiter (--rate-limit=execution_count): one actor for the whole
 * server that hands out the resources model instances ask for in their
 * instance group's `rate_limiter`, so that an instance runs only while what
 * it asks for is free. Its state is its behaviour's alone; models reach it
 * by message (see rate_limiter.md). Absent (NULL) with --rate-limit=off:
 * then nothing here is ever called. */
#ifndef NEREID_SERVER_SCHED_RATE_LIMITER_H
#define NEREID_SERVER_SCHED_RATE_LIMITER_H

#include <stdbool.h>
#include <stdint.h>

#include "actors/actor.h"
#include "server/common/status.h"

typedef struct srv_rl srv_rl_t;

/** Most distinct resources (a name on a device, or a global name) the
 *  loaded models may ask for together; a load past it fails. */
#define SRV_RL_RESOURCES_MAX 4096u

/** Most resources one instance group's rate_limiter may list. */
#define SRV_RL_DEMANDS_MAX 64u

/** One resource an instance asks for: `count` copies of `name`, on the
 *  instance's device unless `global`. */
typedef struct {
  const char *name; /* NUL-terminated, owned by the ticket's maker */
  bool global;
  uint64_t count;
  uint32_t index; /* the limiter's; set when attached */
} srv_rl_demand_t;

/** What one instance holds with the limiter. Its maker fills the fields up
 *  to `priority` before srv_rl_attach and keeps the ticket until it is
 *  detached (srv_rl_detach's answer). The messages move by the protocol of
 *  rate_limiter.md; the remaining fields are the limiter's. */
typedef struct srv_rl_ticket {
  act_msg_t ask_msg;      /* owner -> limiter; back as `withdrawn_kind` */
  act_msg_t release_msg;  /* runner -> limiter, once the run ended */
  act_msg_t withdraw_msg; /* owner -> limiter: give up a waiting ask */
  act_actor_t *runner;    /* gets run_msg when the ask is granted */
  act_msg_t *run_msg;
  act_actor_t *owner; /* gets done_msg once the release is done */
  act_msg_t *done_msg;
  uint32_t withdrawn_kind;
  const char *label; /* names the instance in logs */
  int32_t device;
  uint32_t priority; /* the config's; 0 counts as 1 */
  srv_rl_demand_t *demands;
  uint32_t demand_count;
  /* The limiter's alone. */
  uint64_t runs, seq;
  uint32_t heap_pos, attached_pos;
  uint8_t state;
} srv_rl_ticket_t;

/** Starts the limiter's actor on rt with the --rate-limit-resource counts
 *  (texts already checked by srv_options_validate). NULL status: *out set.
 *  A thread outside the runtime. */
srv_status_t *srv_rl_new(act_runtime_t *rt, char *const *resources, size_t count,
                         srv_rl_t **out);

/** Sends the limiter its stop message; after it nothing may be sent to it.
 *  Before act_runtime_quiesce, once no model runs. Outside the runtime. */
void srv_rl_stop(srv_rl_t *rl);

/** Frees a stopped limiter (after act_runtime_quiesce). NULL is fine. */
void srv_rl_free(srv_rl_t *rl);

/** Adds a model's tickets (`model` names it in errors) and recomputes what
 *  is available: Triton's rules (the largest count any instance asks for,
 *  or the --rate-limit-resource count, which must cover it; a name used
 *  both globally and per device is refused). On error nothing was added.
 *  Blocks until the limiter answered: a loading thread outside the
 *  runtime. */
srv_status_t *srv_rl_attach(srv_rl_t *rl, const char *model, srv_rl_ticket_t **tickets,
                            uint32_t count);

/** Asks for t's resources: the limiter sends t->run_msg to t->runner once
 *  they are free and t is first in line. The owner, with ask_msg. */
void srv_rl_ask(srv_rl_t *rl, srv_rl_ticket_t *t);

/** The granted run of t ended (success or failure alike): its resources
 *  go back and the limiter sends t->done_msg to t->owner. The runner. */
void srv_rl_release(srv_rl_t *rl, srv_rl_ticket_t *t);

/** If t's ask still waits, the limiter drops it and sends ask_msg back to
 *  the owner with kind withdrawn_kind; otherwise (granted, or no ask) it
 *  does nothing and the owner gets the grant's done_msg as usual. Once per
 *  ticket (the owner's stop). The owner. */
void srv_rl_withdraw(srv_rl_t *rl, srv_rl_ticket_t *t);

/** Removes tickets (none waiting or running) from the limiter and
 *  recomputes what is available, then sends `done` to `to`. `msg` carries
 *  the request and is the limiter's until `done` arrives. Any thread. */
typedef struct {
  act_msg_t msg;
  srv_rl_ticket_t **tickets;
  uint32_t count;
  act_actor_t *to;
  act_msg_t *done;
} srv_rl_detach_t;
void srv_rl_detach(srv_rl_t *rl, srv_rl_detach_t *d);

#endif
