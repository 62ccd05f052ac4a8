/* What the JSON bodies of the HTTP endpoints share (see http_body.h): the
 * body as a JSON object, and base64 through OpenSSL. Any thread. */
#include "server/views/http_body.h"

#include <openssl/evp.h>

#include "server/common/log.h"
#include "server/common/memory.h"

/* OpenSSL's decoder takes an int length: the text goes in chunks. */
enum { BASE64_CHUNK = 1 << 20 };

srv_status_t *srv_http_body_parse(const char *body, size_t len, json_t **out) {
  *out = NULL;
  if (len == 0) return NULL;
  json_error_t err;
  /* A key given twice is refused: which "file:" would win is nobody's
   * guess. jansson refuses NUL bytes in keys and strings by default. */
  json_t *j = json_loadb(body, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &err);
  if (j == NULL)
    return srv_status_new(
        GRPC_STATUS_INVALID_ARGUMENT,
        "failed to parse the request JSON buffer: %s at line %d column %d", err.text,
        err.line, err.column);
  if (!json_is_object(j)) {
    json_decref(j);
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "the request JSON must be an object");
  }
  *out = j;
  return NULL;
}

bool srv_http_base64_decode(const char *s, size_t n, upb_Arena *a, upb_StringView *out) {
  unsigned char *buf = srv_arena_alloc(a, n / 4 * 3 + 3);
  EVP_ENCODE_CTX *c = EVP_ENCODE_CTX_new();
  if (c == NULL) SRV_FATAL("out of memory");
  EVP_DecodeInit(c);
  size_t used = 0;
  bool ok = true;
  for (size_t i = 0; ok && i < n; i += BASE64_CHUNK) {
    int chunk = n - i > BASE64_CHUNK ? BASE64_CHUNK : (int)(n - i);
    int got = 0;
    ok = EVP_DecodeUpdate(c, buf + used, &got, (const unsigned char *)s + i, chunk) >= 0;
    used += (size_t)got;
  }
  int got = 0;
  ok = ok && EVP_DecodeFinal(c, buf + used, &got) >= 0;
  used += (size_t)got;
  EVP_ENCODE_CTX_free(c);
  *out = upb_StringView_FromDataAndSize((const char *)buf, used);
  return ok;
}
