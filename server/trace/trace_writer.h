/* The trace file writer: one thread that takes finished trace records from
 * a queue and writes them, so that no request path waits on the disk.
 * Triton's layout: with log_frequency 0 every trace goes into the one
 * JSON array of `path`, closed at shutdown; with log_frequency N, every N
 * traces go into their own array `path.<i>`, i = 0, 1, ...; what is left
 * at shutdown goes into the next index. */
#ifndef NEREID_SERVER_TRACE_TRACE_WRITER_H
#define NEREID_SERVER_TRACE_TRACE_WRITER_H

#include <stdint.h>

#include "server/common/status.h"

/** Bytes of finished traces that may wait for the writer; a trace past it
 *  is dropped and counted (the log says how many at shutdown). */
#define SRV_TRACE_QUEUE_MAX (256u << 20)

struct srv_trace_record;
typedef struct srv_trace_writer srv_trace_writer_t;

/** Starts the writer's thread for `path` (copied). Nothing is opened yet:
 *  the file is made at the first trace, as Triton does. */
srv_status_t *srv_trace_writer_start(const char *path, srv_trace_writer_t **out);

/** Queues a finished record; the writer owns and frees it. Any thread;
 *  never blocks on I/O (a short mutex section). */
void srv_trace_writer_push(srv_trace_writer_t *w, struct srv_trace_record *r);

/** Writes what is queued, closes the files, joins the thread, frees w.
 *  Main thread, at shutdown, after every request is done. */
void srv_trace_writer_stop(srv_trace_writer_t *w);

/** Traces written and dropped so far (tests, the shutdown log). */
void srv_trace_writer_counts(srv_trace_writer_t *w, uint64_t *written, uint64_t *dropped);

#endif
