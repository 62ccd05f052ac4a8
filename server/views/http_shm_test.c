/* The shared-memory endpoints' answers (srv_http_shm_status, _register,
 * _unregister) over a real region table and a POSIX shared-memory object
 * made here: the JSON of a status, Triton's texts and HTTP codes for
 * missing fields, wrong types, bad base64, names without a region, and the
 * table's own refusals passed through. One thread. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "server/core/core.h"
#include "server/views/http_views.h"
#include "test/unit/unit.h"

static upb_StringView sv(const char *s) { return upb_StringView_FromString(s); }

/* A POSIX shared-memory object of `size` bytes, named after the process. */
static void object_make(char *key, size_t n, size_t size) {
  snprintf(key, n, "/nereid_http_shm_test_%d", (int)getpid());
  int fd = shm_open(key, O_RDWR | O_CREAT | O_TRUNC, 0600);
  REQUIRE(fd >= 0);
  REQUIRE(ftruncate(fd, (off_t)size) == 0);
  close(fd);
}

/* Registers `body` as system region `name`; checks the code and, for an
 * error, the body's text. */
static void expect_register(srv_shm_t *shm, srv_shm_kind_t kind, const char *name,
                            const char *body, int code, const char *error_body) {
  srv_http_answer_t a;
  srv_http_shm_register(shm, kind, sv(name), body, strlen(body), &a);
  CHECK_EQ_U64(a.code, code);
  if (error_body == NULL) {
    CHECK(a.body == NULL && a.status == NULL);
  } else {
    REQUIRE(a.body != NULL);
    CHECK_STREQ(a.body, error_body);
  }
  srv_http_answer_free(&a);
}

/* The same for an error whose body holds `needle` (the table's texts go
 * on with details). */
static void expect_register_has(srv_shm_t *shm, const char *name, const char *body,
                                int code, const char *needle) {
  srv_http_answer_t a;
  srv_http_shm_register(shm, SRV_SHM_SYSTEM, sv(name), body, strlen(body), &a);
  CHECK_EQ_U64(a.code, code);
  REQUIRE(a.body != NULL);
  CHECK(strstr(a.body, needle) != NULL);
  srv_http_answer_free(&a);
}

static void expect_status(srv_shm_t *shm, srv_shm_kind_t kind, const char *name, int code,
                          const char *body) {
  srv_http_answer_t a;
  srv_http_shm_status(shm, kind, sv(name), &a);
  CHECK_EQ_U64(a.code, code);
  REQUIRE(a.body != NULL);
  CHECK_STREQ(a.body, body);
  srv_http_answer_free(&a);
}

static void system_regions(void) {
  char key[64], body[256];
  object_make(key, sizeof key, 4096);
  srv_shm_t *shm = srv_shm_new(true);
  expect_status(shm, SRV_SHM_SYSTEM, "", 200, "[]");
  snprintf(body, sizeof body, "{\"key\": \"%s\", \"offset\": 64, \"byte_size\": 128}",
           key);
  expect_register(shm, SRV_SHM_SYSTEM, "b", body, 200, NULL);
  snprintf(body, sizeof body, "{\"key\": \"%s\", \"byte_size\": 64}", key);
  expect_register(shm, SRV_SHM_SYSTEM, "a", body, 200, NULL);
  expect_register(shm, SRV_SHM_SYSTEM, "a", body, 400,
                  "{\"error\":\"shared memory region 'a' already in manager\"}");
  char want[512];
  snprintf(want, sizeof want,
           "[{\"name\":\"a\",\"key\":\"%s\",\"offset\":0,\"byte_size\":64},"
           "{\"name\":\"b\",\"key\":\"%s\",\"offset\":64,\"byte_size\":128}]",
           key, key);
  expect_status(shm, SRV_SHM_SYSTEM, "", 200, want);
  snprintf(want, sizeof want,
           "[{\"name\":\"b\",\"key\":\"%s\",\"offset\":64,\"byte_size\":128}]", key);
  expect_status(shm, SRV_SHM_SYSTEM, "b", 200, want);
  expect_status(shm, SRV_SHM_SYSTEM, "c", 404,
                "{\"error\":\"Unable to find system shared memory region: 'c'\"}");
  expect_status(shm, SRV_SHM_CUDA, "", 200, "[]");
  expect_status(
      shm, SRV_SHM_CUDA, "a", 404,
      "{\"error\":\"The region named 'a' is registered as system shared memory, "
      "not CUDA shared memory\"}");
  srv_http_answer_t a;
  srv_http_shm_unregister(shm, SRV_SHM_SYSTEM, sv("a"), &a);
  CHECK(a.code == 200 && a.body == NULL);
  srv_http_shm_unregister(shm, SRV_SHM_SYSTEM, sv("never"), &a);
  CHECK(a.code == 200 && a.body == NULL);
  srv_http_shm_unregister(shm, SRV_SHM_CUDA, sv(""), &a); /* system ones stay */
  expect_status(shm, SRV_SHM_SYSTEM, "", 200, want);
  srv_http_shm_unregister(shm, SRV_SHM_SYSTEM, sv(""), &a);
  expect_status(shm, SRV_SHM_SYSTEM, "", 200, "[]");
  srv_shm_free(shm);
  shm_unlink(key);
}

