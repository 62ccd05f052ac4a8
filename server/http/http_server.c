/* The HTTP server on h2o's event loop (see http_server.h and http.md). Each
 * loop thread owns an h2o context and a listening socket of its own on the
 * same port (SO_REUSEPORT: the kernel spreads connections); everything of
 * h2o is touched only by its loop's thread. Answers made on other threads
 * reach the loop as h2o multithread messages. */
#include "server/http/http_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <h2o.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server/common/deadline.h"
#include "server/common/log.h"
#include "server/common/memory.h"
#include "server/http/exchange.h"
#include "server/views/http_views.h"

/* In libh2o-evloop 2.2.5, not declared by its headers. */
void h2o_evloop_destroy(h2o_evloop_t *loop);

typedef struct loop {
  srv_http_t *h;
  pthread_t thread;
  bool started;
  h2o_evloop_t *evloop;
  h2o_context_t ctx;
  h2o_accept_ctx_t accept_ctx;
  int fd;
  h2o_socket_t *listener;
  h2o_multithread_queue_t *queue;
  h2o_multithread_receiver_t answers; /* exchanges answered on other threads */
  h2o_multithread_receiver_t control; /* close, exit */
  h2o_multithread_message_t close_msg, exit_msg;
  bool closing, exiting, leaked;
  /* Sends to this loop's queue under way on other threads (loop_send). */
  _Atomic uint32_t sending;
  sem_t ready; /* posted once loop_init ran on the loop's thread */
  srv_status_t *init_status;
} loop_t;

struct srv_http {
  srv_http_config_t cfg;
  char *name, *address;
  h2o_globalconf_t config;
  loop_t *loops;
  int loop_count;
  int port;
  /* Exchanges whose answer has not reached their loop yet. */
  _Atomic uint64_t outstanding;
};

/* Lives in the request's pool: h2o disposes it with the request (answer
 * sent, or the connection gone), which tells the exchange. */
typedef struct {
  srv_http_exchange_t *x;
} link_t;

/* One piece of a streamed answer, on its way to the loop and then queued
 * there until h2o can take it. */
/* What travels to a loop: an exchange's answer, or a chunk of a streamed
 * one; both start with this. */
typedef struct {
  h2o_multithread_message_t msg;
  bool is_chunk;
} to_loop_t;

typedef struct chunk {
  to_loop_t head;
  srv_http_exchange_t *x;
  struct chunk *next;
  const char *data;
  size_t len;
  void (*release)(void *arg);
  void *arg;
  bool begin, last;
  int status;
  const char *content_type;
} chunk_t;

struct srv_http_exchange {
  to_loop_t head; /* the answer, to the loop */
  loop_t *loop;
  h2o_req_t *req; /* NULL once h2o dropped the request */
  link_t *link;
  h2o_generator_t generator;
  int status;
  const char *content_type;
  srv_http_body_t body;
  srv_http_bytes_t *parts; /* the body's parts, copied */
  char *headers[SRV_HTTP_EXTRA_HEADERS][2];
  int header_count;
  bool answered, sent;
  /* Streamed answers, the loop's: chunks not yet given to h2o, the one h2o
   * writes now, and whether h2o takes another now. */
  bool streaming, stream_started, can_send;
  void (*on_drop)(void *arg); /* srv_http_on_drop */
  void *on_drop_arg;
  chunk_t *queue_head, *queue_tail, *writing, *final_chunk;
};

static _Thread_local loop_t *current_loop;

/* Every message to a loop from another thread goes through here. h2o
 * writes the loop's wake-up pipe after it has queued the message and let
 * go of the queue's lock, so a loop awake for another reason may take the
 * message first and, if it was the last one (an exit, the last answer),
 * destroy its queue and close that pipe before the write: a write to a
 * closed descriptor, or to whatever reused its number. The count lets the
 * exiting loop wait for such writes (loop_main). Relaxed increment: the
 * queue's lock orders it before the loop takes the message. */
static void loop_send(loop_t *loop, h2o_multithread_receiver_t *r,
                      h2o_multithread_message_t *m) {
  atomic_fetch_add_explicit(&loop->sending, 1, memory_order_relaxed);
  h2o_multithread_send_message(r, m);
  atomic_fetch_sub_explicit(&loop->sending, 1, memory_order_release);
}

/* ---- exchanges ---- */

static void chunk_free(chunk_t *c) {
  if (c->release != NULL) c->release(c->arg);
  free(c);
}

