/* Backend loading and the TRITONBACKEND_Backend* API (see backend.h). */
#include "server/model/backend.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/api/error.h"
#include "server/api/error_status.h"
#include "server/common/log.h"
#include "server/common/memory.h"
#include "server/cuda/memory.h"

/* One table for the process, as Triton's backend manager: servers that
 * use the same library share one initialized backend (users below). */
static pthread_mutex_t backends_lock = PTHREAD_MUTEX_INITIALIZER;
static TRITONBACKEND_Backend *backends; /* guarded by backends_lock */

/* The library path by Triton's order; false when none exists. */
static bool library_find(const char *name, const char *runtime, const char *model_dir,
                         const char *version_dir, const char *backend_dir, char *out,
                         size_t out_len) {
  char lib[NAME_MAX + 1];
  if (runtime != NULL && runtime[0] != '\0') {
    if (runtime[0] == '/') {
      snprintf(out, out_len, "%s", runtime);
      return access(out, R_OK) == 0;
    }
    snprintf(lib, sizeof lib, "%s", runtime);
  } else {
    snprintf(lib, sizeof lib, "libtriton_%s.so", name);
  }
  const char *dirs[3] = {version_dir, model_dir, NULL};
  char named_dir[PATH_MAX];
  snprintf(named_dir, sizeof named_dir, "%s/%s", backend_dir ? backend_dir : "", name);
  dirs[2] = backend_dir ? named_dir : NULL;
  for (int i = 0; i < 3; i++) {
    if (dirs[i] == NULL) continue;
    snprintf(out, out_len, "%s/%s", dirs[i], lib);
    if (access(out, R_OK) == 0) return true;
  }
  return false;
}

static srv_status_t *symbols_resolve(TRITONBACKEND_Backend *b) {
  b->initialize = (backend_init_fn *)dlsym(b->dl, "TRITONBACKEND_Initialize");
  b->finalize = (backend_init_fn *)dlsym(b->dl, "TRITONBACKEND_Finalize");
  b->model_initialize = (model_fn *)dlsym(b->dl, "TRITONBACKEND_ModelInitialize");
  b->model_finalize = (model_fn *)dlsym(b->dl, "TRITONBACKEND_ModelFinalize");
  b->instance_initialize =
      (instance_fn *)dlsym(b->dl, "TRITONBACKEND_ModelInstanceInitialize");
  b->instance_finalize =
      (instance_fn *)dlsym(b->dl, "TRITONBACKEND_ModelInstanceFinalize");
  b->execute = (execute_fn *)dlsym(b->dl, "TRITONBACKEND_ModelInstanceExecute");
  if (b->execute == NULL)
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "backend '%s' (%s) does not define "
                          "TRITONBACKEND_ModelInstanceExecute",
                          b->name, b->path);
  return NULL;
}

static void backend_free(TRITONBACKEND_Backend *b) {
  if (b->dl != NULL) dlclose(b->dl);
  free(b->users);
  free(b->name);
  free(b->path);
  free(b->dir);
  free(b->config_json);
  free(b);
}

/* Appends "key":"value" to a JSON object under construction. */
static void json_pair(char **json, size_t *len, const char *key, size_t key_len,
                      const char *value) {
  size_t need = *len + 2 * (key_len + strlen(value)) + 8;
  *json = realloc(*json, need + 1);
  if (*json == NULL) SRV_FATAL("out of memory");
  char *p = *json + *len;
  if ((*json)[*len - 1] != '{') *p++ = ',';
  const char *parts[2] = {key, value};
  size_t lens[2] = {key_len, strlen(value)};
  for (int k = 0; k < 2; k++) {
    *p++ = '"';
    for (size_t i = 0; i < lens[k]; i++) {
      char c = parts[k][i];
      if (c == '"' || c == '\\') *p++ = '\\';
      *p++ = (unsigned char)c < 0x20 ? ' ' : c;
    }
    *p++ = '"';
    if (k == 0) *p++ = ':';
  }
  *len = (size_t)(p - *json);
  (*json)[*len] = '\0';
}

/* {"cmdline":{...}}: the server-wide settings tritonserver passes to every
 * backend, then this backend's --backend-config pairs. */
static char *config_json_build(const char *name, const srv_options_t *opt) {
  char *json = srv_strdup("{\"cmdline\":{");
  size_t len = strlen(json);
  json_pair(&json, &len, "backend-directory", strlen("backend-directory"),
            opt->backend_directory);
  json_pair(&json, &len, "default-max-batch-size", strlen("default-max-batch-size"), "4");
  size_t name_len = strlen(name);
  for (size_t i = 0; i < opt->backend_config_count; i++) {
    const char *c = opt->backend_configs[i];
    if (strncmp(c, name, name_len) != 0 || c[name_len] != ',') continue;
    const char *key = c + name_len + 1;
    const char *eq = strchr(key, '=');
    json_pair(&json, &len, key, (size_t)(eq - key), eq + 1);
  }
  json = realloc(json, len + 3);
  if (json == NULL) SRV_FATAL("out of memory");
  strcpy(json + len, "}}");
  return json;
}

