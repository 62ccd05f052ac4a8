/* What the embedding API's tests share: checks of a TRITONSERVER_Error's
 * code and text that print what came instead. The test's main thread. */
#ifndef NEREID_SERVER_EMBED_EMBED_TESTING_H
#define NEREID_SERVER_EMBED_EMBED_TESTING_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "test/unit/unit.h"
#include "triton/core/tritonserver.h"

/* True when err is NULL; else prints and frees it. */
static inline bool embed_ok(TRITONSERVER_Error *err) {
  if (err == NULL) return true;
  fprintf(stderr, "  unexpected error %s: %s\n", TRITONSERVER_ErrorCodeString(err),
          TRITONSERVER_ErrorMessage(err));
  TRITONSERVER_ErrorDelete(err);
  return false;
}

/* True when err has `code` and its message holds `text`; frees it. */
static inline bool embed_fails(TRITONSERVER_Error *err, TRITONSERVER_Error_Code code,
                               const char *text) {
  if (err == NULL) {
    fprintf(stderr, "  no error where %s was expected\n", text);
    return false;
  }
  bool ok = TRITONSERVER_ErrorCode(err) == code &&
            strstr(TRITONSERVER_ErrorMessage(err), text) != NULL;
  if (!ok)
    fprintf(stderr, "  got %s: '%s', expected code %d with '%s'\n",
            TRITONSERVER_ErrorCodeString(err), TRITONSERVER_ErrorMessage(err), (int)code,
            text);
  TRITONSERVER_ErrorDelete(err);
  return ok;
}

#define OK(call) CHECK(embed_ok(call))
#define FAILS(call, code, text) CHECK(embed_fails((call), TRITONSERVER_ERROR_##code, text))

#endif
