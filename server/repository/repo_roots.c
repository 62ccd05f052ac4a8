/* The repository roots as they are now: the --model-repository folders,
 * plus those registered at run time with their name mappings (a folder
 * served under another model name), minus those unregistered. Loader
 * threads find a model's folder here, views list the folders, and the
 * embedding API registers and unregisters, each under the table's mutex,
 * held only to copy paths: every stat and scan runs outside it. Any
 * thread. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "server/common/log.h"
#include "server/common/memory.h"
#include "server/core/server.h"
#include "server/repository/model_name.h"
#include "server/repository/repo_internal.h"

static bool is_dir(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

void repo_roots_init(repo_roots_t *t, const srv_options_t *opt) {
  pthread_mutex_init(&t->lock, NULL);
  t->count = opt->model_repository_count;
  t->paths = calloc(t->count + 1, sizeof *t->paths);
  if (t->paths == NULL) SRV_FATAL("out of memory");
  for (size_t i = 0; i < t->count; i++) t->paths[i] = srv_strdup(opt->model_repositories[i]);
  t->maps = NULL;
  t->map_count = 0;
}

static void mapping_free(repo_mapping_t *m) {
  free(m->model);
  free(m->dir);
  free(m->root);
}

void repo_roots_fini(repo_roots_t *t) {
  for (size_t i = 0; i < t->count; i++) free(t->paths[i]);
  free(t->paths);
  for (size_t i = 0; i < t->map_count; i++) mapping_free(&t->maps[i]);
  free(t->maps);
  pthread_mutex_destroy(&t->lock);
}

/* The folders that could hold `name`, as Triton looks: its mapping's
 * folder alone, else <root>/<name> in each root unless a mapping serves
 * that folder under another name. The caller frees them. */
static size_t candidates(repo_roots_t *t, const char *name, char ***out, bool *mapped) {
  pthread_mutex_lock(&t->lock);
  char **c = calloc(t->count + 1, sizeof *c);
  if (c == NULL) SRV_FATAL("out of memory");
  size_t n = 0;
  *mapped = false;
  for (size_t i = 0; i < t->map_count && !*mapped; i++)
    if (strcmp(t->maps[i].model, name) == 0) {
      c[n++] = srv_strdup(t->maps[i].dir);
      *mapped = true;
    }
  for (size_t i = 0; i < t->count && !*mapped; i++) {
    char *p = srv_repo_path_join(t->paths[i], name);
    bool taken = false;
    for (size_t j = 0; j < t->map_count && !taken; j++) taken = !strcmp(t->maps[j].dir, p);
    if (taken)
      free(p);
    else
      c[n++] = p;
  }
  pthread_mutex_unlock(&t->lock);
  *out = c;
  return n;
}

/* Triton's answer for a name no root has; the reason goes to the log, as
 * Triton's poll does. */
static srv_status_t *no_folder(const char *name) {
  SRV_ERROR("failed to poll model '%s': no model folder '%s' in the model repositories",
            name, name);
  return srv_status_new(GRPC_STATUS_INTERNAL,
                        "failed to load '%s', failed to poll from model repository",
                        name);
}

srv_status_t *repo_roots_find(repo_roots_t *t, const char *name, char **out,
                              bool *mapped, bool *missing) {
  char **c;
  size_t n = candidates(t, name, &c, mapped);
  *out = NULL;
  *missing = false;
  srv_status_t *st = NULL;
  for (size_t i = 0; i < n; i++) {
    if (st == NULL && is_dir(c[i])) {
      if (*out == NULL) {
        *out = c[i];
        continue;
      }
      st = srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "model '%s' appears in several model repositories", name);
    }
    free(c[i]);
  }
  free(c);
  if (st != NULL) {
    free(*out);
    *out = NULL;
    return st;
  }
  if (*out != NULL) return NULL;
  *missing = true;
  return no_folder(name);
}

srv_status_t *repo_roots_find_in(repo_roots_t *t, const char *ns, const char *name,
                                 char **out, bool *mapped, bool *missing) {
  pthread_mutex_lock(&t->lock);
  *out = NULL;
  *mapped = false;
  for (size_t i = 0; i < t->map_count && *out == NULL; i++)
    if (strcmp(t->maps[i].model, name) == 0 && strcmp(t->maps[i].root, ns) == 0) {
      *out = srv_strdup(t->maps[i].dir);
      *mapped = true;
    }
  pthread_mutex_unlock(&t->lock);
  if (*out == NULL) *out = srv_repo_path_join(ns, name);
  *missing = !is_dir(*out);
  if (!*missing) return NULL;
  free(*out);
  *out = NULL;
  return no_folder(name);
}