static void exchange_free(srv_http_exchange_t *x) {
  if (x->body.release != NULL) x->body.release(x->body.release_arg);
  if (x->writing != NULL) chunk_free(x->writing);
  if (x->final_chunk != NULL) chunk_free(x->final_chunk);
  for (chunk_t *c = x->queue_head, *next; c != NULL; c = next) {
    next = c->next;
    chunk_free(c);
  }
  for (int i = 0; i < x->header_count; i++) {
    free(x->headers[i][0]);
    free(x->headers[i][1]);
  }
  free(x->parts);
  free(x);
}

static void link_dispose(void *p) {
  link_t *link = p;
  srv_http_exchange_t *x = link->x;
  if (x == NULL) return;
  if (x->sent) {
    exchange_free(x); /* h2o is done with the parts */
  } else {
    x->req = NULL; /* the answer, when it comes, finds nobody */
    x->link = NULL;
    if (x->on_drop != NULL) x->on_drop(x->on_drop_arg);
  }
}

void srv_http_on_drop(srv_http_exchange_t *x, void (*fn)(void *arg), void *arg) {
  x->on_drop = fn;
  x->on_drop_arg = arg;
}

static const char *reason_of(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 413:
      return "Payload Too Large";
    case 429:
      return "Too Many Requests";
    case 499:
      return "Client Closed Request";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    default:
      return status < 400 ? "OK" : "Error";
  }
}

/* On the loop thread: the answer goes out, or is dropped with its request. */
static void deliver(srv_http_exchange_t *x) {
  srv_http_t *h = x->loop->h;
  /* Release: the waiter of srv_http_wait then sees everything done. */
  atomic_fetch_sub_explicit(&h->outstanding, 1, memory_order_release);
  h2o_req_t *req = x->req;
  if (req == NULL) {
    exchange_free(x);
    return;
  }
  req->res.status = x->status;
  req->res.reason = reason_of(x->status);
  if (x->content_type != NULL)
    h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CONTENT_TYPE, NULL,
                   x->content_type, strlen(x->content_type));
  for (int i = 0; i < x->header_count; i++)
    h2o_add_header_by_str(&req->pool, &req->res.headers, x->headers[i][0],
                          strlen(x->headers[i][0]), 1, NULL, x->headers[i][1],
                          strlen(x->headers[i][1]));
  h2o_iovec_t *vecs = h2o_mem_alloc_pool(&req->pool, (x->body.count + 1) * sizeof *vecs);
  size_t total = 0;
  for (size_t i = 0; i < x->body.count; i++) {
    vecs[i] = h2o_iovec_init(x->parts[i].base, x->parts[i].len);
    total += x->parts[i].len;
  }
  req->res.content_length = total;
  x->sent = true; /* the link frees x once h2o drops the request */
  h2o_start_response(req, &x->generator);
  h2o_send(req, vecs, x->body.count, H2O_SEND_STATE_FINAL);
}

/* ---- streamed answers (the loop's) ---- */

static void stream_pump(srv_http_exchange_t *x);

/* h2o took the chunk being written: release it, write the next. */
static void stream_proceed(h2o_generator_t *g, h2o_req_t *req) {
  (void)req;
  srv_http_exchange_t *x = H2O_STRUCT_FROM_MEMBER(srv_http_exchange_t, generator, g);
  if (x->writing != NULL) chunk_free(x->writing);
  x->writing = NULL;
  x->can_send = true;
  stream_pump(x);
}

static void stream_pump(srv_http_exchange_t *x) {
  h2o_req_t *req = x->req;
  while (x->queue_head != NULL) {
    chunk_t *c = x->queue_head;
    if (req == NULL) { /* the connection went: drop what comes */
      x->queue_head = c->next;
      if (c->last) x->sent = true;
      chunk_free(c);
      continue;
    }
    if (c->begin) {
      x->queue_head = c->next;
      req->res.status = c->status;
      req->res.reason = reason_of(c->status);
      if (c->content_type != NULL)
        h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CONTENT_TYPE, NULL,
                       c->content_type, strlen(c->content_type));
      x->generator.proceed = stream_proceed;
      h2o_start_response(req, &x->generator);
      x->stream_started = true;
      x->can_send = true;
      chunk_free(c);
      continue;
    }
    if (!x->can_send) return;
    x->queue_head = c->next;
    x->can_send = false;
    h2o_iovec_t v = h2o_iovec_init(c->data, c->len);
    if (c->last) {
      x->final_chunk = c; /* released with the request, like a body */
      x->sent = true;
      h2o_send(req, &v, 1, H2O_SEND_STATE_FINAL);
      return;
    }
    x->writing = c;
    h2o_send(req, &v, 1, H2O_SEND_STATE_IN_PROGRESS);
  }
}

