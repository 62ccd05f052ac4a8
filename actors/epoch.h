/* Epoch-based reclamation: readers on any thread enter and exit read
 * sections without locks; writers (any thread, serialised) retire objects
 * that are freed once no reader can still hold them. See README.md. */
#ifndef NEREID_ACTORS_EPOCH_H
#define NEREID_ACTORS_EPOCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How a caller publishes shared objects through a domain:
 *
 *   reader (any thread)                  writer (any thread)
 *   act_epoch_enter(d);                  obj *old = atomic_exchange_explicit(
 *   obj *o = atomic_load_explicit(           &shared, fresh, memory_order_seq_cst);
 *       &shared, memory_order_seq_cst);  act_epoch_retire(d, &old->entry, free_obj);
 *   ... read *o ...                      ... later, from a timer: act_epoch_poll(d);
 *   act_epoch_exit(d);
 *
 * - The writer unlinks with a seq_cst store or exchange, before retire.
 * - The reader loads with seq_cst, after enter. It costs what acquire does
 *   (a plain mov on x86-64, LDAR on ARMv8), and C11 orders the load after
 *   enter's seq_cst announcement only when both are seq_cst: an acquire
 *   load could be satisfied early (ARMv8.3 LDAPR) and miss the unlink.
 * - A pointer loaded in a section is valid until the thread's outermost
 *   act_epoch_exit on d, not after; it must not be handed to another
 *   thread that outlives the section.
 * Then a retired object's callback runs only after every section that
 * could have loaded it has exited. */

/** A domain: the global epoch, the per-thread reader records, the retired
 * entries. Opaque. */
typedef struct act_epoch act_epoch_t;

/** Embedded in an object to retire it without allocation. Fields are the
 * domain's from act_epoch_retire until the callback is called. */
typedef struct act_epoch_entry {
  struct act_epoch_entry *next;
  void (*fn)(struct act_epoch_entry *);
  uint64_t epoch; /* global epoch at retire */
} act_epoch_entry_t;

/** A new domain (global epoch 0, no records). Any thread; allocates; fatal
 * on out of memory. The caller owns it. */
act_epoch_t *act_epoch_new(void);

/** Runs every pending callback (in retire order, on this thread; a callback
 * may retire more entries, which run too), then frees the domain and its
 * records. Contract: no thread is inside a read section of d (fatal if one
 * is seen), and no other call on d runs or follows. Threads that used d may
 * still be alive, and may exit later: their exit hook skips a freed domain. */
void act_epoch_free(act_epoch_t *d);

/** Starts a read section. Any thread (actor workers, backend threads,
 * plain pthreads), concurrently with everything except act_epoch_free.
 * Wait-free: a few loads and, for the outermost enter, one seq_cst
 * exchange on the caller's own record (its own 64-byte line). The first
 * call of a thread on d registers a record: a lock-free claim of a record
 * released by an exited thread, or a lock-free push of a new one, plus a
 * short process-wide mutex (it drops the thread's links to freed domains).
 * Sections nest; only the outermost enter/exit touch the record's state.
 * Never blocks, never waits for writers. */
void act_epoch_enter(act_epoch_t *d);

/** Ends the section opened by the matching enter, on the same thread.
 * Wait-free (one release store for the outermost exit). Fatal when the
 * thread is not in a section of d. */
void act_epoch_exit(act_epoch_t *d);

/** Hands entry to d: fn(entry) is called, once, by a later act_epoch_poll,
 * act_epoch_synchronize or act_epoch_free, after every read section that
 * was active at the time of the call has exited. The object must already
 * be unreachable for new readers (unlinked by a seq_cst store). Any thread
 * (inside a read section too); takes the domain's writer mutex for O(1)
 * work; never reclaims, never waits for readers. entry (and the object
 * around it) belongs to d until fn is called; fn then owns it. */
void act_epoch_retire(act_epoch_t *d, act_epoch_entry_t *entry,
                      void (*fn)(act_epoch_entry_t *));

/** Tries to advance the global epoch (at most twice, only while something
 * is pending; it advances when every active reader has announced the
 * current epoch), then calls the callbacks of entries whose grace period
 * has passed (retired at epoch e, global epoch now >= e + 2), in retire
 * order, on this thread, after releasing the writer mutex (a callback may
 * call retire or poll). Returns true when nothing is pending after its
 * callbacks have run (no retired entry whose callback has not returned,
 * counting other threads' retires and polls). Any thread (inside a read
 * section too: it then simply cannot reclaim what that section may hold);
 * concurrent writer calls are serialised by the writer mutex. Never waits
 * for readers: with a reader in a long section it returns false and the
 * caller retries later (from a timer). O(records + reclaimed). */
bool act_epoch_poll(act_epoch_t *d);

/** Entries retired whose callback has not returned yet. Any thread;
 * wait-free; a snapshot. */
size_t act_epoch_pending(const act_epoch_t *d);

/** Polls, yielding the CPU between attempts, until act_epoch_poll reports
 * nothing pending. Blocks as long as readers stay in their sections. For
 * shutdown paths and tests only: not on an actor worker. Fatal when the
 * calling thread is inside a read section of d (it would wait for itself). */
void act_epoch_synchronize(act_epoch_t *d);

/** Records ever allocated for d (in use or released for reuse): the most
 * threads that were registered at one time, not the number that ever
 * came. Any thread; a snapshot; for tests and metrics. */
size_t act_epoch_records(const act_epoch_t *d);

#endif
