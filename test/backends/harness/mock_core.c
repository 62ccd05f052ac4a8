/* Mock server: errors, messages, logging, version, enum strings and backend
 * attributes. Any thread (errors and messages are immutable once made). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test/backends/harness/mock_server.h"

TRITONSERVER_Error *TRITONSERVER_ErrorNew(TRITONSERVER_Error_Code code, const char *msg) {
  TRITONSERVER_Error *e = calloc(1, sizeof *e);
  e->code = code;
  e->msg = strdup(msg ? msg : "");
  return e;
}

void TRITONSERVER_ErrorDelete(TRITONSERVER_Error *error) {
  if (error == NULL) return;
  free(error->msg);
  free(error);
}

TRITONSERVER_Error_Code TRITONSERVER_ErrorCode(TRITONSERVER_Error *error) {
  return error->code;
}

const char *TRITONSERVER_ErrorMessage(TRITONSERVER_Error *error) { return error->msg; }

const char *TRITONSERVER_ErrorCodeString(TRITONSERVER_Error *error) {
  static const char *names[] = {"Unknown",          "Internal",    "Not found",
                                "Invalid argument", "Unavailable", "Not supported",
                                "Already exists",   "Cancelled"};
  return (unsigned)error->code < 8 ? names[error->code] : "Unknown";
}

const char *mock_take_error(TRITONSERVER_Error *err) {
  static _Thread_local char buf[512];
  buf[0] = '\0';
  if (err != NULL) snprintf(buf, sizeof buf, "%s", err->msg);
  TRITONSERVER_ErrorDelete(err);
  return buf;
}

TRITONSERVER_Error *TRITONSERVER_MessageSerializeToJson(TRITONSERVER_Message *message,
                                                        const char **base,
                                                        size_t *byte_size) {
  *base = message->json;
  *byte_size = message->len;
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_MessageDelete(TRITONSERVER_Message *message) {
  free(message->json);
  free(message);
  return NULL;
}

/* Not NUL-terminated on purpose: the API does not promise a terminator. */
TRITONSERVER_Message *mock_message_new(const char *json) {
  TRITONSERVER_Message *m = calloc(1, sizeof *m);
  m->len = strlen(json);
  m->json = malloc(m->len + 1);
  memcpy(m->json, json, m->len);
  m->json[m->len] = '#';
  return m;
}

TRITONSERVER_Error *TRITONSERVER_LogMessage(TRITONSERVER_LogLevel level,
                                            const char *filename, const int line,
                                            const char *msg) {
  if (getenv("MOCK_QUIET") == NULL) {
    fprintf(stderr, "  [backend log %d] %s:%d: %s\n", (int)level, filename, line, msg);
  }
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ApiVersion(uint32_t *major, uint32_t *minor) {
  *major = TRITONBACKEND_API_VERSION_MAJOR;
  *minor = TRITONBACKEND_API_VERSION_MINOR;
  return NULL;
}

const char *TRITONSERVER_InstanceGroupKindString(TRITONSERVER_InstanceGroupKind kind) {
  switch (kind) {
    case TRITONSERVER_INSTANCEGROUPKIND_AUTO:
      return "AUTO";
    case TRITONSERVER_INSTANCEGROUPKIND_CPU:
      return "CPU";
    case TRITONSERVER_INSTANCEGROUPKIND_GPU:
      return "GPU";
    case TRITONSERVER_INSTANCEGROUPKIND_MODEL:
      return "MODEL";
  }
  return "<invalid>";
}

/* The attribute object is the backend itself in this mock. */
TRITONSERVER_Error *TRITONBACKEND_BackendAttributeAddPreferredInstanceGroup(
    TRITONBACKEND_BackendAttribute *attributes, const TRITONSERVER_InstanceGroupKind kind,
    const uint64_t count, const uint64_t *device_ids, const uint64_t id_count) {
  ((TRITONBACKEND_Backend *)attributes)->preferred_kind = (int)kind;
  return NULL;
}