static void chunk_arrive(chunk_t *c) {
  srv_http_exchange_t *x = c->x;
  c->next = NULL;
  if (x->queue_tail != NULL && x->queue_head != NULL)
    x->queue_tail->next = c;
  else
    x->queue_head = c;
  x->queue_tail = c;
  bool last = c->last;
  stream_pump(x);
  if (!last) return;
  srv_http_t *h = x->loop->h;
  atomic_fetch_sub_explicit(&h->outstanding, 1, memory_order_release);
  if (x->req == NULL) exchange_free(x); /* else the link frees it */
}

static void answers_receive(h2o_multithread_receiver_t *r, h2o_linklist_t *messages) {
  (void)r;
  while (!h2o_linklist_is_empty(messages)) {
    h2o_multithread_message_t *m =
        H2O_STRUCT_FROM_MEMBER(h2o_multithread_message_t, link, messages->next);
    h2o_linklist_unlink(&m->link);
    to_loop_t *t = (to_loop_t *)m;
    if (t->is_chunk)
      chunk_arrive((chunk_t *)t);
    else
      deliver((srv_http_exchange_t *)t);
  }
}

static void chunk_send(srv_http_exchange_t *x, chunk_t *c) {
  c->x = x;
  if (current_loop == x->loop)
    chunk_arrive(c);
  else
    loop_send(x->loop, &x->loop->answers, &c->head.msg);
}

void srv_http_stream_begin(srv_http_exchange_t *x, int status, const char *content_type) {
  if (x->answered) SRV_FATAL("HTTP exchange answered twice");
  x->answered = true;
  x->streaming = true;
  chunk_t *c = calloc(1, sizeof *c);
  if (c == NULL) SRV_FATAL("out of memory");
  c->head.is_chunk = true;
  c->begin = true;
  c->status = status;
  c->content_type = content_type;
  chunk_send(x, c);
}

void srv_http_stream_write(srv_http_exchange_t *x, const char *data, size_t len,
                           void (*release)(void *arg), void *arg, bool last) {
  chunk_t *c = calloc(1, sizeof *c);
  if (c == NULL) SRV_FATAL("out of memory");
  *c = (chunk_t){.head.is_chunk = true,
                 .data = data,
                 .len = len,
                 .release = release,
                 .arg = arg,
                 .last = last};
  chunk_send(x, c);
}

void srv_http_add_header(srv_http_exchange_t *x, const char *name, const char *value) {
  if (x->header_count == SRV_HTTP_EXTRA_HEADERS) SRV_FATAL("too many HTTP headers");
  x->headers[x->header_count][0] = srv_strdup(name);
  x->headers[x->header_count][1] = srv_strdup(value);
  x->header_count++;
}

void srv_http_reply(srv_http_exchange_t *x, int status, const char *content_type,
                    const srv_http_body_t *body) {
  if (x->answered) SRV_FATAL("HTTP exchange answered twice");
  x->answered = true;
  x->status = status;
  x->content_type = content_type;
  if (body != NULL) {
    x->body = *body;
    x->parts = malloc((body->count ? body->count : 1) * sizeof *x->parts);
    if (x->parts == NULL) SRV_FATAL("out of memory");
    memcpy(x->parts, body->parts, body->count * sizeof *x->parts);
  }
  if (current_loop == x->loop)
    deliver(x);
  else
    loop_send(x->loop, &x->loop->answers, &x->head.msg);
}

static void free_arg(void *p) { free(p); }

void srv_http_reply_json(srv_http_exchange_t *x, int status, char *json, size_t len) {
  srv_http_bytes_t part = {json, len};
  srv_http_body_t body = {&part, 1, free_arg, json};
  srv_http_reply(x, status, "application/json", &body);
}

