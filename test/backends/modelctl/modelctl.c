/* modelctl: a test backend that controls other models from its Execute, as
 * Triton's Python backend does with TRITONSERVER_ServerLoadModel*: the
 * model's name says what, "<action>__<target>" with action load, unload
 * or unloaddeps. Every request of the batch gets an empty response
 * carrying the call's outcome (no error, or its error), then is released.
 * Execute runs on the instance's own thread, where such a blocking call
 * is allowed. */
#include <string.h>

#include "triton/core/tritonbackend.h"

#define EXPORT __attribute__((visibility("default")))

/* The call the model's name asks for, on the server the model runs in. */
static TRITONSERVER_Error *control(TRITONBACKEND_ModelInstance *instance) {
  TRITONBACKEND_Model *model;
  const char *name;
  TRITONSERVER_Server *server;
  TRITONSERVER_Error *err = TRITONBACKEND_ModelInstanceModel(instance, &model);
  if (err == NULL) err = TRITONBACKEND_ModelName(model, &name);
  if (err == NULL) err = TRITONBACKEND_ModelServer(model, &server);
  if (err != NULL) return err;
  const char *sep = strstr(name, "__");
  size_t n = sep != NULL ? (size_t)(sep - name) : 0;
  if (n == 4 && strncmp(name, "load", n) == 0)
    return TRITONSERVER_ServerLoadModel(server, sep + 2);
  if (n == 6 && strncmp(name, "unload", n) == 0)
    return TRITONSERVER_ServerUnloadModel(server, sep + 2);
  if (n == 10 && strncmp(name, "unloaddeps", n) == 0)
    return TRITONSERVER_ServerUnloadModelAndDependents(server, sep + 2);
  return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INVALID_ARG,
                               "modelctl: the model's name must be <load|unload|"
                               "unloaddeps>__<model>");
}

EXPORT TRITONSERVER_Error *TRITONBACKEND_ModelInstanceExecute(
    TRITONBACKEND_ModelInstance *instance, TRITONBACKEND_Request **requests,
    const uint32_t request_count) {
  TRITONSERVER_Error *outcome = control(instance);
  for (uint32_t i = 0; i < request_count; i++) {
    TRITONBACKEND_Response *response;
    TRITONSERVER_Error *err = TRITONBACKEND_ResponseNew(&response, requests[i]);
    /* The send takes the response, not the error: `outcome` is reused. */
    if (err == NULL)
      err = TRITONBACKEND_ResponseSend(response, TRITONSERVER_RESPONSE_COMPLETE_FINAL,
                                       outcome);
    if (err != NULL) TRITONSERVER_ErrorDelete(err);
    TRITONBACKEND_RequestRelease(requests[i], TRITONSERVER_REQUEST_RELEASE_ALL);
  }
  if (outcome != NULL) TRITONSERVER_ErrorDelete(outcome);
  return NULL;
}
