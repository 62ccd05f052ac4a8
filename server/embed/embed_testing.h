/* What the embedding API's tests share: checks of a TRITONSERVER_Error's
 * code and text that print what came instead, and one inference request
 * sent through TRITONSERVER_ServerInferAsync with host buffers. The test's
 * main thread, except the callbacks, which run on the server's. */
#ifndef NEREID_SERVER_EMBED_EMBED_TESTING_H
#define NEREID_SERVER_EMBED_EMBED_TESTING_H

#include <semaphore.h>
#include <stdbool.h>
#include <stdint.h>

#include "test/unit/unit.h"
#include "triton/core/tritonserver.h"

/** True when err is NULL; else prints and frees it. */
bool embed_ok(TRITONSERVER_Error *err);

/** True when err has `code` and its message holds `text`; frees it. */
bool embed_fails(TRITONSERVER_Error *err, TRITONSERVER_Error_Code code, const char *text);

#define OK(call) CHECK(embed_ok(call))
#define FAILS(call, code, text) CHECK(embed_fails((call), TRITONSERVER_ERROR_##code, text))

/** <root>/<name>/config.pbtxt holding `config`, and <root>/<name>/1/;
 *  false when a step fails. */
bool embed_model_add(const char *root, const char *name, const char *config);

/** One request of INT32 inputs (shape [1, n]) and what came back. */
typedef struct {
  sem_t final, released;
  TRITONSERVER_Server *server;
  /* The response's error, if any (code and message). */
  bool failed;
  TRITONSERVER_Error_Code code;
  char message[512];
  /* Outputs by position in the response, copied (up to 16 values each). */
  char names[2][16];
  int32_t values[2][16];
  uint32_t output_count;
  /* What a blocking call (TRITONSERVER_ServerLoadModel) answered from the
   * response callback, which runs on a server thread. */
  bool callback_blocking_refused;
} embed_call_t;

/** Sends `model` (latest version) the inputs names[i] = data[i] (n values
 *  each) and returns at once; false (with a CHECK failure) when the send
 *  failed. */
bool embed_call_send(embed_call_t *c, TRITONSERVER_Server *s, const char *model,
                     const char *const *names, const int32_t *const *data, int inputs,
                     int n);

/** Waits for the final response and the release. */
void embed_call_wait(embed_call_t *c);

/** The output named `name`, or NULL. */
const int32_t *embed_call_output(const embed_call_t *c, const char *name);

#endif
