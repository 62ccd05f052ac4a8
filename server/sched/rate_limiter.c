/* The rate limiter's actor (rate_limiter.h, rate_limiter.md): a table of
 * resources with their available and granted counts, the attached tickets,
 * and a min-heap of waiting asks ordered as Triton orders them (runs so
 * far times priority, then arrival). Only its behaviour touches them;
 * loaders wait on a semaphore for attach's answer. */
#include "server/sched/rate_limiter.h"

#include <semaphore.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "server/common/log.h"
#include "server/common/memory.h"
#include "server/options.h"

enum { RL_ASK = 0x900, RL_RELEASE, RL_WITHDRAW, RL_ATTACH, RL_DETACH, RL_STOP };
enum { T_IDLE = 0, T_WAITING, T_RUNNING };

/* The device key of a global resource. */
#define GLOBAL_DEVICE INT32_MIN

typedef struct {
  char *name;
  int32_t device; /* GLOBAL_DEVICE for a global resource */
  uint64_t available, granted;
  uint32_t users; /* demands of attached tickets naming it; 0: a free slot */
} resource_t;

typedef struct {
  char *name;
  uint64_t count;
  int32_t device; /* -1: every device */
} explicit_t;

struct srv_rl {
  act_actor_t actor;
  act_msg_t stop_msg;
  /* Set at start, read-only. */
  explicit_t *explicit;
  size_t explicit_count;
  /* The behaviour's alone. */
  resource_t *res;
  uint32_t res_count;
  srv_rl_ticket_t **attached;
  uint32_t attached_count, attached_cap;
  srv_rl_ticket_t **heap; /* waiting asks; room for every attached ticket */
  uint32_t heap_count;
  uint64_t next_seq;
};

typedef struct {
  act_msg_t msg;
  const char *model;
  srv_rl_ticket_t **tickets;
  uint32_t count;
  srv_status_t *result;
  sem_t done;
} attach_call_t;

/* ---- the wait line ---- */

/* Triton's order: fewer runs weighted by priority (0 counts as 1) first,
 * then the older ask. Saturates: a ticket never wraps to the front. */
static uint64_t weight(const srv_rl_ticket_t *t) {
  uint64_t p = t->priority == 0 ? 1 : t->priority;
  return t->runs > UINT64_MAX / p ? UINT64_MAX : t->runs * p;
}

static bool before(const srv_rl_ticket_t *a, const srv_rl_ticket_t *b) {
  uint64_t wa = weight(a), wb = weight(b);
  return wa != wb ? wa < wb : a->seq < b->seq;
}

static void heap_set(srv_rl_t *rl, uint32_t i, srv_rl_ticket_t *t) {
  rl->heap[i] = t;
  t->heap_pos = i;
}

static void heap_up(srv_rl_t *rl, uint32_t i) {
  srv_rl_ticket_t *t = rl->heap[i];
  while (i > 0 && before(t, rl->heap[(i - 1) / 2])) {
    heap_set(rl, i, rl->heap[(i - 1) / 2]);
    i = (i - 1) / 2;
  }
  heap_set(rl, i, t);
}

static void heap_down(srv_rl_t *rl, uint32_t i) {
  srv_rl_ticket_t *t = rl->heap[i];
  for (;;) {
    uint32_t c = 2 * i + 1;
    if (c >= rl->heap_count) break;
    if (c + 1 < rl->heap_count && before(rl->heap[c + 1], rl->heap[c])) c++;
    if (!before(rl->heap[c], t)) break;
    heap_set(rl, i, rl->heap[c]);
    i = c;
  }
  heap_set(rl, i, t);
}

static void heap_remove(srv_rl_t *rl, srv_rl_ticket_t *t) {
  uint32_t i = t->heap_pos;
  srv_rl_ticket_t *last = rl->heap[--rl->heap_count];
  if (i == rl->heap_count) return;
  heap_set(rl, i, last);
  heap_up(rl, i);
  heap_down(rl, last->heap_pos);
}

/* ---- granting ---- */

static bool fits(const srv_rl_t *rl, const srv_rl_ticket_t *t) {
  for (uint32_t i = 0; i < t->demand_count; i++) {
    const resource_t *r = &rl->res[t->demands[i].index];
    if (r->granted + t->demands[i].count > r->available) return false;
  }
  return true;
}

/* Grants in order while the first in line fits. The first that does not
 * fit holds the others back, as in Triton: a large ask is never starved
 * by a stream of small ones. */
