/* Benchmark of the actor runtime (not a test): fan-in throughput, ping-pong
 * round trips, idle-worker wake-up latency, timer lateness. Main thread plus
 * the runtime's threads and, for outside fan-in, two producer threads. */
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "actors/runtime.h"
#include "actors/timer.h"

enum {
  FANIN_PER_PRODUCER = 10000000,
  FANIN_WINDOW = 65536, /* messages a producer may run ahead of the sink */
  /* Messages a producer actor sends per turn: one batch, as many as the
   * sink may handle per turn. A larger chunk measures the batch ratio of a
   * producer sharing the sink's worker, not the mailbox. */
  FANIN_CHUNK = 64,
  PINGPONG_TRIPS = 5000000,
  PINNED_TRIPS = 200000,
  SAMPLES = 3000,
};

static void sleep_us(unsigned us) {
  struct timespec ts = {(time_t)(us / 1000000u), (long)(us % 1000000u) * 1000};
  nanosleep(&ts, NULL);
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static void print_percentiles(const char *what, uint64_t *ns, int n) {
  qsort(ns, (size_t)n, sizeof *ns, cmp_u64);
  printf("%-34s p50 %7.1f us   p99 %7.1f us   max %8.1f us   (%d samples)",
         what, (double)ns[n / 2] / 1e3, (double)ns[n * 99 / 100] / 1e3,
         (double)ns[n - 1] / 1e3, n);
}

/* ---- machine load: CPU used by other processes during a figure -------- */

/* The machine is shared (builds and tests of other work run on it), so each
 * figure says how many cores the rest of the system used meanwhile; only
 * figures with ~0 are clean. Jiffies from /proc/stat and /proc/self/stat. */
typedef struct {
  long long busy_all, busy_self;
  uint64_t t_ns;
} load_mark_t;

static long long read_busy_all(void) {
  long long v[8] = {0};
  FILE *f = fopen("/proc/stat", "r");
  if (f == NULL) return 0;
  if (fscanf(f, "cpu %lld %lld %lld %lld %lld %lld %lld %lld", &v[0], &v[1],
             &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) != 8)
    v[0] = 0;
  fclose(f);
  return v[0] + v[1] + v[2] + v[5] + v[6] + v[7]; /* all but idle, iowait */
}

static long long read_busy_self(void) {
  char buf[1024];
  FILE *f = fopen("/proc/self/stat", "r");
  if (f == NULL) return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  const char *p = strrchr(buf, ')'); /* fields after the command name */
  long long utime = 0, stime = 0;
  if (p != NULL)
    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lld %lld",
           &utime, &stime);
  return utime + stime;
}

static load_mark_t load_mark(void) {
  return (load_mark_t){read_busy_all(), read_busy_self(), act_now_ns()};
}

/* Cores' worth of CPU that other processes used since m. */
static double others_cores(load_mark_t m) {
  load_mark_t now = load_mark();
  double secs = (double)(now.t_ns - m.t_ns) / 1e9;
  double jiffies = (double)((now.busy_all - m.busy_all) - (now.busy_self - m.busy_self));
  double cores = secs > 0 ? jiffies / (double)sysconf(_SC_CLK_TCK) / secs : 0;
  return cores > 0 ? cores : 0; /* tick sampling can dip below zero */
}

/* ---- machine probe: raw core-to-core round trip ----------------------- */

/* Two plain threads bounce one cache line; no runtime involved. On a VM the
 * figure moves with where the host places our vCPUs, and every cross-core
 * figure below moves with it, so it is printed beside them. */
enum { PROBE_TRIPS = 200000 };
static _Alignas(64) atomic_uint probe_ball;

static void *probe_echo(void *arg) {
  (void)arg;
  for (unsigned i = 0; i < PROBE_TRIPS; i++) {
    while (atomic_load_explicit(&probe_ball, memory_order_acquire) != 2 * i + 1) {
    }
    atomic_store_explicit(&probe_ball, 2 * i + 2, memory_order_release);
  }
  return NULL;
}

