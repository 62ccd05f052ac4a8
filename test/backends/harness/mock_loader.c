/* Mock server: loading a backend library and running its lifecycle in the
 * server's order. Test thread only. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "test/backends/harness/mock_server.h"

static bool lib_open(const char *path, mock_lib_t *lib) {
  memset(lib, 0, sizeof *lib);
  lib->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (lib->handle == NULL) {
    fprintf(stderr, "mock: dlopen %s: %s\n", path, dlerror());
    return false;
  }
  /* Only Execute is required; the server treats the others as optional. */
  *(void **)&lib->initialize = dlsym(lib->handle, "TRITONBACKEND_Initialize");
  *(void **)&lib->finalize = dlsym(lib->handle, "TRITONBACKEND_Finalize");
  *(void **)&lib->get_attribute = dlsym(lib->handle, "TRITONBACKEND_GetBackendAttribute");
  *(void **)&lib->model_initialize = dlsym(lib->handle, "TRITONBACKEND_ModelInitialize");
  *(void **)&lib->model_finalize = dlsym(lib->handle, "TRITONBACKEND_ModelFinalize");
  *(void **)&lib->instance_initialize =
      dlsym(lib->handle, "TRITONBACKEND_ModelInstanceInitialize");
  *(void **)&lib->instance_finalize =
      dlsym(lib->handle, "TRITONBACKEND_ModelInstanceFinalize");
  *(void **)&lib->execute = dlsym(lib->handle, "TRITONBACKEND_ModelInstanceExecute");
  return lib->execute != NULL;
}

static TRITONSERVER_Error *bring_up(mock_loaded_t *m) {
  TRITONSERVER_Error *err = NULL;
  if (m->lib.initialize != NULL && (err = m->lib.initialize(&m->backend)) != NULL)
    return err;
  m->backend_up = true;
  if (m->lib.get_attribute != NULL &&
      (err = m->lib.get_attribute(
           &m->backend, (TRITONBACKEND_BackendAttribute *)&m->backend)) != NULL) {
    return err;
  }
  if (m->lib.model_initialize != NULL &&
      (err = m->lib.model_initialize(&m->model)) != NULL) {
    return err;
  }
  m->model_up = true;
  if (m->lib.instance_initialize != NULL &&
      (err = m->lib.instance_initialize(&m->instance)) != NULL) {
    return err;
  }
  m->instance_up = true;
  return NULL;
}

TRITONSERVER_Error *mock_load(mock_loaded_t *m, const char *path,
                              const char *backend_name, const char *backend_config_json,
                              const char *model_name, const char *model_config_json) {
  static char instance_name[128];
  memset(m, 0, sizeof *m);
  if (!lib_open(path, &m->lib)) {
    return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_NOT_FOUND, "cannot load the backend");
  }
  m->backend.name = backend_name;
  m->backend.config_json = backend_config_json;
  m->backend.preferred_kind = -1;
  m->model.name = model_name;
  m->model.version = 1;
  m->model.config_json = model_config_json;
  m->model.backend = &m->backend;
  snprintf(instance_name, sizeof instance_name, "%s_0", model_name);
  m->instance.name = instance_name;
  m->instance.model = &m->model;
  return bring_up(m);
}

static int finalize_step(const char *what, TRITONSERVER_Error *err) {
  if (err == NULL) return 0;
  fprintf(stderr, "  %s failed: %s\n", what, err->msg);
  TRITONSERVER_ErrorDelete(err);
  return 1;
}

int mock_unload(mock_loaded_t *m) {
  int failures = 0;
  if (m->instance_up && m->lib.instance_finalize != NULL) {
    failures +=
        finalize_step("ModelInstanceFinalize", m->lib.instance_finalize(&m->instance));
  }
  if (m->model_up && m->lib.model_finalize != NULL) {
    failures += finalize_step("ModelFinalize", m->lib.model_finalize(&m->model));
  }
  if (m->backend_up && m->lib.finalize != NULL) {
    failures += finalize_step("Finalize", m->lib.finalize(&m->backend));
  }
  m->instance_up = m->model_up = m->backend_up = false;
  if (m->lib.handle != NULL) dlclose(m->lib.handle);
  m->lib.handle = NULL;
  return failures;
}