static void grant(srv_rl_t *rl) {
  while (rl->heap_count > 0 && fits(rl, rl->heap[0])) {
    srv_rl_ticket_t *t = rl->heap[0];
    heap_remove(rl, t);
    for (uint32_t i = 0; i < t->demand_count; i++)
      rl->res[t->demands[i].index].granted += t->demands[i].count;
    t->state = T_RUNNING;
    act_send(t->runner, t->run_msg);
  }
}

static void on_ask(srv_rl_t *rl, srv_rl_ticket_t *t) {
  if (t->state != T_IDLE) SRV_FATAL("rate limiter: '%s' asked twice", t->label);
  t->state = T_WAITING;
  t->seq = rl->next_seq++;
  heap_set(rl, rl->heap_count++, t);
  heap_up(rl, t->heap_pos);
  grant(rl);
}

static void on_release(srv_rl_t *rl, srv_rl_ticket_t *t) {
  if (t->state != T_RUNNING) SRV_FATAL("rate limiter: '%s' released no grant", t->label);
  for (uint32_t i = 0; i < t->demand_count; i++)
    rl->res[t->demands[i].index].granted -= t->demands[i].count;
  t->runs++;
  t->state = T_IDLE;
  act_send(t->owner, t->done_msg);
  grant(rl);
}

static void on_withdraw(srv_rl_t *rl, srv_rl_ticket_t *t) {
  if (t->state != T_WAITING) return; /* granted: it runs and releases */
  heap_remove(rl, t);
  t->state = T_IDLE;
  t->ask_msg.kind = t->withdrawn_kind;
  act_send(t->owner, &t->ask_msg);
  grant(rl); /* the one that left may have held the line */
}

/* ---- the resource table ---- */

static int32_t key_device(const srv_rl_ticket_t *t, const srv_rl_demand_t *d) {
  return d->global ? GLOBAL_DEVICE : t->device;
}

/* The slot of (name, device), made on first use; UINT32_MAX when the
 * table is full. */
static uint32_t resource_slot(srv_rl_t *rl, const char *name, int32_t device) {
  uint32_t free_slot = UINT32_MAX;
  for (uint32_t i = 0; i < rl->res_count; i++) {
    resource_t *r = &rl->res[i];
    if (r->users == 0 && r->granted == 0) {
      if (free_slot == UINT32_MAX) free_slot = i;
    } else if (r->device == device && strcmp(r->name, name) == 0) {
      return i;
    }
  }
  if (free_slot == UINT32_MAX) {
    if (rl->res_count == SRV_RL_RESOURCES_MAX) return UINT32_MAX;
    free_slot = rl->res_count++;
    rl->res[free_slot] = (resource_t){0};
  }
  resource_t *r = &rl->res[free_slot];
  free(r->name);
  r->name = srv_strdup(name);
  r->device = device;
  r->available = 0;
  return free_slot;
}

/* The --rate-limit-resource count for r, as Triton reads them: for a
 * global resource the largest given for its name on any device; for a
 * per-device one the largest given for its device or for every device.
 * Names compare without case: tritonserver lowercases the flag's text. */
static uint64_t explicit_count(const srv_rl_t *rl, const resource_t *r) {
  uint64_t n = 0;
  for (size_t i = 0; i < rl->explicit_count; i++) {
    const explicit_t *e = &rl->explicit[i];
    if (strcasecmp(e->name, r->name) != 0) continue;
    if (r->device == GLOBAL_DEVICE || e->device == -1 || e->device == r->device)
      if (e->count > n) n = e->count;
  }
  return n;
}

/* Recomputes every resource's available count from the attached tickets
 * and checks it as Triton does. On error the table may be half updated:
 * the caller detaches what it added and recomputes again. */
static srv_status_t *recompute(srv_rl_t *rl) {
  for (uint32_t i = 0; i < rl->res_count; i++) rl->res[i].available = 0;
  for (uint32_t k = 0; k < rl->attached_count; k++) {
    const srv_rl_ticket_t *t = rl->attached[k];
    for (uint32_t i = 0; i < t->demand_count; i++) {
      resource_t *r = &rl->res[t->demands[i].index];
      if (t->demands[i].count > r->available) r->available = t->demands[i].count;
    }
  }
  for (uint32_t i = 0; i < rl->res_count; i++) {
    const resource_t *g = &rl->res[i];
    if (g->users == 0 || g->device != GLOBAL_DEVICE) continue;
    for (uint32_t j = 0; j < rl->res_count; j++)
      if (rl->res[j].users > 0 && rl->res[j].device != GLOBAL_DEVICE &&
          strcmp(rl->res[j].name, g->name) == 0)
        return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                              "Resource \"%s\" is present as both global and "
                              "device-specific resource in the model configuration.",
                              g->name);
  }
  if (rl->explicit_count == 0) return NULL;
  for (uint32_t i = 0; i < rl->res_count; i++) {
    resource_t *r = &rl->res[i];
    if (r->users == 0) continue;
    uint64_t n = explicit_count(rl, r);
    if (n < r->available)
      return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                            "Resource count for \"%s\" is limited to %llu which will "
                            "prevent scheduling of one or more model instances, the "
                            "minimum required count is %llu",
                            r->name, (unsigned long long)n,
                            (unsigned long long)r->available);
    r->available = n;
  }
  return NULL;
}

