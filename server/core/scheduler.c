/* The default scheduler: the model actor's behaviour. Requests queue in
 * arrival order; each goes to the next idle instance, one request per
 * execution (Triton's default scheduler). The queue and the idle list are
 * this actor's alone; instances report back with their idle message. */
#include <stddef.h>

#include "server/core/model.h"
#include "server/log.h"

static void dispatch(srv_model_t *m) {
  while (m->queue_head != NULL && m->idle != NULL) {
    srv_instance_t *inst = m->idle;
    m->idle = inst->next_idle;
    TRITONBACKEND_Request *r = m->queue_head;
    m->queue_head = r->next;
    if (m->queue_head == NULL) m->queue_tail = NULL;
    r->next = NULL;
    inst->batch[0] = r;
    inst->batch_count = 1;
    act_send(&inst->actor, &inst->execute_msg);
  }
}

void srv_scheduler_behaviour(act_actor_t *self, act_msg_t *msg) {
  srv_model_t *m = act_actor_state(self);
  switch (msg->kind) {
    case SRV_MODEL_REQUEST: {
      TRITONBACKEND_Request *r = (TRITONBACKEND_Request *)msg;
      r->next = NULL;
      if (m->queue_tail != NULL)
        m->queue_tail->next = r;
      else
        m->queue_head = r;
      m->queue_tail = r;
      dispatch(m);
      return;
    }
    case SRV_MODEL_INSTANCE_IDLE: {
      srv_instance_t *inst =
          (srv_instance_t *)((char *)msg - offsetof(srv_instance_t, idle_msg));
      inst->next_idle = m->idle;
      m->idle = inst;
      dispatch(m);
      return;
    }
    case SRV_MODEL_STOP:
      if (m->queue_head != NULL)
        SRV_FATAL("model '%s' stopped with queued requests", m->name);
      /* The runtime never touches the actor after this: the waiter may free m. */
      sem_post(&m->stopped);
      return;
    default:
      SRV_FATAL("model '%s': unexpected message kind %u", m->name, msg->kind);
  }
}

void srv_model_enqueue(srv_model_t *m, TRITONBACKEND_Request *request) {
  request->msg.kind = SRV_MODEL_REQUEST;
  act_send(&m->actor, &request->msg);
}