void srv_http_reply_error(srv_http_exchange_t *x, int status, const char *fmt, ...) {
  char text[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  size_t len;
  char *json = srv_http_message_body(text, &len);
  srv_http_reply_json(x, status, json, len);
}

srv_http_bytes_t srv_http_method(const srv_http_exchange_t *x) {
  return (srv_http_bytes_t){x->req->method.base, x->req->method.len};
}

srv_http_bytes_t srv_http_path(const srv_http_exchange_t *x) {
  /* h2o's normalized path: percent-encodings decoded, no "." or "..", no
   * query (a model name may come encoded). */
  const h2o_req_t *r = x->req;
  return (srv_http_bytes_t){r->path_normalized.base, r->path_normalized.len};
}

srv_http_bytes_t srv_http_query(const srv_http_exchange_t *x) {
  const h2o_req_t *r = x->req;
  if (r->query_at == SIZE_MAX) return (srv_http_bytes_t){"", 0};
  return (srv_http_bytes_t){r->path.base + r->query_at + 1,
                            r->path.len - r->query_at - 1};
}

srv_http_bytes_t srv_http_body(const srv_http_exchange_t *x) {
  return (srv_http_bytes_t){x->req->entity.base != NULL ? x->req->entity.base : "",
                            x->req->entity.len};
}

bool srv_http_header(const srv_http_exchange_t *x, const char *name,
                     srv_http_bytes_t *value) {
  ssize_t i = h2o_find_header_by_str(&x->req->headers, name, strlen(name), -1);
  if (i < 0) return false;
  h2o_iovec_t v = x->req->headers.entries[i].value;
  *value = (srv_http_bytes_t){v.base, v.len};
  return true;
}

/* ---- requests and connections ---- */

typedef struct {
  h2o_handler_t super;
  srv_http_t *h;
} handler_t;

static int on_req(h2o_handler_t *self, h2o_req_t *req) {
  srv_http_t *h = ((handler_t *)self)->h;
  loop_t *loop = current_loop;
  srv_http_exchange_t *x = calloc(1, sizeof *x);
  if (x == NULL) SRV_FATAL("out of memory");
  x->loop = loop;
  x->req = req;
  x->link = h2o_mem_alloc_shared(&req->pool, sizeof *x->link, link_dispose);
  x->link->x = x;
  /* Relaxed: only the count matters; deliver's decrement releases. */
  atomic_fetch_add_explicit(&h->outstanding, 1, memory_order_relaxed);
  if (loop->closing) {
    srv_http_reply_error(x, 503, "the server is shutting down");
    return 0;
  }
  h->cfg.handler(h->cfg.ctx, x);
  return 0;
}

static void on_accept(h2o_socket_t *listener, const char *err) {
  if (err != NULL) return;
  loop_t *loop = listener->data;
  h2o_socket_t *sock = h2o_evloop_socket_accept(listener);
  if (sock != NULL) h2o_accept(&loop->accept_ctx, sock);
}

static void control_receive(h2o_multithread_receiver_t *r, h2o_linklist_t *messages) {
  loop_t *loop = H2O_STRUCT_FROM_MEMBER(loop_t, control, r);
  while (!h2o_linklist_is_empty(messages)) {
    h2o_multithread_message_t *m =
        H2O_STRUCT_FROM_MEMBER(h2o_multithread_message_t, link, messages->next);
    h2o_linklist_unlink(&m->link);
    if (m == &loop->close_msg && !loop->closing) {
      loop->closing = true;
      if (loop->listener != NULL) {
        h2o_socket_read_stop(loop->listener);
        h2o_socket_close(loop->listener);
        loop->listener = NULL;
      }
      h2o_context_request_shutdown(&loop->ctx); /* idle keep-alives close */
    } else if (m == &loop->exit_msg) {
      loop->exiting = true;
    }
  }
}

/* How long a loop told to exit waits for its connections to close. */
#define EXIT_DRAIN_MS 2000

/* Connections keep the context from being disposed of. */
static bool connections_left(loop_t *loop) {
  return !h2o_linklist_is_empty(&loop->ctx.http1._conns) ||
         !h2o_linklist_is_empty(&loop->ctx.http2._conns);
}

/* Runs until told to exit and its connections are gone (closed by the
 * shutdown request of srv_http_close once idle), or the drain time passed:
 * then `leaked` says the loop cannot be disposed of. */
static srv_status_t *loop_init(srv_http_t *h, loop_t *loop);
static void loop_dispose(loop_t *loop);

static void *loop_main(void *arg) {
  loop_t *loop = arg;
  current_loop = loop;
  /* h2o's buffer pools are per thread: everything of the loop is made on
   * its own thread, which then alone recycles it. */
  srv_status_t *st = loop_init(loop->h, loop);
  if (st != NULL) loop_dispose(loop);
  loop->init_status = st;
  sem_post(&loop->ready); /* the main thread reads init_status after this */
  if (st != NULL) return NULL;
  while (!loop->exiting) h2o_evloop_run(loop->evloop, INT32_MAX);
  uint64_t until = h2o_now(loop->evloop) + EXIT_DRAIN_MS;
  while (connections_left(loop) && h2o_now(loop->evloop) < until)
    h2o_evloop_run(loop->evloop, 10);
  loop->leaked = connections_left(loop);
  /* Nothing more is sent to a loop told to exit (its exchanges all have
   * their answers): what is still counted is a sender between its queueing
   * and its write, which does not block (h2o's wake-up descriptor is
   * non-blocking). Acquire: pairs with loop_send's decrement. */
  while (atomic_load_explicit(&loop->sending, memory_order_acquire) != 0) sched_yield();
  /* The shutdown request arms HTTP/2's one-second GOAWAY timer even with no
   * connection: with none left it has nothing to do, and waiting for it
   * would add a second to every stop. */
  if (!loop->leaked && h2o_timeout_is_linked(&loop->ctx.http2._graceful_shutdown_timeout))
    h2o_timeout_unlink(&loop->ctx.http2._graceful_shutdown_timeout);
  loop_dispose(loop);
  return NULL;
}

/* ---- start and stop ---- */

/* SO_REUSEPORT only when the config asks (--reuse-http-port): then each
 * loop has its own socket, and other processes may bind the port too.
 * Otherwise a port in use is an error. */
static srv_status_t *listener_open(srv_http_t *h, int port, int *fd_out, int *bound) {
  struct addrinfo hints = {.ai_family = AF_UNSPEC,
                           .ai_socktype = SOCK_STREAM,
                           .ai_flags = AI_NUMERICHOST | AI_PASSIVE};
  struct addrinfo *ai;
  char service[16];
  snprintf(service, sizeof service, "%d", port);
  int rc = getaddrinfo(h->address, service, &hints, &ai);
  if (rc != 0)
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT, "%s address '%s': %s", h->name,
                          h->address, gai_strerror(rc));
  int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
  srv_status_t *st = NULL;
  if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
      (h->cfg.reuse_port &&
       setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) != 0) ||
      bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, SOMAXCONN) != 0)
    st = srv_status_new(GRPC_STATUS_UNAVAILABLE, "%s: cannot listen on %s:%d: %s",
                        h->name, h->address, port, strerror(errno));
  freeaddrinfo(ai);
  if (st == NULL) {
    struct sockaddr_storage sa;
    socklen_t len = sizeof sa;
    getsockname(fd, (struct sockaddr *)&sa, &len);
    *bound = ntohs(sa.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&sa)->sin6_port
                                            : ((struct sockaddr_in *)&sa)->sin_port);
    *fd_out = fd;
  } else if (fd >= 0) {
    close(fd);
  }
  return st;
}