static void system_refusals(void) {
  char key[64], body[256];
  object_make(key, sizeof key, 4096);
  srv_shm_t *shm = srv_shm_new(true);
  const srv_shm_kind_t S = SRV_SHM_SYSTEM;
  expect_register(shm, S, "", "{}", 400,
                  "{\"error\":\"'region name' is necessary to register system shared "
                  "memory region\"}");
  expect_register(shm, S, "r", "", 400,
                  "{\"error\":\"Shared memory register request has no 'key' field\"}");
  expect_register(shm, S, "r", "{\"byte_size\": 8}", 400,
                  "{\"error\":\"Shared memory register request has no 'key' field\"}");
  expect_register(shm, S, "r", "{\"key\": \"/x\"}", 400,
                  "{\"error\":\"Shared memory register request has no 'byte_size' "
                  "field\"}");
  expect_register(shm, S, "r", "{\"key\": 7, \"byte_size\": 8}", 400,
                  "{\"error\":\"Unable to parse 'key': attempt to access JSON non-string "
                  "as string\"}");
  const char *uint_text =
      "attempt to access JSON non-unsigned-integer as unsigned-integer\"}";
  char want[256];
  snprintf(want, sizeof want, "{\"error\":\"Unable to parse 'byte_size': %s", uint_text);
  expect_register(shm, S, "r", "{\"key\": \"/x\", \"byte_size\": -1}", 400, want);
  expect_register(shm, S, "r", "{\"key\": \"/x\", \"byte_size\": \"8\"}", 400, want);
  expect_register(shm, S, "r", "{\"key\": \"/x\", \"byte_size\": 8.5}", 400, want);
  snprintf(want, sizeof want, "{\"error\":\"Unable to parse 'offset': %s", uint_text);
  expect_register(shm, S, "r", "{\"key\": \"/x\", \"offset\": null, \"byte_size\": 8}",
                  400, want);
  expect_register(shm, S, "r", "[1]", 400,
                  "{\"error\":\"the request JSON must be an object\"}");
  expect_register(
      shm, S, "r", "{\"key\": \"/x\", \"key\": \"/y\", \"byte_size\": 8}", 400,
      "{\"error\":\"failed to parse the request JSON buffer: duplicate object "
      "key near '\\\"key\\\"' at line 1 column 19\"}");
  /* The table's own checks come through with their codes. */
  snprintf(body, sizeof body, "{\"key\": \"%s\", \"byte_size\": 4097}", key);
  expect_register_has(shm, "r", body, 400,
                      "{\"error\":\"failed to register shared memory region 'r': invalid "
                      "args");
  expect_register_has(shm, "r", "{\"key\": \"/nereid-no-such-object\", \"byte_size\": 8}",
                      500,
                      "{\"error\":\"Unable to open shared memory region: "
                      "'/nereid-no-such-object'");
  char name[SRV_SHM_NAME_MAX + 2];
  memset(name, 'n', sizeof name - 1);
  name[sizeof name - 1] = '\0';
  snprintf(body, sizeof body, "{\"key\": \"%s\", \"byte_size\": 8}", key);
  expect_register_has(shm, name, body, 400, "longer than the limit of 1024");
  expect_status(shm, S, "", 200, "[]");
  srv_shm_free(shm);
  shm_unlink(key);
}

