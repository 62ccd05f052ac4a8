/* A model's side of the rate limiter (rate_limiter.md): its instances'
 * tickets, made from their groups' `rate_limiter` at load and attached to
 * the server's limiter, and freed with the instances. */
#ifndef NEREID_SERVER_SCHED_RATE_LIMITER_MODEL_H
#define NEREID_SERVER_SCHED_RATE_LIMITER_MODEL_H

#include "server/common/status.h"

typedef struct TRITONBACKEND_Model srv_model_t;
struct TRITONBACKEND_ModelInstance;

/** With the rate limiter on, gives each of m's instances a ticket from its
 *  group's rate_limiter and attaches them (Triton's load-time checks; the
 *  error names the model, the field or the resource at fault). Nothing to
 *  do with the limiter off or for an ensemble (no instances). The loading
 *  thread, after the instances started and before the model's actor
 *  does. */
srv_status_t *srv_rl_model_attach(srv_model_t *m);

/** Frees an instance's ticket (NULL is fine), once detached or never
 *  attached. */
void srv_rl_ticket_free(struct TRITONBACKEND_ModelInstance *inst);

#endif
