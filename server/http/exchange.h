/* One HTTP request and its answer (http.md, "Exchanges"). The handler gets
 * it on the loop thread that read the request; what it reads here (method,
 * path, headers, body) stays valid until it answers. The answer may come
 * from any thread: srv_http_reply hands it to the loop by message. */
#ifndef NEREID_SERVER_HTTP_EXCHANGE_H
#define NEREID_SERVER_HTTP_EXCHANGE_H

#include <stdbool.h>
#include <stddef.h>

#include "server/http/http_server.h"

/** Bytes: a view into the request, or a part of an answer. */
typedef struct {
  const char *base;
  size_t len;
} srv_http_bytes_t;

/** An answer's body: parts sent one after the other, without copying.
 *  `release` (may be NULL) runs once on the loop thread when h2o is done
 *  with the parts (sent, or the connection went), with `release_arg`. */
typedef struct {
  const srv_http_bytes_t *parts;
  size_t count;
  void (*release)(void *arg);
  void *release_arg;
} srv_http_body_t;

/** The request's method, path (without the query), query (without '?',
 *  empty when none) and whole body. */
srv_http_bytes_t srv_http_method(const srv_http_exchange_t *x);
srv_http_bytes_t srv_http_path(const srv_http_exchange_t *x);
srv_http_bytes_t srv_http_query(const srv_http_exchange_t *x);
srv_http_bytes_t srv_http_body(const srv_http_exchange_t *x);

/** The value of the first header called `name` (lower case), or false. */
bool srv_http_header(const srv_http_exchange_t *x, const char *name,
                     srv_http_bytes_t *value);

/** Asks for `fn(arg)` on the loop thread if h2o drops the request (its
 *  connection closed) before the answer was handed to h2o: the owner may
 *  cancel its work. Anything the owner sends back from fn reaches it
 *  before the release of the answer's body. Set it on the loop thread,
 *  while handling the request. */
void srv_http_on_drop(srv_http_exchange_t *x, void (*fn)(void *arg), void *arg);

/** Adds a response header (copied) to the answer that comes next, at most
 *  SRV_HTTP_EXTRA_HEADERS of them. The answering thread, before
 *  srv_http_reply. */
#define SRV_HTTP_EXTRA_HEADERS 4
void srv_http_add_header(srv_http_exchange_t *x, const char *name, const char *value);

/** Answers x with `status`, a Content-Type (NULL: none) and `body`, and
 *  ends the exchange: x is not to be used after. Any thread, once. */
void srv_http_reply(srv_http_exchange_t *x, int status, const char *content_type,
                    const srv_http_body_t *body);

/** A streamed answer (server-sent events): srv_http_stream_begin sends
 *  the status and headers, then each srv_http_stream_write one chunk, in
 *  call order, each released like a body once h2o wrote it; the write with
 *  `last` ends the exchange. Any thread; calls for one exchange must be
 *  ordered (one actor makes them). */
void srv_http_stream_begin(srv_http_exchange_t *x, int status, const char *content_type);
void srv_http_stream_write(srv_http_exchange_t *x, const char *data, size_t len,
                           void (*release)(void *arg), void *arg, bool last);

/** srv_http_reply with one malloc'd JSON text that the call takes. */
void srv_http_reply_json(srv_http_exchange_t *x, int status, char *json, size_t len);

/** srv_http_reply with Triton's error body {"error": "<message>"}. */
void srv_http_reply_error(srv_http_exchange_t *x, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
