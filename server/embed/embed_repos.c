/* TRITONSERVER_ServerRegisterModelRepository and
 * UnregisterModelRepository: adding and removing repository roots at run
 * time, with name mappings (a model folder served under another name).
 * Triton allows them in explicit mode only. Nereid's roots are fixed when
 * the server starts (the repository's loaders and views read them without
 * a lock), so in explicit mode the call is refused, after the checks of
 * its arguments that Triton makes, naming the way Nereid offers instead
 * (embed.md). Any thread. */
#include <string.h>

#include "server/api/parameter.h"
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

static TRITONSERVER_Error *refuse(TRITONSERVER_Server *server, const char *fn,
                                  const char *what) {
  srv_embed_t *e;
  TRITONSERVER_Error *err = srv_embed_enter(server, fn, &e);
  if (err != NULL) return err;
  srv_server_t *srv = (srv_server_t *)server;
  bool explicit_mode = strcmp(srv->options->model_control_mode, "explicit") == 0;
  srv_embed_leave(e);
  if (!explicit_mode)
    return api_error_new(TRITONSERVER_ERROR_UNSUPPORTED,
                         "repository %s is not allowed if model control mode is not "
                         "EXPLICIT",
                         what);
  return api_error_new(TRITONSERVER_ERROR_UNSUPPORTED,
                       "%s: Nereid's model repositories are fixed when the server starts; "
                       "give every root with TRITONSERVER_ServerOptionsSetModelRepositoryPath",
                       fn);
}

TRITONSERVER_Error *TRITONSERVER_ServerRegisterModelRepository(
    TRITONSERVER_Server *server, const char *repository_path,
    const TRITONSERVER_Parameter **name_mapping, const uint32_t mapping_count) {
  const char *fn = "TRITONSERVER_ServerRegisterModelRepository";
  if (server == NULL) return SRV_EMBED_NULL(fn, "server");
  if (repository_path == NULL) return SRV_EMBED_NULL(fn, "repository_path");
  TRITONSERVER_Error *err =
      mappings_check(fn, repository_path, name_mapping, mapping_count);
  return err != NULL ? err : refuse(server, fn, "registration");
}

TRITONSERVER_Error *TRITONSERVER_ServerUnregisterModelRepository(
    TRITONSERVER_Server *server, const char *repository_path) {
  const char *fn = "TRITONSERVER_ServerUnregisterModelRepository";
  if (server == NULL) return SRV_EMBED_NULL(fn, "server");
  if (repository_path == NULL) return SRV_EMBED_NULL(fn, "repository_path");
  return refuse(server, fn, "unregistration");
}