/* Asks the backend for its attributes (optional entry point), as Triton
 * does right after Initialize; a failure finalizes it again. */
static srv_status_t *attributes_read(TRITONBACKEND_Backend *b) {
  attribute_fn *get = (attribute_fn *)dlsym(b->dl, "TRITONBACKEND_GetBackendAttribute");
  if (get == NULL) return NULL;
  TRITONSERVER_Error *err = get(b, &b->attributes);
  if (err == NULL) return NULL;
  srv_status_t *st = srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                                    "backend '%s' failed to give its attributes: %s",
                                    b->name, TRITONSERVER_ErrorMessage(err));
  TRITONSERVER_ErrorDelete(err);
  if (b->finalize != NULL) {
    err = b->finalize(b);
    if (err != NULL) TRITONSERVER_ErrorDelete(err);
  }
  return st;
}

static srv_status_t *backend_open(const char *name, const char *path,
                                  const srv_options_t *opt, TRITONBACKEND_Backend **out) {
  TRITONBACKEND_Backend *b = calloc(1, sizeof *b);
  if (b == NULL) SRV_FATAL("out of memory");
  b->name = srv_strdup(name);
  b->path = srv_strdup(path);
  b->dir = srv_strdup(path);
  char *slash = strrchr(b->dir, '/');
  if (slash != NULL) *slash = '\0';
  b->config_json = config_json_build(name, opt);
  b->policy = TRITONBACKEND_EXECUTION_BLOCKING;
  b->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  srv_status_t *st = NULL;
  if (b->dl == NULL) {
    st = srv_status_new(GRPC_STATUS_INVALID_ARGUMENT, "cannot load backend '%s': %s",
                        name, dlerror());
  } else {
    st = symbols_resolve(b);
  }
  if (st == NULL && b->initialize != NULL) {
    TRITONSERVER_Error *err = b->initialize(b);
    if (err != NULL) {
      st = srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "backend '%s' failed to initialize: %s", name,
                          TRITONSERVER_ErrorMessage(err));
      TRITONSERVER_ErrorDelete(err);
    }
  }
  if (st == NULL) st = attributes_read(b);
  if (st != NULL) {
    backend_free(b);
    return st;
  }
  SRV_INFO("loaded backend '%s' from %s", name, path);
  *out = b;
  return NULL;
}

/* Counts `user` (a server) among b's users once; backends_lock held. */
static void user_add(TRITONBACKEND_Backend *b, const void *user) {
  for (size_t i = 0; i < b->user_count; i++)
    if (b->users[i] == user) return;
  if (b->user_count == b->user_cap) {
    b->user_cap = b->user_cap ? 2 * b->user_cap : 2;
    b->users = realloc(b->users, b->user_cap * sizeof *b->users);
    if (b->users == NULL) SRV_FATAL("out of memory");
  }
  b->users[b->user_count++] = user;
}

/* Takes `user` off b's users; backends_lock held. */
static void user_remove(TRITONBACKEND_Backend *b, const void *user) {
  for (size_t i = 0; i < b->user_count; i++)
    if (b->users[i] == user) {
      b->users[i] = b->users[--b->user_count];
      return;
    }
}

srv_status_t *srv_backend_acquire(const char *name, const char *runtime,
                                  const char *model_dir, const char *version_dir,
                                  const srv_options_t *options, const void *user,
                                  TRITONBACKEND_Backend **out) {
  const char *backend_dir = options->backend_directory;
  char path[PATH_MAX];
  if (!library_find(name, runtime, model_dir, version_dir, backend_dir, path,
                    sizeof path))
    /* tritonserver's code and sentence, which clients match; then where
     * Nereid looked. */
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "unable to find backend library for backend '%s', try "
                          "specifying runtime on the model configuration. Looked in "
                          "%s, %s and %s/%s.",
                          name, version_dir, model_dir,
                          backend_dir ? backend_dir : "(no --backend-directory)", name);
  pthread_mutex_lock(&backends_lock);
  srv_status_t *st = NULL;
  TRITONBACKEND_Backend *b;
  for (b = backends; b != NULL; b = b->next)
    if (strcmp(b->path, path) == 0) break;
  if (b == NULL) {
    /* Initialized under the lock: two models of one backend load it once. */
    st = backend_open(name, path, options, &b);
    if (st == NULL) {
      b->next = backends;
      backends = b;
    }
  }
  if (st == NULL) user_add(b, user);
  pthread_mutex_unlock(&backends_lock);
  if (st == NULL) *out = b;
  return st;
}

static void backend_finalize(TRITONBACKEND_Backend *b) {
  if (b->finalize == NULL) return;
  TRITONSERVER_Error *err = b->finalize(b);
  if (err != NULL) {
    SRV_ERROR("backend '%s' failed to finalize: %s", b->name,
              TRITONSERVER_ErrorMessage(err));
    TRITONSERVER_ErrorDelete(err);
  }
}