static double core_to_core_ns(void) {
  pthread_t th;
  atomic_store(&probe_ball, 0);
  pthread_create(&th, NULL, probe_echo, NULL);
  uint64_t t0 = act_now_ns();
  for (unsigned i = 0; i < PROBE_TRIPS; i++) {
    atomic_store_explicit(&probe_ball, 2 * i + 1, memory_order_release);
    while (atomic_load_explicit(&probe_ball, memory_order_acquire) != 2 * i + 2) {
    }
  }
  uint64_t t1 = act_now_ns();
  pthread_join(th, NULL);
  return (double)(t1 - t0) / PROBE_TRIPS;
}

/* ---- fan-in: 2 producers -> 1 actor ---------------------------------- */

typedef struct {
  act_actor_t actor;
  /* Read by producers for pacing, written every 1024 messages: on a line
   * of its own, away from the per-message counter. */
  _Alignas(64) atomic_ullong progress;
  _Alignas(64) unsigned long long received; /* behaviour only */
  unsigned long long want;
  atomic_int done;
} sink_t;

/* One cache line each: a paced producer polls its own state in a loop, and
 * must not sit on the line its busy neighbour increments per message. */
typedef struct {
  _Alignas(64) sink_t *sink;
  unsigned long long sent;
  unsigned producers;
} producer_t;

static void sink_fn(act_actor_t *self, act_msg_t *m) {
  sink_t *s = act_actor_state(self);
  act_msg_free(m);
  if (++s->received % 1024 == 0 || s->received == s->want) {
    /* release: producers pace on it. */
    atomic_store_explicit(&s->progress, s->received, memory_order_release);
    if (s->received == s->want) atomic_store(&s->done, 1);
  }
}

static bool ahead(producer_t *p) {
  unsigned long long done =
      atomic_load_explicit(&p->sink->progress, memory_order_acquire);
  return p->sent * p->producers > done + (unsigned long long)FANIN_WINDOW * p->producers;
}

static void producer_fn(act_actor_t *self, act_msg_t *go) {
  producer_t *p = act_actor_state(self);
  if (go->flags & ACT_MSG_STOP) {
    act_msg_free(go);
    return;
  }
  if (!ahead(p))
    for (int i = 0; i < FANIN_CHUNK && p->sent < FANIN_PER_PRODUCER; i++, p->sent++)
      act_send(&p->sink->actor, act_msg_alloc(sizeof(act_msg_t)));
  if (p->sent < FANIN_PER_PRODUCER)
    act_send(self, go);
  else
    act_send_stop(self, go);
}

static void *producer_thread(void *arg) {
  producer_t *p = arg;
  while (p->sent < FANIN_PER_PRODUCER) {
    if ((p->sent & 1023) == 0)
      while (ahead(p)) sched_yield();
    act_send(&p->sink->actor, act_msg_alloc(sizeof(act_msg_t)));
    p->sent++;
  }
  return NULL;
}

static double fan_in(act_runtime_t *rt, bool outside) {
  sink_t *sink = aligned_alloc(64, sizeof *sink);
  memset(sink, 0, sizeof *sink);
  sink->want = 2ull * FANIN_PER_PRODUCER;
  act_actor_init(&sink->actor, rt, sink_fn, sink);
  producer_t prod[2] = {{.sink = sink, .producers = 2}, {.sink = sink, .producers = 2}};
  pthread_t th[2];
  uint64_t t0 = act_now_ns();
  for (int i = 0; i < 2; i++) {
    if (outside)
      pthread_create(&th[i], NULL, producer_thread, &prod[i]);
    else
      act_send(act_spawn(rt, producer_fn, &prod[i]), act_msg_alloc(64));
  }
  while (!atomic_load(&sink->done)) sleep_us(1000);
  uint64_t t1 = act_now_ns();
  if (outside)
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  act_send_stop(&sink->actor, act_msg_alloc(64));
  act_runtime_quiesce(rt);
  double rate = (double)sink->want / ((double)(t1 - t0) / 1e9);
  free(sink);
  return rate;
}

/* ---- ping-pong ---------------------------------------------------------- */