/* On the loop's thread, at its end (or when its start failed). */
static void loop_dispose(loop_t *loop) {
  if (loop->evloop == NULL || loop->leaked) return;
  if (loop->listener != NULL) h2o_socket_close(loop->listener);
  if (loop->queue != NULL) {
    h2o_multithread_unregister_receiver(loop->queue, &loop->answers);
    h2o_multithread_unregister_receiver(loop->queue, &loop->control);
    h2o_multithread_destroy_queue(loop->queue);
  }
  h2o_context_dispose(&loop->ctx);
  h2o_evloop_destroy(loop->evloop);
  loop->evloop = NULL;
}

static srv_status_t *loop_init(srv_http_t *h, loop_t *loop) {
  loop->h = h;
  loop->evloop = h2o_evloop_create();
  h2o_context_init(&loop->ctx, loop->evloop, &h->config);
  loop->accept_ctx.ctx = &loop->ctx;
  loop->accept_ctx.hosts = h->config.hosts;
  loop->queue = h2o_multithread_create_queue(loop->evloop);
  h2o_multithread_register_receiver(loop->queue, &loop->answers, answers_receive);
  h2o_multithread_register_receiver(loop->queue, &loop->control, control_receive);
  int bound = 0;
  if (h->cfg.reuse_port || loop == &h->loops[0]) {
    srv_status_t *st = listener_open(h, h->port, &loop->fd, &bound);
    if (st != NULL) return st;
    if (h->port == 0) h->port = bound; /* the other loops join the port picked */
  } else {
    /* Without SO_REUSEPORT the loops accept on one socket, each through
     * its own descriptor (the first loop's is open: loops start in turn). */
    loop->fd = fcntl(h->loops[0].fd, F_DUPFD_CLOEXEC, 0);
    if (loop->fd < 0)
      return srv_status_new(GRPC_STATUS_UNAVAILABLE, "%s: cannot share the listener: %s",
                            h->name, strerror(errno));
  }
  loop->listener =
      h2o_evloop_socket_create(loop->evloop, loop->fd, H2O_SOCKET_FLAG_DONT_READ);
  loop->listener->data = loop;
  h2o_socket_read_start(loop->listener, on_accept);
  return NULL;
}

