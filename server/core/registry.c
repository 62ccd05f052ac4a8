/* Model registry and the start-up repository scan (see registry.h). */
#include "server/core/registry.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "server/config/model_config.h"
#include "server/log.h"
#include "server/server.h"

struct srv_registry {
  srv_registry_entry_t *entries;
  size_t count, cap;
  size_t *table; /* open addressing: index + 1 into entries, 0 = empty */
  size_t table_size;
};

static uint64_t name_hash(const char *s, size_t len) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  return h;
}

static srv_registry_entry_t *entry_add(srv_registry_t *r, const char *name) {
  if (r->count == r->cap) {
    r->cap = r->cap ? 2 * r->cap : 16;
    r->entries = realloc(r->entries, r->cap * sizeof *r->entries);
    if (r->entries == NULL) SRV_FATAL("out of memory");
  }
  srv_registry_entry_t *e = &r->entries[r->count++];
  memset(e, 0, sizeof *e);
  e->name = strdup(name);
  if (e->name == NULL) SRV_FATAL("out of memory");
  return e;
}

static void entry_fail(srv_registry_entry_t *e, srv_status_t *st) {
  if (e->reason == NULL) e->reason = strdup(srv_status_message(st));
  SRV_ERROR("failed to load '%s': %s", e->name, srv_status_message(st));
  srv_status_free(st);
}

static void table_build(srv_registry_t *r) {
  r->table_size = 16;
  while (r->table_size < 2 * r->count) r->table_size *= 2;
  r->table = calloc(r->table_size, sizeof *r->table);
  if (r->table == NULL) SRV_FATAL("out of memory");
  for (size_t i = 0; i < r->count; i++) {
    size_t slot =
        name_hash(r->entries[i].name, strlen(r->entries[i].name)) & (r->table_size - 1);
    while (r->table[slot] != 0) slot = (slot + 1) & (r->table_size - 1);
    r->table[slot] = i + 1;
  }
}

const srv_registry_entry_t *srv_registry_find(const srv_registry_t *r, const char *name,
                                              size_t len) {
  size_t slot = name_hash(name, len) & (r->table_size - 1);
  for (; r->table[slot] != 0; slot = (slot + 1) & (r->table_size - 1)) {
    const srv_registry_entry_t *e = &r->entries[r->table[slot] - 1];
    if (strlen(e->name) == len && memcmp(e->name, name, len) == 0) return e;
  }
  return NULL;
}

srv_model_t *srv_registry_version(const srv_registry_entry_t *e, int64_t version) {
  if (e->version_count == 0) return NULL;
  if (version < 0) return e->versions[e->version_count - 1];
  for (size_t i = 0; i < e->version_count; i++)
    if (e->versions[i]->version == version) return e->versions[i];
  return NULL;
}

size_t srv_registry_count(const srv_registry_t *r) { return r->count; }

const srv_registry_entry_t *srv_registry_at(const srv_registry_t *r, size_t i) {
  return &r->entries[i];
}

bool srv_registry_all_ready(const srv_registry_t *r) {
  for (size_t i = 0; i < r->count; i++)
    if (r->entries[i].reason != NULL) return false;
  return true;
}

static int version_cmp(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* The numeric subfolders of a model folder, ascending. */
static size_t versions_list(const char *dir, int64_t *out, size_t cap) {
  DIR *d = opendir(dir);
  if (d == NULL) return 0;
  size_t n = 0;
  struct dirent *ent;
  while ((ent = readdir(d)) != NULL && n < cap) {
    char *end;
    errno = 0;
    long long v = strtoll(ent->d_name, &end, 10);
    if (ent->d_name[0] == '\0' || *end != '\0' || errno != 0 || v < 0) continue;
    char path[PATH_MAX];
    struct stat sb;
    snprintf(path, sizeof path, "%s/%s", dir, ent->d_name);
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) out[n++] = v;
  }
  closedir(d);
  qsort(out, n, sizeof *out, version_cmp);
  return n;
}