static void cuda_refusals(void) {
  srv_shm_t *shm = srv_shm_new(true);
  const srv_shm_kind_t C = SRV_SHM_CUDA;
  expect_register(
      shm, C, "", "{}", 400,
      "{\"error\":\"'region name' is necessary to register cuda shared memory "
      "region\"}");
  expect_register(shm, C, "c", "{\"device_id\": 0, \"byte_size\": 8}", 400,
                  "{\"error\":\"Shared memory register request has no 'raw_handle' "
                  "field\"}");
  expect_register(shm, C, "c",
                  "{\"raw_handle\": \"AAAA\", \"device_id\": 0, \"byte_size\": 8}", 400,
                  "{\"error\":\"Unable to parse 'raw_handle': attempt to access JSON "
                  "non-object as object\"}");
  expect_register(shm, C, "c",
                  "{\"raw_handle\": {\"b64\": 1}, \"device_id\": 0, "
                  "\"byte_size\": 8}",
                  400,
                  "{\"error\":\"Unable to parse 'b64': attempt to access JSON non-string "
                  "as string\"}");
  expect_register(shm, C, "c", "{\"raw_handle\": {\"b64\": \"AAAA\"}, \"device_id\": 0}",
                  400,
                  "{\"error\":\"Shared memory register request has no 'byte_size' "
                  "field\"}");
  expect_register(shm, C, "c", "{\"raw_handle\": {\"b64\": \"AAAA\"}, \"byte_size\": 8}",
                  400,
                  "{\"error\":\"Shared memory register request has no 'device_id' "
                  "field\"}");
  const char *bad_handle =
      "{\"error\":\"'raw_handle' must be a valid base64 encoded cudaIpcMemHandle_t\"}";
  /* Not base64; base64 of 3 bytes; far too long. */
  expect_register(
      shm, C, "c",
      "{\"raw_handle\": {\"b64\": \"A*==\"}, \"device_id\": 0, \"byte_size\": 8}", 400,
      bad_handle);
  expect_register(
      shm, C, "c",
      "{\"raw_handle\": {\"b64\": \"AAAA\"}, \"device_id\": 0, \"byte_size\": 8}", 400,
      bad_handle);
  char body[1024];
  char b64[300];
  memset(b64, 'A', sizeof b64 - 1);
  b64[sizeof b64 - 1] = '\0';
  snprintf(body, sizeof body,
           "{\"raw_handle\": {\"b64\": \"%s\"}, \"device_id\": 0, \"byte_size\": 8}",
           b64);
  expect_register(shm, C, "c", body, 400, bad_handle);
  /* 64 zero bytes: a handle of the right size, which no CUDA here opens. */
  char zeros[89];
  memset(zeros, 'A', 86);
  memcpy(zeros + 86, "==", 3);
  snprintf(body, sizeof body,
           "{\"raw_handle\": {\"b64\": \"%s\"}, \"device_id\": 0, \"byte_size\": 8}",
           zeros);
  srv_http_answer_t a;
  srv_http_shm_register(shm, C, sv("c"), body, strlen(body), &a);
  CHECK(a.code != 200 && a.body != NULL && strstr(a.body, "cudaIpcMemHandle_t") == NULL);
  srv_http_answer_free(&a);
  expect_status(shm, C, "", 200, "[]");
  srv_shm_free(shm);
}

static void disabled(void) {
  srv_shm_t *shm = srv_shm_new(false);
  const char *text =
      "{\"error\":\"Client shared memory is disabled. Start the server with "
      "'--allow-client-shm=true' to enable.\"}";
  expect_register(shm, SRV_SHM_SYSTEM, "r", "{\"key\": \"/x\", \"byte_size\": 8}", 503,
                  text);
  expect_status(shm, SRV_SHM_SYSTEM, "", 503, text);
  expect_status(shm, SRV_SHM_CUDA, "x", 503, text);
  srv_http_answer_t a;
  srv_http_shm_unregister(shm, SRV_SHM_SYSTEM, sv(""), &a);
  CHECK_EQ_U64(a.code, 503);
  CHECK_STREQ(a.body, text);
  srv_http_answer_free(&a);
  srv_shm_free(shm);
}

UNIT_MAIN("http_shm", UNIT_CASE(system_regions), UNIT_CASE(system_refusals),
          UNIT_CASE(cuda_refusals), UNIT_CASE(disabled))
