/* The cache flags (cache_config.h). The format errors and the two
 * conflicts keep tritonserver's words, which scripts match; what only
 * Nereid refuses (a setting `local` lacks, a bad size) says so in its
 * own. Another name than `local` is a cache library: its settings become
 * the JSON object Triton hands such a library. */
#include "server/cache/cache_config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/common/log.h"
#include "server/common/memory.h"

#define BAD(...) srv_status_new(GRPC_STATUS_INVALID_ARGUMENT, __VA_ARGS__)

/* A decimal byte count, digits only (no sign, no suffix), within 64 bits. */
static bool parse_size(const char *s, uint64_t *out) {
  if (*s < '0' || *s > '9') return false;
  errno = 0;
  char *end;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *out = v;
  return true;
}

/* One `<cache>,<key>=<value>`: its name length, key and value. */
static srv_status_t *split(const char *arg, size_t *name_len, const char **key,
                           size_t *key_len, const char **value) {
  const char *comma = strchr(arg, ',');
  if (comma == NULL || comma == arg)
    return BAD(
        "No cache specified. --cache-config option format is <cache "
        "name>,<setting>=<value>. Got %s",
        arg);
  const char *eq = strchr(comma + 1, '=');
  if (eq == NULL || eq == comma + 1 || eq[1] == '\0')
    return BAD("--cache-config option format is '<cache name>,<setting>=<value>'. Got %s",
               arg);
  *name_len = (size_t)(comma - arg);
  *key = comma + 1;
  *key_len = (size_t)(eq - *key);
  *value = eq + 1;
  return NULL;
}

static srv_status_t *local_setting(const char *arg, const char *key, size_t key_len,
                                   const char *value, uint64_t *size) {
  if (key_len != 4 || strncmp(key, "size", 4) != 0)
    return BAD(
        "--cache-config '%s': the local cache has no setting '%.*s' (it takes "
        "'size', in bytes)",
        arg, (int)key_len, key);
  if (!parse_size(value, size) || *size == 0)
    return BAD(
        "--cache-config '%s': the local cache's size must be a byte count from 1 "
        "to 18446744073709551615, got '%s'",
        arg, value);
  return NULL;
}

/* A growing text. */
typedef struct {
  char *data;
  size_t len, cap;
} text_t;

static void text_put(text_t *t, const char *s, size_t n) {
  if (t->len + n + 1 > t->cap) {
    while (t->len + n + 1 > t->cap) t->cap = t->cap ? 2 * t->cap : 64;
    char *grown = realloc(t->data, t->cap);
    if (grown == NULL) SRV_FATAL("out of memory");
    t->data = grown;
  }
  memcpy(t->data + t->len, s, n);
  t->len += n;
  t->data[t->len] = '\0';
}

/* s (n bytes) as a JSON string, escaped. */
static void text_json_string(text_t *t, const char *s, size_t n) {
  text_put(t, "\"", 1);
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)s[i];
    char esc[8];
    if (ch == '"' || ch == '\\') {
      esc[0] = '\\';
      esc[1] = (char)ch;
      text_put(t, esc, 2);
    } else if (ch < 0x20) {
      text_put(t, esc, (size_t)snprintf(esc, sizeof esc, "\\u%04x", ch));
    } else {
      text_put(t, (const char *)&s[i], 1);
    }
  }
  text_put(t, "\"", 1);
}

/* A library's settings as {"key":"value",...}: each key once, with its
 * last value (configs are few: quadratic is fine). */
static char *library_json(char *const *configs, size_t count) {
  text_t t = {0};
  text_put(&t, "{", 1);
  for (size_t i = 0; i < count; i++) {
    size_t name_len, key_len;
    const char *key, *value;
    split(configs[i], &name_len, &key, &key_len, &value);
    bool later = false;
    for (size_t j = i + 1; j < count && !later; j++) {
      size_t nl, kl;
      const char *k, *v;
      split(configs[j], &nl, &k, &kl, &v);
      later = kl == key_len && strncmp(k, key, kl) == 0;
    }
    if (later) continue;
    if (t.len > 1) text_put(&t, ",", 1);
    text_json_string(&t, key, key_len);
    text_put(&t, ":", 1);
    text_json_string(&t, value, strlen(value));
  }
  text_put(&t, "}", 1);
  return t.data;
}

void srv_cache_choice_free(srv_cache_choice_t *c) {
  free(c->name);
  free(c->config_json);
  *c = (srv_cache_choice_t){0};
}

srv_status_t *srv_cache_config_parse(char *const *configs, size_t count,
                                     uint64_t byte_size, srv_cache_choice_t *out) {
  *out = (srv_cache_choice_t){0};
  if (byte_size > 0 && count > 0)
    return BAD(
        "Incompatible flags --response-cache-byte-size and --cache-config both "
        "provided. Please provide one or the other.");
  if (count == 0) {
    if (byte_size > 0) {
      out->name = srv_strdup("local");
      out->local_size = byte_size;
    }
    return NULL;
  }
  const char *first = NULL;
  size_t first_len = 0;
  for (size_t i = 0; i < count; i++) {
    size_t name_len, key_len;
    const char *key, *value;
    srv_status_t *st = split(configs[i], &name_len, &key, &key_len, &value);
    if (st != NULL) return st;
    if (first == NULL) {
      first = configs[i];
      first_len = name_len;
    } else if (name_len != first_len || strncmp(first, configs[i], name_len) != 0) {
      return BAD(
          "found multiple cache configurations, but only a single cache is "
          "currently supported");
    }
  }
  if (first_len == 5 && strncmp(first, "local", 5) == 0) {
    uint64_t size = 0;
    for (size_t i = 0; i < count; i++) {
      size_t name_len, key_len;
      const char *key, *value;
      split(configs[i], &name_len, &key, &key_len, &value);
      srv_status_t *st = local_setting(configs[i], key, key_len, value, &size);
      if (st != NULL) return st;
    }
    out->local_size = size;
  } else {
    /* A library's name is a folder and a file name part: no path. */
    if (memchr(first, '/', first_len) != NULL || (first_len <= 2 && first[0] == '.'))
      return BAD("--cache-config '%s': a cache name may not hold '/' or be '.' or '..'",
                 first);
    out->config_json = library_json(configs, count);
  }
  out->name = srv_strndup(first, first_len);
  return NULL;
}