static void ticket_drop(srv_rl_t *rl, srv_rl_ticket_t *t) {
  if (t->state != T_IDLE)
    SRV_FATAL("rate limiter: '%s' detached while it waits or runs", t->label);
  for (uint32_t i = 0; i < t->demand_count; i++)
    if (t->demands[i].index != UINT32_MAX) rl->res[t->demands[i].index].users--;
  uint32_t pos = t->attached_pos;
  rl->attached[pos] = rl->attached[--rl->attached_count];
  rl->attached[pos]->attached_pos = pos;
}

static void tickets_drop(srv_rl_t *rl, srv_rl_ticket_t **tickets, uint32_t count) {
  for (uint32_t k = 0; k < count; k++) ticket_drop(rl, tickets[k]);
  srv_status_t *st = recompute(rl); /* what stays was accepted together */
  if (st != NULL) SRV_FATAL("rate limiter: %s", srv_status_message(st));
}

/* What each resource has now, as Triton logs its resource map. */
static void counts_log(const srv_rl_t *rl) {
  for (uint32_t i = 0; i < rl->res_count; i++) {
    const resource_t *r = &rl->res[i];
    if (r->users == 0) continue;
    if (r->device == GLOBAL_DEVICE)
      SRV_VERBOSE(1, "rate limiter: resource '%s' (global): %llu", r->name,
                  (unsigned long long)r->available);
    else
      SRV_VERBOSE(1, "rate limiter: resource '%s' on device %d: %llu", r->name,
                  (int)r->device, (unsigned long long)r->available);
  }
}

static void room_for(srv_rl_t *rl, uint32_t more) {
  if (rl->attached_count + more <= rl->attached_cap) return;
  uint32_t cap = rl->attached_cap * 2;
  if (cap < rl->attached_count + more) cap = rl->attached_count + more;
  rl->attached = realloc(rl->attached, cap * sizeof *rl->attached);
  rl->heap = realloc(rl->heap, cap * sizeof *rl->heap);
  if (rl->attached == NULL || rl->heap == NULL) SRV_FATAL("out of memory");
  rl->attached_cap = cap;
}

static srv_status_t *on_attach(srv_rl_t *rl, attach_call_t *c) {
  room_for(rl, c->count);
  uint32_t added = 0;
  srv_status_t *st = NULL;
  for (; added < c->count && st == NULL; added++) {
    srv_rl_ticket_t *t = c->tickets[added];
    t->runs = 0;
    t->seq = 0;
    t->state = T_IDLE;
    t->ask_msg.kind = RL_ASK;
    t->release_msg.kind = RL_RELEASE;
    t->withdraw_msg.kind = RL_WITHDRAW;
    t->attached_pos = rl->attached_count;
    rl->attached[rl->attached_count++] = t;
    for (uint32_t i = 0; i < t->demand_count; i++) t->demands[i].index = UINT32_MAX;
    for (uint32_t i = 0; i < t->demand_count && st == NULL; i++) {
      srv_rl_demand_t *d = &t->demands[i];
      d->index = resource_slot(rl, d->name, key_device(t, d));
      if (d->index == UINT32_MAX)
        st = srv_status_new(GRPC_STATUS_RESOURCE_EXHAUSTED,
                            "rate limiter: the loaded models would ask for more than "
                            "%u distinct resources",
                            SRV_RL_RESOURCES_MAX);
      else
        rl->res[d->index].users++;
    }
  }
  if (st == NULL) st = recompute(rl);
  if (st != NULL)
    tickets_drop(rl, c->tickets, added);
  else
    counts_log(rl);
  return st;
}