/* Tells every started loop to exit and joins it; each disposes of its own
 * h2o objects on its thread. */
static void loops_end(srv_http_t *h) {
  for (int i = 0; i < h->loop_count; i++) {
    loop_t *loop = &h->loops[i];
    if (loop->started && loop->init_status == NULL)
      loop_send(loop, &loop->control, &loop->exit_msg);
  }
  for (int i = 0; i < h->loop_count; i++) {
    loop_t *loop = &h->loops[i];
    if (!loop->started) continue;
    pthread_join(loop->thread, NULL);
    sem_destroy(&loop->ready);
    loop->started = false;
  }
}

static void server_free(srv_http_t *h) {
  free(h->loops);
  h2o_config_dispose(&h->config);
  free(h->name);
  free(h->address);
  free(h);
}

srv_status_t *srv_http_start(const srv_http_config_t *cfg, srv_http_t **out) {
  srv_http_t *h = calloc(1, sizeof *h);
  if (h == NULL) SRV_FATAL("out of memory");
  h->cfg = *cfg;
  h->name = srv_strdup(cfg->name);
  h->address = srv_strdup(cfg->address);
  h->port = cfg->port;
  h->loop_count = cfg->threads > 0 ? cfg->threads : 1;
  h->loops = calloc((size_t)h->loop_count, sizeof *h->loops);
  if (h->loops == NULL) SRV_FATAL("out of memory");
  h2o_config_init(&h->config);
  h->config.max_request_entity_size = cfg->max_body;
  /* No delayed timer at shutdown: the loops drain their connections. */
  h->config.http2.graceful_shutdown_timeout = 0;
  h2o_hostconf_t *host =
      h2o_config_register_host(&h->config, h2o_iovec_init(H2O_STRLIT("default")), 65535);
  h2o_pathconf_t *path = h2o_config_register_path(host, "/", 0);
  handler_t *handler = (handler_t *)h2o_create_handler(path, sizeof *handler);
  handler->super.on_req = on_req;
  handler->h = h;
  /* One after the other: the first picks the port when it is 0. */
  for (int i = 0; i < h->loop_count; i++) {
    loop_t *loop = &h->loops[i];
    loop->h = h;
    sem_init(&loop->ready, 0, 0);
    if (pthread_create(&loop->thread, NULL, loop_main, loop) != 0)
      SRV_FATAL("%s: cannot start a loop thread", h->name);
    loop->started = true;
    sem_wait(&loop->ready);
    if (loop->init_status != NULL) {
      srv_status_t *st = loop->init_status;
      loops_end(h);
      server_free(h);
      return st;
    }
  }
  *out = h;
  return NULL;
}

int srv_http_port(const srv_http_t *h) { return h->port; }

void srv_http_close(srv_http_t *h) {
  for (int i = 0; i < h->loop_count; i++)
    loop_send(&h->loops[i], &h->loops[i].control, &h->loops[i].close_msg);
}

bool srv_http_wait(srv_http_t *h, uint64_t deadline_ns) {
  for (;;) {
    /* Acquire: pairs with deliver's release decrement. */
    if (atomic_load_explicit(&h->outstanding, memory_order_acquire) == 0) return true;
    if (srv_deadline_passed(deadline_ns)) return false;
    usleep(1000);
  }
}

void srv_http_free(srv_http_t *h) {
  if (atomic_load_explicit(&h->outstanding, memory_order_acquire) != 0) {
    SRV_WARN("%s: exchanges still wait for their answers; the loops are left running",
             h->name);
    return;
  }
  loops_end(h);
  server_free(h);
}
