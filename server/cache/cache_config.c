/* The cache flags (cache_config.h). The format errors and the two
 * conflicts keep tritonserver's words, which scripts match; what only
 * Nereid refuses (another cache than `local`, a setting `local` lacks)
 * says so in its own. */
#include "server/cache/cache_config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

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

srv_status_t *srv_cache_config_parse(char *const *configs, size_t count,
                                     uint64_t byte_size, uint64_t *local_size) {
  *local_size = 0;
  if (byte_size > 0 && count > 0)
    return BAD(
        "Incompatible flags --response-cache-byte-size and --cache-config both "
        "provided. Please provide one or the other.");
  if (count == 0) {
    *local_size = byte_size;
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
  if (first_len != 5 || strncmp(first, "local", 5) != 0)
    return srv_status_new(
        GRPC_STATUS_UNIMPLEMENTED,
        "--cache-config '%s': cache '%.*s' is not available: Nereid has "
        "only the built-in 'local' cache and loads no cache library "
        "from --cache-directory",
        first, (int)first_len, first);
  uint64_t size = 0;
  for (size_t i = 0; i < count; i++) {
    size_t name_len, key_len;
    const char *key, *value;
    split(configs[i], &name_len, &key, &key_len, &value);
    srv_status_t *st = local_setting(configs[i], key, key_len, value, &size);
    if (st != NULL) return st;
  }
  *local_size = size;
  return NULL;
}
