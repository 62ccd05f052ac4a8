/* Fuzz target of the HTTP repository bodies (server/views/http_views.h):
 * the first byte picks the endpoint, the rest is the body.
 *  - load: srv_http_load_parse for model "m", then what its override gives
 *    (fuzz_load_override_check) and the config JSON as loading takes it;
 *    or the error a client reads, naming the model, and nothing kept.
 *  - unload: srv_http_unload_parse; a boolean, or the error.
 * Single-threaded (libFuzzer or fuzz_driver.c). */
#include <string.h>

#include "server/views/http_views.h"
#include "test/fuzz/fuzz.h"
#include "test/fuzz/fuzz_props.h"

static void load_run(const char *body, size_t len, upb_Arena *a) {
  srv_load_override_t o;
  int http = 0;
  srv_status_t *st =
      srv_http_load_parse(upb_StringView_FromString("m"), body, len, a, &o, &http);
  if (st != NULL) {
    FUZZ_CHECK(http >= 400 && http < 600);
    FUZZ_CHECK(o.config_json == NULL && o.files == NULL && o.file_count == 0);
    fuzz_status_check(st, NULL);
    return;
  }
  FUZZ_CHECK(http == 200);
  fuzz_load_override_check(&o);
  if (o.config_json != NULL)
    fuzz_config_override_check("m", o.config_json, o.config_json_len);
}

static void unload_run(const char *body, size_t len) {
  bool ud = true;
  int http = 0;
  srv_status_t *st =
      srv_http_unload_parse(upb_StringView_FromString("m"), body, len, &ud, &http);
  if (st != NULL) {
    FUZZ_CHECK(!ud && http == 400);
    fuzz_status_check(st, NULL);
  } else {
    FUZZ_CHECK(http == 200);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  upb_Arena *a = upb_Arena_New();
  FUZZ_CHECK(a != NULL);
  if (data[0] % 2 == 0)
    load_run((const char *)data + 1, size - 1, a);
  else
    unload_run((const char *)data + 1, size - 1);
  upb_Arena_Free(a);
  return 0;
}
