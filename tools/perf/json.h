/* A small JSON reader for --input-data files: parses a whole document into
 * a tree of nodes that point into the text (strings are unescaped into
 * their own buffers). Main thread only. */
#ifndef NEREID_TOOLS_PERF_JSON_H
#define NEREID_TOOLS_PERF_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include "tools/perf/common.h"

typedef enum {
  PERF_JSON_NULL,
  PERF_JSON_BOOL,
  PERF_JSON_NUMBER,
  PERF_JSON_STRING,
  PERF_JSON_ARRAY,
  PERF_JSON_OBJECT,
} perf_json_type_t;

typedef struct perf_json perf_json_t;

struct perf_json {
  perf_json_type_t type;
  bool boolean;
  const char *num; /* NUMBER: its text in the document (num_len bytes) */
  size_t num_len;
  char *str; /* STRING: unescaped, NUL-terminated (may hold NULs: str_len) */
  size_t str_len;
  perf_json_t *items; /* ARRAY and OBJECT: n children */
  char **keys;        /* OBJECT: n keys, unescaped */
  size_t n;
};

/** Parses text[0..len). The tree points into text, which must outlive it.
 *  On error, err gives the line and column. */
bool perf_json_parse(const char *text, size_t len, perf_json_t *out, perf_err_t *err);

/** Frees what perf_json_parse allocated under j. */
void perf_json_free(perf_json_t *j);

/** The member `key` of an object, or NULL. */
const perf_json_t *perf_json_get(const perf_json_t *obj, const char *key);

#endif