typedef struct {
  act_actor_t *peer;
  long left;
  atomic_int *done;
} pp_t;

static void pp_fn(act_actor_t *self, act_msg_t *m) {
  pp_t *p = act_actor_state(self);
  if (m->flags & ACT_MSG_STOP) {
    act_msg_free(m);
    return;
  }
  if (p->left-- == 0) {
    act_msg_free(m);
    atomic_store(p->done, 1);
    return;
  }
  act_send(p->peer, m);
}

/* Round trips per second between a and b (b pinned when asked). */
static double ping_pong(act_runtime_t *rt, long trips, bool pinned) {
  atomic_int done = 0;
  pp_t sa = {NULL, trips, &done}, sb = {NULL, trips, &done};
  act_actor_t a, b;
  act_actor_init(&a, rt, pp_fn, &sa);
  if (pinned)
    act_actor_init_pinned(&b, rt, pp_fn, &sb, "bench-pinned");
  else
    act_actor_init(&b, rt, pp_fn, &sb);
  sa.peer = &b;
  sb.peer = &a;
  uint64_t t0 = act_now_ns();
  act_send(&a, act_msg_alloc(64));
  while (!atomic_load(&done)) sleep_us(1000);
  uint64_t t1 = act_now_ns();
  act_send_stop(&a, act_msg_alloc(64));
  act_send_stop(&b, act_msg_alloc(64));
  act_runtime_quiesce(rt);
  act_runtime_reap(rt);
  return (double)trips / ((double)(t1 - t0) / 1e9);
}

/* ---- latency: idle wake-up and timers --------------------------------- */

typedef struct {
  act_msg_t hdr;
  uint64_t t_ref; /* send time or deadline */
} stamp_t;

typedef struct {
  uint64_t *samples;
  atomic_int n;
} lat_t;

static void lat_fn(act_actor_t *self, act_msg_t *m) {
  uint64_t now = act_now_ns();
  lat_t *l = act_actor_state(self);
  if (!(m->flags & ACT_MSG_STOP)) {
    int i = atomic_load_explicit(&l->n, memory_order_relaxed);
    l->samples[i] = now - ((stamp_t *)m)->t_ref;
    atomic_store_explicit(&l->n, i + 1, memory_order_release);
  }
  act_msg_free(m);
}

/* Sleeps between polls: a spinning main thread would hold one of the two
 * cores that the threads being measured need. */
static void wait_samples(lat_t *l, int n) {
  while (atomic_load_explicit(&l->n, memory_order_acquire) < n) sleep_us(200);
}

/* CPU time (jiffies) of our thread named `name`, or -1. */
static long long thread_jiffies(const char *name) {
  DIR *d = opendir("/proc/self/task");
  if (d == NULL) return -1;
  long long jiffies = -1;
  struct dirent *e;
  while (jiffies < 0 && (e = readdir(d)) != NULL) {
    char path[300], comm[32] = "";
    snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
    FILE *f = fopen(path, "r");
    if (f == NULL) continue;
    bool match = fgets(comm, sizeof comm, f) != NULL &&
                 strncmp(comm, name, strlen(name)) == 0;
    fclose(f);
    snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
    if (!match || (f = fopen(path, "r")) == NULL) continue;
    long long ut, st;
    if (fscanf(f, "%*d (%*[^)]) %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lld %lld",
               &ut, &st) == 2)
      jiffies = ut + st;
    fclose(f);
  }
  closedir(d);
  return jiffies;
}

static void idle_wakeup(act_runtime_t *rt) {
  lat_t l = {calloc(SAMPLES, sizeof(uint64_t)), 0};
  act_actor_t *a = act_spawn(rt, lat_fn, &l);
  for (int i = 0; i < SAMPLES; i++) {
    sleep_us(1000); /* every worker is asleep by now (spin is ~20 us) */
    stamp_t *m = act_msg_alloc(sizeof *m);
    m->t_ref = act_now_ns();
    act_send(a, &m->hdr);
    wait_samples(&l, i + 1);
  }
  act_send_stop(a, act_msg_alloc(64));
  act_runtime_quiesce(rt);
  print_percentiles("idle wake-up (send -> behaviour)", l.samples, SAMPLES);
  free(l.samples);
}