static void behaviour(act_actor_t *self, act_msg_t *msg) {
  srv_rl_t *rl = act_actor_state(self);
  switch (msg->kind) {
    case RL_ASK:
      on_ask(rl, (srv_rl_ticket_t *)((char *)msg - offsetof(srv_rl_ticket_t, ask_msg)));
      return;
    case RL_RELEASE:
      on_release(
          rl, (srv_rl_ticket_t *)((char *)msg - offsetof(srv_rl_ticket_t, release_msg)));
      return;
    case RL_WITHDRAW:
      on_withdraw(
          rl, (srv_rl_ticket_t *)((char *)msg - offsetof(srv_rl_ticket_t, withdraw_msg)));
      return;
    case RL_ATTACH: {
      attach_call_t *c = (attach_call_t *)msg;
      c->result = on_attach(rl, c);
      if (c->result != NULL) {
        /* The text names the model, as Triton's load error does. */
        srv_status_t *named = srv_status_new(srv_status_code(c->result), "model '%s': %s",
                                             c->model, srv_status_message(c->result));
        srv_status_free(c->result);
        c->result = named;
      }
      sem_post(&c->done);
      return;
    }
    case RL_DETACH: {
      srv_rl_detach_t *d = (srv_rl_detach_t *)msg;
      tickets_drop(rl, d->tickets, d->count);
      act_send(d->to, d->done);
      grant(rl); /* smaller counts may now let the first in line run */
      return;
    }
    case RL_STOP:
      return;
    default:
      SRV_FATAL("rate limiter: unexpected message kind %u", msg->kind);
  }
}

/* ---- the interface ---- */

srv_status_t *srv_rl_new(act_runtime_t *rt, char *const *resources, size_t count,
                         srv_rl_t **out) {
  srv_rl_t *rl = calloc(1, sizeof *rl);
  if (rl == NULL) SRV_FATAL("out of memory");
  rl->explicit = calloc(count ? count : 1, sizeof *rl->explicit);
  rl->res = calloc(SRV_RL_RESOURCES_MAX, sizeof *rl->res);
  if (rl->explicit == NULL || rl->res == NULL) SRV_FATAL("out of memory");
  for (size_t i = 0; i < count; i++) {
    size_t len;
    explicit_t *e = &rl->explicit[rl->explicit_count];
    if (!srv_options_rate_resource_parse(resources[i], &len, &e->count, &e->device)) {
      srv_status_t *st = srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                                        "--rate-limit-resource '%s': not "
                                        "<name>:<count>[:<device>]",
                                        resources[i]);
      srv_rl_free(rl);
      return st;
    }
    e->name = srv_strndup(resources[i], len);
    rl->explicit_count++;
  }
  rl->stop_msg.kind = RL_STOP;
  act_actor_init(&rl->actor, rt, behaviour, rl);
  *out = rl;
  return NULL;
}

void srv_rl_stop(srv_rl_t *rl) { act_send_stop(&rl->actor, &rl->stop_msg); }

void srv_rl_free(srv_rl_t *rl) {
  if (rl == NULL) return;
  for (size_t i = 0; i < rl->explicit_count; i++) free(rl->explicit[i].name);
  for (uint32_t i = 0; i < rl->res_count; i++) free(rl->res[i].name);
  free(rl->explicit);
  free(rl->res);
  free(rl->attached);
  free(rl->heap);
  free(rl);
}

srv_status_t *srv_rl_attach(srv_rl_t *rl, const char *model, srv_rl_ticket_t **tickets,
                            uint32_t count) {
  attach_call_t c = {.model = model, .tickets = tickets, .count = count};
  c.msg.kind = RL_ATTACH;
  sem_init(&c.done, 0, 0);
  act_send(&rl->actor, &c.msg);
  while (sem_wait(&c.done) != 0) {
  }
  sem_destroy(&c.done);
  return c.result;
}

void srv_rl_ask(srv_rl_t *rl, srv_rl_ticket_t *t) {
  t->ask_msg.kind = RL_ASK; /* it may have come back withdrawn */
  act_send(&rl->actor, &t->ask_msg);
}

void srv_rl_release(srv_rl_t *rl, srv_rl_ticket_t *t) {
  act_send(&rl->actor, &t->release_msg);
}

void srv_rl_withdraw(srv_rl_t *rl, srv_rl_ticket_t *t) {
  act_send(&rl->actor, &t->withdraw_msg);
}

void srv_rl_detach(srv_rl_t *rl, srv_rl_detach_t *d) {
  d->msg.kind = RL_DETACH;
  act_send(&rl->actor, &d->msg);
}
