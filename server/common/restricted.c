/* Parsing of the restricted-group flags (see restricted.h). Main thread at
 * start-up; the lookups are read-only. */
#include "server/common/restricted.h"

#include <stdlib.h>
#include <string.h>

#include "server/common/log.h"
#include "server/common/memory.h"

static const char *const group_names[SRV_GROUP_COUNT] = {
    "health",           "metadata",   "inference", "shared-memory", "model-config",
    "model-repository", "statistics", "trace",     "logging",
};

const char *srv_group_name(srv_group_t g) {
  return g < SRV_GROUP_COUNT ? group_names[g] : "none";
}

static srv_group_t group_find(const char *name, size_t len) {
  for (int g = 0; g < SRV_GROUP_COUNT; g++)
    if (strlen(group_names[g]) == len && memcmp(group_names[g], name, len) == 0)
      return (srv_group_t)g;
  return SRV_GROUP_NONE;
}

static char *concat(const char *a, const char *b, size_t blen) {
  size_t alen = strlen(a);
  char *s = malloc(alen + blen + 1);
  if (s == NULL) SRV_FATAL("out of memory");
  memcpy(s, a, alen);
  memcpy(s + alen, b, blen);
  s[alen + blen] = '\0';
  return s;
}

/* One value: "<groups>:<key>=<value>", split as Triton does: the first
 * ':' ends the groups, the first '=' after it ends the key. */
static srv_status_t *parse_one(srv_restrictions_t *r, const char *arg, const char *option,
                               const char *key_prefix, const char *feature_type) {
  const char *colon = strchr(arg, ':');
  const char *eq = colon != NULL ? strchr(colon + 1, '=') : NULL;
  if (colon == NULL || eq == NULL || colon == arg || eq == colon + 1 || eq[1] == '\0')
    return srv_status_new(
        GRPC_STATUS_INVALID_ARGUMENT,
        "--%s option format is '<config name>:<setting>=<value>'. Got %s", option, arg);
  const char *p = arg;
  for (;;) {
    const char *end = memchr(p, ',', (size_t)(colon - p));
    if (end == NULL) end = colon;
    srv_group_t g = group_find(p, (size_t)(end - p));
    if (g == SRV_GROUP_NONE)
      return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT, "unknown restricted %s '%.*s'",
                            feature_type, (int)(end - p), p);
    if (r->group[g].key != NULL)
      return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                            "restricted %s '%s' can not be specified in multiple config "
                            "groups",
                            feature_type, group_names[g]);
    r->group[g].key = concat(key_prefix, colon + 1, (size_t)(eq - colon - 1));
    r->group[g].value = srv_strdup(eq + 1);
    if (end == colon) return NULL;
    p = end + 1;
  }
}

srv_status_t *srv_restrictions_parse(srv_restrictions_t *r, char *const *args,
                                     size_t count, const char *option,
                                     const char *key_prefix, const char *feature_type) {
  memset(r, 0, sizeof *r);
  for (size_t i = 0; i < count; i++) {
    srv_status_t *st = parse_one(r, args[i], option, key_prefix, feature_type);
    if (st != NULL) return st;
  }
  return NULL;
}

const srv_restriction_t *srv_restrictions_get(const srv_restrictions_t *r,
                                              srv_group_t g) {
  if (g >= SRV_GROUP_COUNT || r->group[g].key == NULL) return NULL;
  return &r->group[g];
}

bool srv_restriction_matches(const srv_restriction_t *r, const char *value, size_t len) {
  return strlen(r->value) == len && memcmp(r->value, value, len) == 0;
}

void srv_restrictions_free(srv_restrictions_t *r) {
  for (int g = 0; g < SRV_GROUP_COUNT; g++) {
    free(r->group[g].key);
    free(r->group[g].value);
  }
  memset(r, 0, sizeof *r);
}
