/* Host policies (see host_policy.h): the flag strings parsed on demand. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* cpu_set_t, pthread_setaffinity_np */
#endif
#include "server/common/host_policy.h"

#include <jansson.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "server/common/log.h"

/* "<policy>,<key>=<value>" split in place into a copy's parts. */
typedef struct {
  char buf[1024];
  const char *policy, *key, *value;
} setting_t;

static bool setting_split(const char *text, setting_t *s) {
  if (strlen(text) >= sizeof s->buf) return false;
  strcpy(s->buf, text);
  char *comma = strchr(s->buf, ',');
  if (comma == NULL || comma == s->buf) return false;
  char *eq = strchr(comma + 1, '=');
  if (eq == NULL || eq == comma + 1 || eq[1] == '\0') return false;
  *comma = '\0';
  *eq = '\0';
  s->policy = s->buf;
  s->key = comma + 1;
  s->value = eq + 1;
  return strlen(s->policy) <= SRV_HOST_POLICY_NAME_MAX;
}

/* A decimal core number below CPU_SETSIZE; *p moves past it. */
static bool core_parse(const char **p, int *core) {
  if (**p < '0' || **p > '9') return false;
  long v = 0;
  while (**p >= '0' && **p <= '9') {
    v = v * 10 + (**p - '0');
    if (v >= CPU_SETSIZE) return false;
    (*p)++;
  }
  *core = (int)v;
  return true;
}

/* "0-3,6" into *set (cleared first). */
static bool cores_parse(const char *text, cpu_set_t *set) {
  CPU_ZERO(set);
  const char *p = text;
  for (;;) {
    int lo, hi;
    if (!core_parse(&p, &lo)) return false;
    hi = lo;
    if (*p == '-') {
      p++;
      if (!core_parse(&p, &hi) || hi < lo) return false;
    }
    for (int c = lo; c <= hi; c++) CPU_SET(c, set);
    if (*p == '\0') return true;
    if (*p++ != ',') return false;
  }
}

srv_status_t *srv_host_policy_check(char *const *settings, size_t n) {
  for (size_t i = 0; i < n; i++) {
    setting_t s;
    cpu_set_t set;
    if (!setting_split(settings[i], &s))
      return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                            "--host-policy '%.1024s': expected <policy>,<key>=<value> "
                            "(a policy name of at most %d bytes)",
                            settings[i], SRV_HOST_POLICY_NAME_MAX);
    if (strcmp(s.key, "numa-node") == 0)
      return srv_status_new(GRPC_STATUS_UNIMPLEMENTED,
                            "--host-policy '%s': numa-node: Nereid binds no memory to "
                            "NUMA nodes (cpu-cores is supported)",
                            settings[i]);
    if (strcmp(s.key, "cpu-cores") != 0)
      return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                            "--host-policy '%s': unknown key '%s' (numa-node or "
                            "cpu-cores)",
                            settings[i], s.key);
    if (!cores_parse(s.value, &set))
      return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                            "--host-policy '%s': cpu-cores expects cores and ranges "
                            "such as 0-3,6, each below %d",
                            settings[i], CPU_SETSIZE);
  }
  return NULL;
}

/* The last cpu-cores setting of `policy`, split into *s; NULL when none. */
static const char *cores_text(char *const *settings, size_t n, const char *policy,
                              setting_t *s) {
  size_t last = n;
  for (size_t i = 0; i < n; i++)
    if (setting_split(settings[i], s) && strcmp(s->policy, policy) == 0 &&
        strcmp(s->key, "cpu-cores") == 0)
      last = i;
  if (last == n || !setting_split(settings[last], s)) return NULL;
  return s->value;
}

srv_status_t *srv_host_policy_bind_thread(char *const *settings, size_t n,
                                          const char *policy, int *cores) {
  setting_t s;
  cpu_set_t set;
  *cores = 0;
  const char *text = cores_text(settings, n, policy, &s);
  if (text == NULL || !cores_parse(text, &set)) return NULL;
  int rc = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
  if (rc != 0)
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "host policy '%s': cannot run on cpu-cores %s: %s", policy,
                          text, strerror(rc));
  *cores = CPU_COUNT(&set);
  return NULL;
}

char *srv_host_policy_json(char *const *settings, size_t n, const char *policy) {
  setting_t s;
  const char *text = cores_text(settings, n, policy, &s);
  json_t *inner = json_object();
  if (inner == NULL || (text != NULL && json_object_set_new(inner, "cpu-cores",
                                                            json_string(text)) != 0))
    SRV_FATAL("out of memory");
  json_t *doc = json_object();
  if (doc == NULL || json_object_set_new(doc, policy, inner) != 0)
    SRV_FATAL("out of memory");
  char *out = json_dumps(doc, JSON_COMPACT);
  json_decref(doc);
  if (out == NULL) SRV_FATAL("out of memory");
  return out;
}
