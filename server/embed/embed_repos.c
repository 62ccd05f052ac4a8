/* TRITONSERVER_ServerRegisterModelRepository and
 * UnregisterModelRepository: adding and removing repository roots at run
 * time, with name mappings (a model folder served under another name), in
 * explicit mode only, as Triton. The roots live in the repository
 * (repository/repo_roots.c); loads after the call see them, loaded models
 * stay as they are. Any thread: the roots have their own lock. */
#include <stdlib.h>
#include <string.h>

#include "server/api/error_status.h"
#include "server/api/parameter.h"
#include "server/common/log.h"
#include "server/embed/embed.h"

/* Triton's checks of a mapping list: strings, each model name once. */
static TRITONSERVER_Error *mappings_check(const char *fn, const char *path,
                                          const TRITONSERVER_Parameter **map,
                                          uint32_t count) {
  if (map == NULL && count != 0)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "%s: model mappings are not provided while mapping count is "
                         "non-zero",
                         fn);
  for (uint32_t i = 0; i < count; i++) {
    if (map[i] == NULL) return SRV_EMBED_NULL(fn, "name_mapping entry");
    if (api_parameter_type(map[i]) != TRITONSERVER_PARAMETER_STRING)
      return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                           "%s: mapped model name must be a string, found another type "
                           "for '%s'",
                           fn, api_parameter_name(map[i]));
    for (uint32_t j = 0; j < i; j++)
      if (strcmp(api_parameter_value(map[i]), api_parameter_value(map[j])) == 0)
        return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                             "failed to register '%s', there is a conflicting mapping for "
                             "'%s'",
                             path, (const char *)api_parameter_value(map[i]));
  }
  return NULL;
}

/* Explicit mode only, as Triton: elsewhere the repository decides. */
static TRITONSERVER_Error *mode_check(srv_server_t *srv, const char *what) {
  if (strcmp(srv->options->model_control_mode, "explicit") == 0) return NULL;
  return api_error_new(TRITONSERVER_ERROR_UNSUPPORTED,
                       "repository %s is not allowed if model control mode is not "
                       "EXPLICIT",
                       what);
}

TRITONSERVER_Error *TRITONSERVER_ServerRegisterModelRepository(
    TRITONSERVER_Server *server, const char *repository_path,
    const TRITONSERVER_Parameter **name_mapping, const uint32_t mapping_count) {
  const char *fn = "TRITONSERVER_ServerRegisterModelRepository";
  if (server == NULL) return SRV_EMBED_NULL(fn, "server");
  if (repository_path == NULL) return SRV_EMBED_NULL(fn, "repository_path");
  TRITONSERVER_Error *err =
      mappings_check(fn, repository_path, name_mapping, mapping_count);
  if (err != NULL) return err;
  srv_embed_t *e;
  err = srv_embed_enter(server, fn, &e);
  if (err != NULL) return err;
  srv_server_t *srv = (srv_server_t *)server;
  err = mode_check(srv, "registration");
  if (err == NULL) {
    /* Mapping parameters: folder name -> model name. */
    const char **dirs = calloc(mapping_count + 1, sizeof *dirs);
    const char **models = calloc(mapping_count + 1, sizeof *models);
    if (dirs == NULL || models == NULL) SRV_FATAL("out of memory");
    for (uint32_t i = 0; i < mapping_count; i++) {
      dirs[i] = api_parameter_name(name_mapping[i]);
      models[i] = api_parameter_value(name_mapping[i]);
    }
    srv_status_t *st =
        srv_repository_register(srv->repository, repository_path, dirs, models, mapping_count);
    if (st != NULL) err = api_error_from_status(st);
    free(dirs);
    free(models);
  }
  srv_embed_leave(e);
  return err;
}

TRITONSERVER_Error *TRITONSERVER_ServerUnregisterModelRepository(
    TRITONSERVER_Server *server, const char *repository_path) {
  const char *fn = "TRITONSERVER_ServerUnregisterModelRepository";
  if (server == NULL) return SRV_EMBED_NULL(fn, "server");
  if (repository_path == NULL) return SRV_EMBED_NULL(fn, "repository_path");
  srv_embed_t *e;
  TRITONSERVER_Error *err = srv_embed_enter(server, fn, &e);
  if (err != NULL) return err;
  srv_server_t *srv = (srv_server_t *)server;
  err = mode_check(srv, "unregistration");
  if (err == NULL) {
    srv_status_t *st = srv_repository_unregister(srv->repository, repository_path);
    if (st != NULL) err = api_error_from_status(st);
  }
  srv_embed_leave(e);
  return err;
}
