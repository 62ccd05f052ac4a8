/* Futex sleep and wake on a 32-bit atomic word: how workers, pinned threads,
 * and the timer thread sleep. Any thread may wait on or wake any word. */
#ifndef NEREID_ACTORS_FUTEX_H
#define NEREID_ACTORS_FUTEX_H

#include <stdatomic.h>
#include <stdint.h>

/* Sleeps while *word == expected, until woken, or until the absolute
 * CLOCK_MONOTONIC time deadline_ns (UINT64_MAX: no deadline). Returns at
 * once when *word != expected; may also return spuriously, so callers
 * re-check their condition in a loop. The check and the sleep are atomic
 * with respect to act_futex_wake, which is what prevents lost wake-ups. */
void act_futex_wait(atomic_uint *word, unsigned expected, uint64_t deadline_ns);

/* Wakes up to `count` threads sleeping on word. Never blocks. Waking a word
 * nobody sleeps on is harmless (a spurious wake-up at most). */
void act_futex_wake(atomic_uint *word, int count);

#endif