/* Keeps the versions the policy selects (default: the latest one). */
static size_t versions_select(const inference_ModelConfig *c, int64_t *v, size_t n) {
  const inference_ModelVersionPolicy *p = inference_ModelConfig_version_policy(c);
  if (p != NULL && inference_ModelVersionPolicy_has_all(p)) return n;
  if (p != NULL && inference_ModelVersionPolicy_has_specific(p)) {
    size_t want_n, kept = 0;
    const int64_t *want = inference_ModelVersionPolicy_Specific_versions(
        inference_ModelVersionPolicy_specific(p), &want_n);
    for (size_t i = 0; i < n; i++)
      for (size_t j = 0; j < want_n; j++)
        if (v[i] == want[j]) v[kept++] = v[i];
    return kept;
  }
  uint32_t latest = 1;
  if (p != NULL && inference_ModelVersionPolicy_has_latest(p))
    latest = inference_ModelVersionPolicy_Latest_num_versions(
        inference_ModelVersionPolicy_latest(p));
  if (latest == 0) latest = 1;
  if (n <= latest) return n;
  memmove(v, v + (n - latest), latest * sizeof *v);
  return latest;
}

static void model_load_versions(srv_server_t *srv, srv_registry_entry_t *e,
                                const char *dir) {
  char path[PATH_MAX], err[512];
  snprintf(path, sizeof path, "%s/config.pbtxt", dir);
  upb_Arena *arena = upb_Arena_New();
  inference_ModelConfig *c = cfg_model_config_read(path, arena, err, sizeof err);
  if (c == NULL) {
    entry_fail(e, srv_status_new(GRPC_STATUS_INVALID_ARGUMENT, "%s", err));
    upb_Arena_Free(arena);
    return;
  }
  int64_t v[1024];
  size_t n = versions_select(c, v, versions_list(dir, v, 1024));
  upb_Arena_Free(arena);
  if (n == 0) {
    entry_fail(
        e, srv_status_new(GRPC_STATUS_UNAVAILABLE,
                          "no version of model '%s' is available in %s", e->name, dir));
    return;
  }
  e->versions = calloc(n, sizeof *e->versions);
  if (e->versions == NULL) SRV_FATAL("out of memory");
  for (size_t i = 0; i < n; i++) {
    srv_model_t *m;
    srv_status_t *st = srv_model_load(srv, dir, e->name, v[i], &m);
    if (st != NULL) {
      entry_fail(e, st);
      continue;
    }
    SRV_INFO("successfully loaded '%s' version %lld", e->name, (long long)v[i]);
    e->versions[e->version_count++] = m;
  }
}

static void repository_scan(srv_server_t *srv, srv_registry_t *r, const char *root) {
  DIR *d = opendir(root);
  if (d == NULL) {
    SRV_ERROR("cannot read model repository '%s': %s", root, strerror(errno));
    return;
  }
  struct dirent *ent;
  while ((ent = readdir(d)) != NULL) {
    if (ent->d_name[0] == '.') continue;
    char dir[PATH_MAX];
    struct stat sb;
    snprintf(dir, sizeof dir, "%s/%s", root, ent->d_name);
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) continue; /* files are not models */
    bool duplicate = false;
    for (size_t i = 0; i < r->count; i++)
      if (strcmp(r->entries[i].name, ent->d_name) == 0) {
        entry_fail(&r->entries[i], srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                                                  "model '%s' appears in several "
                                                  "model repositories",
                                                  ent->d_name));
        duplicate = true;
      }
    if (!duplicate) model_load_versions(srv, entry_add(r, ent->d_name), dir);
  }
  closedir(d);
}

srv_registry_t *srv_registry_load(srv_server_t *srv) {
  srv_registry_t *r = calloc(1, sizeof *r);
  if (r == NULL) SRV_FATAL("out of memory");
  for (size_t i = 0; i < srv->options->model_repository_count; i++)
    repository_scan(srv, r, srv->options->model_repositories[i]);
  table_build(r);
  return r;
}

void srv_registry_stop(srv_registry_t *r) {
  for (size_t i = 0; i < r->count; i++)
    for (size_t j = 0; j < r->entries[i].version_count; j++)
      srv_model_stop(r->entries[i].versions[j]);
}

void srv_registry_free(srv_registry_t *r) {
  for (size_t i = 0; i < r->count; i++) {
    srv_registry_entry_t *e = &r->entries[i];
    for (size_t j = 0; j < e->version_count; j++) {
      srv_instances_wait(e->versions[j]);
      srv_model_free(e->versions[j]);
    }
    free(e->versions);
    free(e->name);
    free(e->reason);
  }
  free(r->entries);
  free(r->table);
  free(r);
  srv_backends_finalize();
}
