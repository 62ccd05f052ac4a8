/* The message header every actor message starts with, and the message pool:
 * per-thread caches by size class. Any thread may allocate and free. */
#ifndef NEREID_ACTORS_MSG_H
#define NEREID_ACTORS_MSG_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/** First member of every message. A message is in at most one mailbox at a
 * time; while it is queued the runtime owns `next` (and the sender must not
 * touch or re-send the message). Messages may come from act_msg_alloc or be
 * embedded in their owner (no allocation at all). */
typedef struct act_msg {
  /** Mailbox link, owned by the runtime while queued. */
  struct act_msg *_Atomic next;
  /** Meaning defined by the receiver. */
  uint32_t kind;
  /** Bits in ACT_MSG_USER_MASK are the sender's and receiver's; bits in
   * ACT_MSG_RUNTIME_MASK are set and cleared by the runtime (act_send clears
   * ACT_MSG_STOP, act_send_stop sets it). */
  uint32_t flags;
} act_msg_t;

/** Set by act_send_stop: this is the receiver's final message. */
#define ACT_MSG_STOP (1u << 31)
/** Bits the runtime may change on send. */
#define ACT_MSG_RUNTIME_MASK 0xff000000u
/** Bits the runtime never touches. */
#define ACT_MSG_USER_MASK 0x00ffffffu

/** Largest size served from the pool (size classes 64, 128, 256, 512 and
 * 1024 bytes); larger messages come from malloc. */
#define ACT_MSG_POOL_MAX 1024u

/** Returns `size` bytes (at least sizeof(act_msg_t); the size includes the
 * header) whose first member is an act_msg_t with next = NULL, kind = 0 and
 * flags = 0; 16-byte aligned. Any thread, inside the runtime or not. Never
 * returns NULL: out of memory is fatal. Steady state takes the block from
 * the calling thread's cache (no lock, no malloc); an empty cache refills a
 * batch from the global pool under a short lock. The caller owns the
 * message until it sends it. */
void *act_msg_alloc(size_t size);

/** Returns a message from act_msg_alloc. Any thread (not only the one that
 * allocated it): the block goes to the calling thread's cache, which is
 * bounded; a full cache hands a batch to the global pool. Freeing twice, or
 * freeing a message that did not come from act_msg_alloc, is fatal when
 * detected (the pool checks a tag in front of the message). */
void act_msg_free(act_msg_t *msg);

/** Moves the calling thread's cached messages to the global pool. Threads
 * do this by themselves when they exit; call it from a thread that stays
 * alive (main) before act_msg_pool_trim to give everything back. */
void act_msg_cache_flush(void);

/** Frees every message held by the global pool (not those in live threads'
 * caches or in use). Any thread, at any time: later allocations refill it.
 * act_runtime_free calls it. */
void act_msg_pool_trim(void);

#endif