srv_status_t *repo_roots_find_all(repo_roots_t *t, const char *name,
                                  srv_repo_listing_t *out) {
  char **c;
  bool mapped;
  size_t n = candidates(t, name, &c, &mapped);
  pthread_mutex_lock(&t->lock);
  char **roots = calloc(n + 1, sizeof *roots);
  if (roots == NULL) SRV_FATAL("out of memory");
  /* A mapping names its root; else candidate i is <root i>/<name>, the
   * roots in their order minus those whose folder is mapped. */
  for (size_t i = 0, k = 0; i < t->count && k < n; i++) {
    char *p = srv_repo_path_join(t->paths[i], name);
    if (mapped || strcmp(p, c[k]) == 0) roots[k++] = srv_strdup(t->paths[i]);
    free(p);
  }
  for (size_t i = 0; mapped && i < t->map_count; i++)
    if (strcmp(t->maps[i].model, name) == 0) {
      free(roots[0]);
      roots[0] = srv_strdup(t->maps[i].root);
    }
  pthread_mutex_unlock(&t->lock);
  *out = (srv_repo_listing_t){0};
  out->models = calloc(n + 1, sizeof *out->models);
  if (out->models == NULL) SRV_FATAL("out of memory");
  for (size_t i = 0; i < n; i++) {
    if (roots[i] != NULL && is_dir(c[i]))
      out->models[out->count++] =
          (srv_repo_model_t){.name = srv_strdup(name), .ns = roots[i], .dir = c[i]};
    else {
      free(roots[i]);
      free(c[i]);
    }
  }
  free(roots);
  free(c);
  return out->count > 0 ? NULL : no_folder(name);
}

/* ---- Listing ---------------------------------------------------------------- */

static int model_cmp(const void *a, const void *b) {
  const srv_repo_model_t *x = a, *y = b;
  int c = strcmp(x->name, y->name);
  return c != 0 ? c : srv_repo_ns_cmp(x->ns, y->ns);
}

/* A mapped folder is listed under its model name only (with namespaces,
 * in its root's namespace). */
static void listing_map(srv_repo_listing_t *l, const repo_mapping_t *maps, size_t n,
                        bool namespacing) {
  srv_repo_model_t *grown = realloc(l->models, (l->count + n + 1) * sizeof *grown);
  if (grown == NULL) SRV_FATAL("out of memory");
  l->models = grown;
  for (size_t i = 0; i < n; i++) {
    for (size_t j = 0; j < l->count; j++)
      if (strcmp(l->models[j].dir, maps[i].dir) == 0) {
        free(l->models[j].name);
        free(l->models[j].ns);
        free(l->models[j].dir);
        l->models[j--] = l->models[--l->count];
      }
    if (is_dir(maps[i].dir))
      l->models[l->count++] =
          (srv_repo_model_t){.name = srv_strdup(maps[i].model),
                             .ns = namespacing ? srv_strdup(maps[i].root) : NULL,
                             .dir = srv_strdup(maps[i].dir)};
  }
  qsort(l->models, l->count, sizeof *l->models, model_cmp);
  /* A mapped name that is also a folder elsewhere: listed once. */
  size_t kept = 0;
  for (size_t j = 0; j < l->count; j++) {
    if (kept > 0 && model_cmp(&l->models[kept - 1], &l->models[j]) == 0) {
      l->models[kept - 1].duplicate = true;
      free(l->models[j].name);
      free(l->models[j].ns);
      free(l->models[j].dir);
      continue;
    }
    l->models[kept++] = l->models[j];
  }
  l->count = kept;
}

