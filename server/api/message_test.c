/* Tests of TRITONSERVER_Message and api_message_new_take. Main thread. */
#include "server/api/message.h"

#include <stdlib.h>
#include <string.h>

#include "server/api/error.h"
#include "test/unit/unit.h"

static void serialized_json_is_copied(void) {
  char json[] = "{\"name\":\"simple\",\"versions\":[\"1\"]}";
  TRITONSERVER_Message *m = NULL;
  REQUIRE(TRITONSERVER_MessageNewFromSerializedJson(&m, json, strlen(json)) == NULL);
  json[2] = 'X';
  const char *base = NULL;
  size_t size = 0;
  REQUIRE(TRITONSERVER_MessageSerializeToJson(m, &base, &size) == NULL);
  CHECK_EQ_U64(size, strlen(json));
  CHECK(memcmp(base, "{\"name\":\"simple\",\"versions\":[\"1\"]}", size) == 0);
  CHECK(base != json);
  /* Not promised by the API, but callers rely on it as with Triton. */
  CHECK(base[size] == '\0');
  /* The same buffer each time: it belongs to the message. */
  const char *again = NULL;
  REQUIRE(TRITONSERVER_MessageSerializeToJson(m, &again, &size) == NULL);
  CHECK(again == base);
  CHECK(TRITONSERVER_MessageDelete(m) == NULL);
}

/* Triton does not parse the JSON on the way in; neither do we. */
static void json_is_not_validated(void) {
  const char *not_json = "{this is not json";
  TRITONSERVER_Message *m = NULL;
  REQUIRE(TRITONSERVER_MessageNewFromSerializedJson(&m, not_json, strlen(not_json)) ==
          NULL);
  const char *base;
  size_t size;
  REQUIRE(TRITONSERVER_MessageSerializeToJson(m, &base, &size) == NULL);
  CHECK_STREQ(base, not_json);
  TRITONSERVER_MessageDelete(m);
}

/* byte_size bounds the copy: embedded NULs and no terminator in the source. */
static void byte_size_is_exact(void) {
  const char src[6] = {'{', '}', '\0', 'a', 'b', 'c'};
  TRITONSERVER_Message *m = NULL;
  REQUIRE(TRITONSERVER_MessageNewFromSerializedJson(&m, src, 4) == NULL);
  const char *base;
  size_t size;
  TRITONSERVER_MessageSerializeToJson(m, &base, &size);
  CHECK_EQ_U64(size, 4);
  CHECK(memcmp(base, src, 4) == 0 && base[4] == '\0');
  TRITONSERVER_MessageDelete(m);

  REQUIRE(TRITONSERVER_MessageNewFromSerializedJson(&m, NULL, 0) == NULL);
  TRITONSERVER_MessageSerializeToJson(m, &base, &size);
  CHECK_EQ_U64(size, 0);
  CHECK_STREQ(base, "");
  TRITONSERVER_MessageDelete(m);
}

static void take_adopts_the_buffer(void) {
  const char *text = "{\"ready\":true}";
  size_t len = strlen(text);
  char *json = malloc(len); /* no room for a NUL: the message adds one */
  memcpy(json, text, len);
  TRITONSERVER_Message *m = api_message_new_take(json, len);
  const char *base;
  size_t size;
  REQUIRE(TRITONSERVER_MessageSerializeToJson(m, &base, &size) == NULL);
  CHECK_EQ_U64(size, len);
  CHECK_STREQ(base, text);
  TRITONSERVER_MessageDelete(m); /* frees json: LeakSanitizer checks */
}

static void bad_arguments_fail(void) {
  TRITONSERVER_Error *err = TRITONSERVER_MessageNewFromSerializedJson(NULL, "{}", 2);
  CHECK(err != NULL && TRITONSERVER_ErrorCode(err) == TRITONSERVER_ERROR_INVALID_ARG);
  TRITONSERVER_ErrorDelete(err);
  TRITONSERVER_Message *m = NULL;
  err = TRITONSERVER_MessageNewFromSerializedJson(&m, NULL, 5);
  CHECK(err != NULL && TRITONSERVER_ErrorCode(err) == TRITONSERVER_ERROR_INVALID_ARG);
  TRITONSERVER_ErrorDelete(err);
  const char *base;
  size_t size;
  err = TRITONSERVER_MessageSerializeToJson(NULL, &base, &size);
  CHECK(err != NULL);
  TRITONSERVER_ErrorDelete(err);
  CHECK(TRITONSERVER_MessageDelete(NULL) == NULL);
}

UNIT_MAIN("api_message", UNIT_CASE(serialized_json_is_copied),
          UNIT_CASE(json_is_not_validated), UNIT_CASE(byte_size_is_exact),
          UNIT_CASE(take_adopts_the_buffer), UNIT_CASE(bad_arguments_fail))