static void timer_lateness(act_runtime_t *rt) {
  lat_t l = {calloc(SAMPLES, sizeof(uint64_t)), 0};
  long long cpu0 = thread_jiffies("act-timer");
  act_actor_t *a = act_spawn(rt, lat_fn, &l);
  act_timer_t t;
  unsigned rng = 1;
  for (int i = 0; i < SAMPLES; i++) {
    rng = rng * 1103515245u + 12345u;
    stamp_t *m = act_msg_alloc(sizeof *m);
    m->t_ref = act_now_ns() + 200000 + (rng >> 8) % 1800000; /* 0.2-2 ms */
    act_timer_init(&t);
    act_timer_arm(rt, &t, m->t_ref, a, &m->hdr);
    wait_samples(&l, i + 1);
  }
  act_send_stop(a, act_msg_alloc(64));
  act_runtime_quiesce(rt);
  print_percentiles("timer lateness (deadline -> behaviour)", l.samples, SAMPLES);
  long long cpu1 = thread_jiffies("act-timer");
  if (cpu0 >= 0 && cpu1 >= 0)
    printf(" timer thread %.1f us CPU/fire", (double)(cpu1 - cpu0) * 1e6 /
                                               (double)sysconf(_SC_CLK_TCK) / SAMPLES);
  free(l.samples);
}

/* Usage: bench [REPEAT [NAME]]. NAME: probe, fanin-actors, fanin-threads,
 * pingpong, pinned, wakeup, timer (default: all). Each figure is printed
 * once per repetition, with the CPU other processes used meanwhile. */
typedef enum { PROBE, FANIN_ACTORS, FANIN_THREADS, PINGPONG, PINNED, WAKEUP, TIMER } figure_t;
static const char *const figure_names[] = {"probe",    "fanin-actors", "fanin-threads",
                                           "pingpong", "pinned",       "wakeup", "timer"};

static void run_figure(act_runtime_t *rt, figure_t f) {
  load_mark_t m = load_mark();
  switch (f) {
    case PROBE:
      printf("probe: core-to-core round trip     %6.0f ns (no runtime)", core_to_core_ns());
      break;
    case FANIN_ACTORS:
      printf("fan-in, 2 producer actors -> 1 actor   %6.2f M msg/s", fan_in(rt, false) / 1e6);
      break;
    case FANIN_THREADS:
      printf("fan-in, 2 outside threads -> 1 actor   %6.2f M msg/s", fan_in(rt, true) / 1e6);
      break;
    case PINGPONG:
      printf("ping-pong, 2 worker actors             %6.2f M round trips/s",
             ping_pong(rt, PINGPONG_TRIPS, false) / 1e6);
      break;
    case PINNED:
      printf("ping-pong, worker <-> pinned actor     %6.3f M round trips/s",
             ping_pong(rt, PINNED_TRIPS, true) / 1e6);
      break;
    case WAKEUP:
      idle_wakeup(rt);
      break;
    case TIMER:
      timer_lateness(rt);
      break;
  }
  printf("   [others: %.2f cores]\n", others_cores(m));
}

int main(int argc, char **argv) {
  int repeat = argc > 1 ? atoi(argv[1]) : 1;
  const char *filter = argc > 2 ? argv[2] : NULL;
  act_runtime_t *rt = act_runtime_new(NULL);
  if (rt == NULL) {
    fprintf(stderr, "act_runtime_new failed\n");
    return 1;
  }
  printf("actors/bench: %u workers, batch default\n", act_runtime_workers(rt));
  for (int r = 0; r < (repeat > 0 ? repeat : 1); r++)
    for (int f = PROBE; f <= TIMER; f++)
      if (filter == NULL || strcmp(filter, figure_names[f]) == 0)
        run_figure(rt, (figure_t)f);
  act_runtime_free(rt);
  return 0;
}