void srv_repository_listing(srv_repository_t *r, srv_repo_listing_t *out) {
  repo_roots_t *t = &r->roots;
  pthread_mutex_lock(&t->lock);
  char **paths = calloc(t->count + 1, sizeof *paths);
  repo_mapping_t *maps = calloc(t->map_count + 1, sizeof *maps);
  if (paths == NULL || maps == NULL) SRV_FATAL("out of memory");
  size_t count = t->count, map_count = t->map_count;
  for (size_t i = 0; i < count; i++) paths[i] = srv_strdup(t->paths[i]);
  for (size_t i = 0; i < map_count; i++)
    maps[i] = (repo_mapping_t){srv_strdup(t->maps[i].model), srv_strdup(t->maps[i].dir),
                               srv_strdup(t->maps[i].root)};
  pthread_mutex_unlock(&t->lock);
  if (r->namespacing)
    srv_repo_scan_ns(paths, count, false, out);
  else
    srv_repo_scan(paths, count, false, out);
  if (map_count > 0) listing_map(out, maps, map_count, r->namespacing);
  for (size_t i = 0; i < count; i++) free(paths[i]);
  for (size_t i = 0; i < map_count; i++) mapping_free(&maps[i]);
  free(paths);
  free(maps);
}

/* ---- Registration ------------------------------------------------------------ */

static bool root_known(const repo_roots_t *t, const char *path) {
  for (size_t i = 0; i < t->count; i++)
    if (strcmp(t->paths[i], path) == 0) return true;
  return false;
}

/* Folder and model names of the mappings: one folder name each, each model
 * name once, none already mapped. The caller holds the lock. */
static srv_status_t *mappings_check(const repo_roots_t *t, const char *path,
                                    const char *const *dirs, const char *const *models,
                                    size_t n) {
  for (size_t i = 0; i < n; i++) {
    srv_status_t *st = srv_model_name_check(models[i], strlen(models[i]));
    if (st == NULL) st = srv_model_name_check(dirs[i], strlen(dirs[i]));
    if (st != NULL) return st;
    bool taken = false;
    for (size_t j = 0; j < t->map_count && !taken; j++)
      taken = strcmp(t->maps[j].model, models[i]) == 0;
    for (size_t j = 0; j < i && !taken; j++) taken = strcmp(models[j], models[i]) == 0;
    if (taken)
      return srv_status_new(GRPC_STATUS_ALREADY_EXISTS,
                            "failed to register '%s', there is a conflicting mapping for "
                            "'%s'",
                            path, models[i]);
  }
  return NULL;
}

srv_status_t *srv_repository_register(srv_repository_t *r, const char *path,
                                      const char *const *dirs, const char *const *models,
                                      size_t n) {
  if (!is_dir(path))
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "failed to register '%s', repository not found", path);
  repo_roots_t *t = &r->roots;
  pthread_mutex_lock(&t->lock);
  srv_status_t *st = root_known(t, path)
                         ? srv_status_new(GRPC_STATUS_ALREADY_EXISTS,
                                          "model repository '%s' has already been "
                                          "registered",
                                          path)
                         : mappings_check(t, path, dirs, models, n);
  if (st == NULL) {
    char **paths = realloc(t->paths, (t->count + 2) * sizeof *paths);
    repo_mapping_t *maps = realloc(t->maps, (t->map_count + n + 1) * sizeof *maps);
    if (paths == NULL || maps == NULL) SRV_FATAL("out of memory");
    t->paths = paths;
    t->maps = maps;
    t->paths[t->count++] = srv_strdup(path);
    for (size_t i = 0; i < n; i++)
      t->maps[t->map_count++] = (repo_mapping_t){srv_strdup(models[i]),
                                                 srv_repo_path_join(path, dirs[i]), srv_strdup(path)};
  }
  pthread_mutex_unlock(&t->lock);
  if (st == NULL) SRV_INFO("model repository registered: %s", path);
  return st;
}

srv_status_t *srv_repository_unregister(srv_repository_t *r, const char *path) {
  repo_roots_t *t = &r->roots;
  pthread_mutex_lock(&t->lock);
  bool found = false;
  for (size_t i = 0; i < t->count && !found; i++)
    if (strcmp(t->paths[i], path) == 0) {
      free(t->paths[i]);
      /* The order stays: a duplicate folder is reported from the first root. */
      memmove(&t->paths[i], &t->paths[i + 1], (t->count - i - 1) * sizeof *t->paths);
      t->count--;
      found = true;
    }
  size_t kept = 0;
  for (size_t i = 0; found && i < t->map_count; i++) {
    if (strcmp(t->maps[i].root, path) == 0)
      mapping_free(&t->maps[i]);
    else
      t->maps[kept++] = t->maps[i];
  }
  if (found) t->map_count = kept;
  pthread_mutex_unlock(&t->lock);
  if (!found)
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "failed to unregister '%s', repository not found", path);
  SRV_INFO("model repository unregistered: %s", path);
  return NULL;
}
