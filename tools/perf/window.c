/* Measurement windows and their error lists (see window.h). */
#include "tools/perf/window.h"

#include <stdlib.h>
#include <string.h>

#include "tools/perf/common.h"

void perf_errors_add(perf_errors_t *e, const char *text, size_t len, uint64_t count) {
  for (size_t i = 0; i < e->n; i++) {
    if (strlen(e->items[i].text) == len && memcmp(e->items[i].text, text, len) == 0) {
      e->items[i].count += count;
      return;
    }
  }
  if (e->n == PERF_ERRORS_MAX) {
    e->others += count;
    return;
  }
  e->items[e->n].text = perf_strndup(text, len);
  e->items[e->n].count = count;
  e->n++;
}

void perf_errors_merge(perf_errors_t *into, const perf_errors_t *from) {
  for (size_t i = 0; i < from->n; i++)
    perf_errors_add(into, from->items[i].text, strlen(from->items[i].text),
                    from->items[i].count);
  into->others += from->others;
}

uint64_t perf_errors_total(const perf_errors_t *e) {
  uint64_t n = e->others;
  for (size_t i = 0; i < e->n; i++) n += e->items[i].count;
  return n;
}

void perf_errors_clear(perf_errors_t *e) {
  for (size_t i = 0; i < e->n; i++) free(e->items[i].text);
  memset(e, 0, sizeof *e);
}

void perf_window_init(perf_window_t *w) {
  memset(w, 0, sizeof *w);
  perf_hist_reset(&w->latency);
}

void perf_window_reset(perf_window_t *w) {
  perf_errors_clear(&w->errors);
  perf_window_init(w);
}

void perf_window_merge(perf_window_t *into, const perf_window_t *from) {
  perf_hist_merge(&into->latency, &from->latency);
  into->completed += from->completed;
  into->failed += from->failed;
  into->responses += from->responses;
  into->sequences += from->sequences;
  into->delayed += from->delayed;
  into->sends += from->sends;
  into->send_late_sum_ns += from->send_late_sum_ns;
  if (from->send_late_max_ns > into->send_late_max_ns)
    into->send_late_max_ns = from->send_late_max_ns;
  perf_errors_merge(&into->errors, &from->errors);
}

void perf_window_take(perf_window_t *into, perf_window_t *from) {
  perf_errors_clear(&into->errors);
  memcpy(into, from, sizeof *into); /* the messages move with it */
  perf_window_init(from);
}
