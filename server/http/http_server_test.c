/* The HTTP server's stop (http_server.c, "start and stop") against the
 * messages that reach its loops from other threads. h2o writes a loop's
 * wake-up pipe after it has queued a message, so a loop that is awake
 * anyway may take the message, and at exit close that pipe, while the
 * sender is still about to write it. These cases stop servers at the
 * moments where that happens: right after the close message, and right
 * after an answer sent from another thread. Under TSan a write after the
 * close is a reported race; in every build, none may hang or crash. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "actors/timer.h"
#include "server/common/deadline.h"
#include "server/http/exchange.h"
#include "server/http/http_server.h"
#include "test/unit/unit.h"

static const srv_http_bytes_t hello = {"hello", 5};

static void *answer_later(void *arg) {
  srv_http_body_t body = {.parts = &hello, .count = 1};
  srv_http_reply(arg, 200, "text/plain", &body);
  return NULL;
}

/* Answers from a thread of its own, as the core answers inference. */
static void handler(void *ctx, srv_http_exchange_t *x) {
  (void)ctx;
  pthread_t t;
  if (pthread_create(&t, NULL, answer_later, x) != 0) abort();
  pthread_detach(t);
}

static srv_http_t *start(int threads) {
  srv_http_config_t cfg = {.name = "test",
                           .address = "127.0.0.1",
                           .port = 0,
                           .threads = threads,
                           .max_body = 1024,
                           .handler = handler};
  srv_http_t *h = NULL;
  srv_status_t *st = srv_http_start(&cfg, &h);
  if (st != NULL) {
    fprintf(stderr, "  start: %s\n", srv_status_message(st));
    srv_status_free(st);
    return NULL;
  }
  return h;
}

/* Spins for `us` microseconds. */
static void spin_us(int us) {
  for (uint64_t until = act_now_ns() + 1000u * (uint64_t)us; act_now_ns() < until;) {
  }
}

/* `gap_us` between the close and the exit: the exit's sender races the
 * loop only while the loop is busy with the close, some microseconds
 * after it, so the rounds sweep the gap. */
static bool stop(srv_http_t *h, int gap_us) {
  srv_http_close(h);
  spin_us(gap_us);
  bool drained = srv_http_wait(h, srv_deadline_in_secs(10));
  if (drained) srv_http_free(h);
  return drained;
}

/* Close and exit back to back: the loop wakes for the first and may take
 * the second before its sender wrote the pipe. */
static void test_stop_right_after_start(void) {
  for (int r = 0, n = 3000 / unit_slowdown(); r < n; r++) {
    srv_http_t *h = start(2);
    REQUIRE(h != NULL);
    REQUIRE(stop(h, r % 100));
  }
}

/* One GET, answered from another thread; the server stops as soon as the
 * client has the whole answer. Returns the answer's bytes. */
static ssize_t get_once(int port, char *buf, size_t cap) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
  static const char req[] = "GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";
  ssize_t got = -1;
  if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
      write(fd, req, sizeof req - 1) == (ssize_t)(sizeof req - 1)) {
    got = 0;
    for (ssize_t k; (size_t)got < cap && (k = read(fd, buf + got, cap - got)) > 0;)
      got += k;
  }
  close(fd);
  return got;
}

static void test_stop_right_after_an_answer_from_another_thread(void) {
  for (int r = 0, n = 600 / unit_slowdown(); r < n; r++) {
    srv_http_t *h = start(1);
    REQUIRE(h != NULL);
    char buf[512];
    ssize_t got = get_once(srv_http_port(h), buf, sizeof buf - 1);
    REQUIRE(stop(h, 0));
    REQUIRE(got > 0);
    buf[got] = '\0';
    CHECK(strncmp(buf, "HTTP/1.1 200", 12) == 0);
    CHECK(strstr(buf, "\r\n\r\nhello") != NULL);
  }
}

int main(void) {
  static const unit_case_t cases[] = {
      UNIT_CASE(test_stop_right_after_start),
      UNIT_CASE(test_stop_right_after_an_answer_from_another_thread),
  };
  return unit_run("http_server", cases, sizeof cases / sizeof cases[0]);
}
