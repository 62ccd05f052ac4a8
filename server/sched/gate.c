/* The model's send gate (see srv_model_send in model.h): senders on any
 * thread, each counted in its own writer slot; the model actor closes it
 * once, before its final message. */
#include <stdatomic.h>

#include "server/model/model.h"
#include "server/stats/thread_slot.h"

bool srv_model_send(srv_model_t *m, act_msg_t *msg) {
  /* Our slot's count: a thread keeps its slot, so its -1 lands where its
   * +1 did and no slot goes below 0; threads that share a slot add up.
   * seq_cst on both sides (here and in srv_model_gate_close): either we
   * see closed, or the closer's later seq_cst load of our slot sees us
   * counted and it waits for us. */
  srv_model_slot_t *mine = &m->slots[srv_thread_slot()];
  atomic_fetch_add_explicit(&mine->senders, 1, memory_order_seq_cst);
  bool open = !atomic_load_explicit(&m->closed, memory_order_seq_cst);
  if (open) act_send(&m->actor, msg);
  /* Release: our send happens before whatever the closer does after the
   * load that sees this slot back at 0 (its final message). */
  atomic_fetch_sub_explicit(&mine->senders, 1, memory_order_release);
  return open;
}

bool srv_model_gate_close(srv_model_t *m) {
  /* seq_cst: the store half of the pairing in srv_model_send. */
  atomic_store_explicit(&m->closed, true, memory_order_seq_cst);
  /* Slot by slot: a sender that counts itself in a slot after we read it
   * comes after our store in the total order, so it sees closed. */
  for (uint32_t i = 0; i < SRV_THREAD_SLOTS; i++)
    /* seq_cst (acquire part: the send of a sender that left). */
    if (atomic_load_explicit(&m->slots[i].senders, memory_order_seq_cst) != 0) return false;
  return true;
}
