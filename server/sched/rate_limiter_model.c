/* Tickets of a model's instances for the rate limiter (rate_limiter_model.h).
 * Made and attached by the loading thread; from then on the ticket's
 * messages move by rate_limiter.md's protocol. */
#include "server/sched/rate_limiter_model.h"

#include <stdlib.h>
#include <string.h>

#include "server/common/log.h"
#include "server/common/memory.h"
#include "server/core/server.h"
#include "server/model/model.h"
#include "server/options.h"

/* A resource name from the config, checked: the field at fault is named. */
static srv_status_t *demand_read(const srv_model_t *m, uint32_t group, size_t k,
                                 const inference_ModelRateLimiter_Resource *r,
                                 srv_rl_demand_t *d) {
  upb_StringView name = inference_ModelRateLimiter_Resource_name(r);
  if (name.size == 0 || name.size > SRV_RATE_RESOURCE_NAME_MAX)
    return srv_status_new(
        GRPC_STATUS_INVALID_ARGUMENT,
        "model '%s': instance_group[%u].rate_limiter.resources[%zu].name: "
        "expected 1 to %u bytes, got %zu",
        m->name, group, k, SRV_RATE_RESOURCE_NAME_MAX, name.size);
  d->name = srv_strndup(name.data, name.size);
  d->global = inference_ModelRateLimiter_Resource_global(r);
  d->count = inference_ModelRateLimiter_Resource_count(r);
  return NULL;
}

/* The group index of each instance's rate_limiter, for error texts. */
static uint32_t group_of(const srv_model_t *m, const inference_ModelRateLimiter *rl) {
  size_t n;
  const inference_ModelInstanceGroup *const *g =
      inference_ModelConfig_instance_group(m->config, &n);
  for (size_t i = 0; i < n; i++)
    if (inference_ModelInstanceGroup_rate_limiter(g[i]) == rl) return (uint32_t)i;
  return 0;
}

static srv_status_t *ticket_make(srv_model_t *m, srv_instance_t *inst) {
  srv_rl_ticket_t *t = calloc(1, sizeof *t);
  if (t == NULL) SRV_FATAL("out of memory");
  inst->rl_ticket = t;
  t->runner = &inst->actor;
  t->run_msg = &inst->execute_msg;
  t->owner = &m->actor;
  t->done_msg = &inst->idle_msg;
  t->withdrawn_kind = SRV_MODEL_RL_WITHDRAWN;
  t->label = inst->name;
  t->device = inst->device_id;
  const inference_ModelRateLimiter *rl = inst->rate_limiter;
  if (rl == NULL) return NULL; /* asks for nothing, still waits its turn */
  t->priority = inference_ModelRateLimiter_priority(rl);
  size_t n;
  const inference_ModelRateLimiter_Resource *const *r =
      inference_ModelRateLimiter_resources(rl, &n);
  if (n == 0) return NULL;
  if (n > SRV_RL_DEMANDS_MAX)
    return srv_status_new(
        GRPC_STATUS_INVALID_ARGUMENT,
        "model '%s': instance_group[%u].rate_limiter.resources lists %zu "
        "resources, above the limit of %u",
        m->name, group_of(m, rl), n, SRV_RL_DEMANDS_MAX);
  t->demands = calloc(n, sizeof *t->demands);
  if (t->demands == NULL) SRV_FATAL("out of memory");
  uint32_t group = group_of(m, rl);
  for (size_t k = 0; k < n; k++) {
    srv_status_t *st = demand_read(m, group, k, r[k], &t->demands[t->demand_count]);
    if (st != NULL) return st;
    /* Triton keeps one count per name on an instance: the last listed. */
    srv_rl_demand_t *d = &t->demands[t->demand_count];
    uint32_t same = 0;
    while (same < t->demand_count && (strcmp(t->demands[same].name, d->name) != 0 ||
                                      t->demands[same].global != d->global))
      same++;
    if (same == t->demand_count) {
      t->demand_count++;
    } else {
      t->demands[same].count = d->count;
      free((char *)d->name);
      d->name = NULL;
    }
  }
  return NULL;
}

srv_status_t *srv_rl_model_attach(srv_model_t *m) {
  srv_rl_t *limiter = m->server->limiter;
  if (limiter == NULL || m->ens != NULL || m->instance_count == 0) return NULL;
  srv_rl_ticket_t **tickets = calloc(m->instance_count, sizeof *tickets);
  if (tickets == NULL) SRV_FATAL("out of memory");
  srv_status_t *st = NULL;
  for (uint32_t i = 0; i < m->instance_count && st == NULL; i++) {
    st = ticket_make(m, m->instances[i]);
    tickets[i] = m->instances[i]->rl_ticket;
  }
  if (st == NULL) st = srv_rl_attach(limiter, m->name, tickets, m->instance_count);
  if (st != NULL) {
    free(tickets);
    return st; /* the tickets go with the instances (srv_instances_free) */
  }
  m->rl = limiter;
  m->rl_detach.tickets = tickets; /* freed with the model (model.c) */
  m->rl_detach.count = m->instance_count;
  m->rl_detach.to = &m->actor;
  m->rl_detach.done = &m->rl_detached_msg;
  m->rl_detached_msg.kind = SRV_MODEL_RL_DETACHED;
  return NULL;
}

void srv_rl_ticket_free(srv_instance_t *inst) {
  srv_rl_ticket_t *t = inst->rl_ticket;
  if (t == NULL) return;
  for (uint32_t i = 0; i < t->demand_count; i++) free((char *)t->demands[i].name);
  free(t->demands);
  free(t);
  inst->rl_ticket = NULL;
}
