/* Tests of TRITONSERVER_Error and the api_error_* helpers. Main thread. */
#include "server/api/error.h"

#include <stdlib.h>
#include <string.h>

#include "test/unit/unit.h"

static void enum_values_match_triton(void) {
  CHECK_EQ_U64(TRITONSERVER_ERROR_UNKNOWN, 0);
  CHECK_EQ_U64(TRITONSERVER_ERROR_INTERNAL, 1);
  CHECK_EQ_U64(TRITONSERVER_ERROR_NOT_FOUND, 2);
  CHECK_EQ_U64(TRITONSERVER_ERROR_INVALID_ARG, 3);
  CHECK_EQ_U64(TRITONSERVER_ERROR_UNAVAILABLE, 4);
  CHECK_EQ_U64(TRITONSERVER_ERROR_UNSUPPORTED, 5);
  CHECK_EQ_U64(TRITONSERVER_ERROR_ALREADY_EXISTS, 6);
  CHECK_EQ_U64(TRITONSERVER_ERROR_CANCELLED, 7);
}

static void new_copies_message(void) {
  char msg[] = "model 'simple' is not ready";
  TRITONSERVER_Error *err = TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_UNAVAILABLE, msg);
  REQUIRE(err != NULL);
  msg[0] = 'X';
  CHECK_STREQ(TRITONSERVER_ErrorMessage(err), "model 'simple' is not ready");
  CHECK_EQ_U64(TRITONSERVER_ErrorCode(err), TRITONSERVER_ERROR_UNAVAILABLE);
  CHECK_STREQ(TRITONSERVER_ErrorCodeString(err), "Unavailable");
  TRITONSERVER_ErrorDelete(err);
}

static void code_strings_are_tritons(void) {
  static const struct {
    TRITONSERVER_Error_Code code;
    const char *name;
  } cases[] = {
      {TRITONSERVER_ERROR_UNKNOWN, "Unknown"},
      {TRITONSERVER_ERROR_INTERNAL, "Internal"},
      {TRITONSERVER_ERROR_NOT_FOUND, "Not found"},
      {TRITONSERVER_ERROR_INVALID_ARG, "Invalid argument"},
      {TRITONSERVER_ERROR_UNAVAILABLE, "Unavailable"},
      {TRITONSERVER_ERROR_UNSUPPORTED, "Unsupported"},
      {TRITONSERVER_ERROR_ALREADY_EXISTS, "Already exists"},
      {TRITONSERVER_ERROR_CANCELLED, "Cancelled"},
      {(TRITONSERVER_Error_Code)42, "Unknown"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    TRITONSERVER_Error *err = TRITONSERVER_ErrorNew(cases[i].code, "m");
    CHECK_STREQ(TRITONSERVER_ErrorCodeString(err), cases[i].name);
    CHECK_EQ_U64(TRITONSERVER_ErrorCode(err), cases[i].code);
    CHECK_STREQ(api_error_code_string(cases[i].code), cases[i].name);
    TRITONSERVER_ErrorDelete(err);
  }
}

static void grpc_codes_follow_tritons_frontend(void) {
  CHECK_EQ_U64(api_error_grpc_code(TRITONSERVER_ERROR_UNKNOWN), GRPC_STATUS_UNKNOWN);
  CHECK_EQ_U64(api_error_grpc_code(TRITONSERVER_ERROR_INTERNAL), GRPC_STATUS_INTERNAL);
  CHECK_EQ_U64(api_error_grpc_code(TRITONSERVER_ERROR_NOT_FOUND), GRPC_STATUS_NOT_FOUND);
  CHECK_EQ_U64(api_error_grpc_code(TRITONSERVER_ERROR_INVALID_ARG),
               GRPC_STATUS_INVALID_ARGUMENT);
  CHECK_EQ_U64(api_error_grpc_code(TRITONSERVER_ERROR_UNAVAILABLE),
               GRPC_STATUS_UNAVAILABLE);
  CHECK_EQ_U64(api_error_grpc_code(TRITONSERVER_ERROR_UNSUPPORTED),
               GRPC_STATUS_UNIMPLEMENTED);
  CHECK_EQ_U64(api_error_grpc_code(TRITONSERVER_ERROR_ALREADY_EXISTS),
               GRPC_STATUS_ALREADY_EXISTS);
  CHECK_EQ_U64(api_error_grpc_code(TRITONSERVER_ERROR_CANCELLED), GRPC_STATUS_CANCELLED);
  CHECK_EQ_U64(api_error_grpc_code((TRITONSERVER_Error_Code)99), GRPC_STATUS_UNKNOWN);
}

static void printf_style_helper(void) {
  TRITONSERVER_Error *err =
      api_error_new(TRITONSERVER_ERROR_INVALID_ARG, "input '%s' has %d dims, expected %d",
                    "INPUT0", 3, 2);
  CHECK_STREQ(TRITONSERVER_ErrorMessage(err), "input 'INPUT0' has 3 dims, expected 2");
  CHECK_EQ_U64(TRITONSERVER_ErrorCode(err), TRITONSERVER_ERROR_INVALID_ARG);
  TRITONSERVER_ErrorDelete(err);
}

/* Longer than the helper's stack buffer: the second formatting pass. */
static void long_message_is_whole(void) {
  char big[5000];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  TRITONSERVER_Error *err = api_error_new(TRITONSERVER_ERROR_INTERNAL, "<%s>", big);
  const char *msg = TRITONSERVER_ErrorMessage(err);
  CHECK_EQ_U64(strlen(msg), sizeof big + 1);
  CHECK(msg[0] == '<' && msg[sizeof big] == '>' && msg[1] == 'x' &&
        msg[sizeof big - 1] == 'x');
  TRITONSERVER_ErrorDelete(err);

  TRITONSERVER_Error *copy = TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INTERNAL, big);
  CHECK_EQ_U64(strlen(TRITONSERVER_ErrorMessage(copy)), sizeof big - 1);
  TRITONSERVER_ErrorDelete(copy);
}

static void null_inputs_are_harmless(void) {
  TRITONSERVER_Error *err = TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INTERNAL, NULL);
  CHECK_STREQ(TRITONSERVER_ErrorMessage(err), "");
  TRITONSERVER_ErrorDelete(err);
  TRITONSERVER_ErrorDelete(NULL);
  CHECK_STREQ(TRITONSERVER_ErrorMessage(NULL), "");
  CHECK_STREQ(TRITONSERVER_ErrorCodeString(NULL), "OK");
  TRITONSERVER_Error *empty = api_error_new(TRITONSERVER_ERROR_NOT_FOUND, "%s", "");
  CHECK_STREQ(TRITONSERVER_ErrorMessage(empty), "");
  TRITONSERVER_ErrorDelete(empty);
}

UNIT_MAIN("api_error", UNIT_CASE(enum_values_match_triton), UNIT_CASE(new_copies_message),
          UNIT_CASE(code_strings_are_tritons),
          UNIT_CASE(grpc_codes_follow_tritons_frontend), UNIT_CASE(printf_style_helper),
          UNIT_CASE(long_message_is_whole), UNIT_CASE(null_inputs_are_harmless))
