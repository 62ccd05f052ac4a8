/* TRITONSERVER_Message (see message.h). Any thread; a message is immutable
 * once made, so readers need no lock. */
#include "server/api/message.h"

#include <stdlib.h>
#include <string.h>

#include "server/api/error.h"
#include "server/api/log.h"

/* The text always carries a NUL after its last byte: the API promises only
 * base + byte_size, but callers often treat base as a C string, and Triton's
 * std::string-backed messages let them. */
struct TRITONSERVER_Message {
  char *json;
  size_t len;
};

TRITONSERVER_Message *api_message_new_take(char *json, size_t len) {
  char *text = realloc(json, len + 1);
  TRITONSERVER_Message *m = malloc(sizeof *m);
  if (text == NULL || m == NULL)
    API_FATAL("out of memory making a %zu-byte message", len);
  text[len] = '\0';
  m->json = text;
  m->len = len;
  return m;
}

/* ---- Exported API --------------------------------------------------------- */

TRITONSERVER_Error *TRITONSERVER_MessageNewFromSerializedJson(
    TRITONSERVER_Message **message, const char *base, size_t byte_size) {
  if (message == NULL) {
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG, "message out-parameter is NULL");
  }
  if (base == NULL && byte_size != 0) {
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "serialized JSON is NULL but byte_size is %zu", byte_size);
  }
  /* Copied, not parsed: Triton accepts any bytes here and so do we. */
  char *copy = malloc(byte_size + 1);
  if (copy == NULL) API_FATAL("out of memory copying a %zu-byte message", byte_size);
  if (byte_size != 0) memcpy(copy, base, byte_size);
  *message = api_message_new_take(copy, byte_size);
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_MessageDelete(TRITONSERVER_Message *message) {
  if (message != NULL) {
    free(message->json);
    free(message);
  }
  return NULL;
}

TRITONSERVER_Error *TRITONSERVER_MessageSerializeToJson(TRITONSERVER_Message *message,
                                                        const char **base,
                                                        size_t *byte_size) {
  if (message == NULL || base == NULL || byte_size == NULL) {
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "message, base and byte_size must not be NULL");
  }
  *base = message->json;
  *byte_size = message->len;
  return NULL;
}