static bool user_has(const TRITONBACKEND_Backend *b, const void *user) {
  for (size_t i = 0; i < b->user_count; i++)
    if (b->users[i] == user) return true;
  return false;
}

/* Takes `user` off every backend; those nobody uses any more are
 * finalized, and freed unless `abandon`. With `abandon`, a backend with an
 * abandoned model keeps the user, so it is never finalized. Under the
 * lock, as Initialize is: a server loading the same library meanwhile
 * waits, then opens it afresh (Triton's manager: the last reference
 * finalizes), never while its Finalize runs. */
static void users_leave(const void *user, bool abandon) {
  pthread_mutex_lock(&backends_lock);
  for (TRITONBACKEND_Backend **p = &backends; *p != NULL;) {
    TRITONBACKEND_Backend *b = *p;
    if (!user_has(b, user)) {
      p = &b->next;
      continue;
    }
    if (abandon && atomic_load_explicit(&b->abandoned, memory_order_relaxed)) {
      SRV_ERROR("backend '%s' is not finalized: a model of it did not stop", b->name);
      p = &b->next;
      continue;
    }
    user_remove(b, user);
    if (b->user_count > 0) {
      p = &b->next;
      continue;
    }
    *p = b->next;
    backend_finalize(b);
    /* Abandoned: the server's threads may still run until the process
     * exits, so its libraries stay open. */
    if (!abandon) backend_free(b);
  }
  pthread_mutex_unlock(&backends_lock);
}

void srv_backends_finalize(const void *user) { users_leave(user, false); }

void srv_backends_abandon(const void *user) { users_leave(user, true); }

/* ---- TRITONBACKEND_Backend* API ---- */

TRITONSERVER_Error *TRITONBACKEND_ApiVersion(uint32_t *major, uint32_t *minor) {
  *major = TRITONBACKEND_API_VERSION_MAJOR;
  *minor = TRITONBACKEND_API_VERSION_MINOR;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_BackendName(TRITONBACKEND_Backend *backend,
                                              const char **name) {
  *name = backend->name;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_BackendConfig(TRITONBACKEND_Backend *backend,
                                                TRITONSERVER_Message **backend_config) {
  return TRITONSERVER_MessageNewFromSerializedJson(backend_config, backend->config_json,
                                                   strlen(backend->config_json));
}

TRITONSERVER_Error *TRITONBACKEND_BackendExecutionPolicy(
    TRITONBACKEND_Backend *backend, TRITONBACKEND_ExecutionPolicy *policy) {
  *policy = backend->policy;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_BackendSetExecutionPolicy(
    TRITONBACKEND_Backend *backend, TRITONBACKEND_ExecutionPolicy policy) {
  backend->policy = policy;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_BackendArtifacts(
    TRITONBACKEND_Backend *backend, TRITONBACKEND_ArtifactType *artifact_type,
    const char **location) {
  *artifact_type = TRITONBACKEND_ARTIFACT_FILESYSTEM;
  *location = backend->dir;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_BackendState(TRITONBACKEND_Backend *backend,
                                               void **state) {
  *state = backend->state;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_BackendSetState(TRITONBACKEND_Backend *backend,
                                                  void *state) {
  backend->state = state;
  return NULL;
}

/* One process-wide memory manager: CPU memory from the allocator, GPU and
 * pinned memory from the pools (server/cuda/cuda.md). */
static int memory_manager_token;

TRITONSERVER_Error *TRITONBACKEND_BackendMemoryManager(
    TRITONBACKEND_Backend *backend, TRITONBACKEND_MemoryManager **manager) {
  (void)backend;
  *manager = (TRITONBACKEND_MemoryManager *)&memory_manager_token;
  return NULL;
}

static bool memory_type_known(TRITONSERVER_MemoryType type) {
  return type == TRITONSERVER_MEMORY_CPU || type == TRITONSERVER_MEMORY_CPU_PINNED ||
         type == TRITONSERVER_MEMORY_GPU;
}

TRITONSERVER_Error *TRITONBACKEND_MemoryManagerAllocate(
    TRITONBACKEND_MemoryManager *manager, void **buffer,
    const TRITONSERVER_MemoryType memory_type, const int64_t memory_type_id,
    const uint64_t byte_size) {
  (void)manager;
  if (!memory_type_known(memory_type))
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG, "unknown memory type %d",
                         (int)memory_type);
  srv_status_t *st = srv_cuda_pool_alloc(memory_type, memory_type_id, byte_size, buffer);
  return st == NULL ? NULL : api_error_from_status(st);
}

TRITONSERVER_Error *TRITONBACKEND_MemoryManagerFree(
    TRITONBACKEND_MemoryManager *manager, void *buffer,
    const TRITONSERVER_MemoryType memory_type, const int64_t memory_type_id) {
  (void)manager;
  if (!memory_type_known(memory_type))
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG, "unknown memory type %d",
                         (int)memory_type);
  srv_cuda_pool_free(memory_type, memory_type_id, buffer);
  return NULL;
}
