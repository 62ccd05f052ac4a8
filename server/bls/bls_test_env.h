/* Test helper (not for the server) shared by the in-process API's tests
 * (bls_*_test.c): a real actor runtime and core on a temporary repository
 * of the example models, a response allocator, and one request in flight
 * with what came back for it. The main thread sets up and tears down;
 * callbacks arrive on the runtime's workers. */
#ifndef NEREID_SERVER_BLS_BLS_TEST_ENV_H
#define NEREID_SERVER_BLS_BLS_TEST_ENV_H

#include <limits.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "server/bls/bls.h"
#include "server/core/server.h"
#include "test/unit/unit.h"

#define OK(call) CHECK((call) == NULL)
#define FINAL TRITONSERVER_RESPONSE_COMPLETE_FINAL

/** The server the cases run against; set up by blt_main. */
typedef struct {
  srv_options_t opt;
  srv_server_t srv;
  char repo[PATH_MAX];
  TRITONSERVER_ResponseAllocator *allocator; /* host buffers, tagged with their name */
} blt_env_t;

extern blt_env_t blt_env;

/** Output buffers the allocator handed out and not yet released, and its
 *  start callbacks (any thread). */
extern atomic_int blt_live_buffers, blt_starts;

/** Starts the server on a temporary repository of simple, simple_string,
 *  repeat_int32, simple_sequence_state and simple_state (simple with an
 *  implicit state), runs the cases, stops the server. Returns the exit
 *  status. The main thread. */
int blt_main(const char *suite, const unit_case_t *cases, size_t count);

TRITONSERVER_Server *blt_server(void);

/** The loaded model `name` (latest version), or NULL; the registry keeps
 *  its reference while the test runs. */
srv_model_t *blt_model(const char *name);

/** The model's successful inference count. */
uint64_t blt_success_count(srv_model_t *m);

/** Expects `err` with `code` and a message containing `text`; frees it. */
void blt_error_expect(TRITONSERVER_Error *err, TRITONSERVER_Error_Code code,
                      const char *text);

/** One request in flight and what came back for it. */
typedef struct {
  sem_t done; /* posted by the final response and by the release */
  atomic_int responses, finals, releases;
  TRITONSERVER_InferenceResponse *resp[8];
  uint32_t flags[8];
  bool delete_request; /* the release callback deletes the request */
  int32_t in0[16], in1[16];
} blt_call_t;

/** The callbacks to give a request whose userp is a blt_call_t. */
void blt_on_response(TRITONSERVER_InferenceResponse *resp, const uint32_t flags,
                     void *userp);
void blt_on_release(TRITONSERVER_InferenceRequest *request, const uint32_t flags,
                    void *userp);

/** Resets c; its inputs are made from `seed`. */
void blt_call_init(blt_call_t *c, int32_t seed);

/** Waits for the final response and the release; false after 10 s (times
 *  the sanitizer slowdown). */
bool blt_call_wait(blt_call_t *c);

/** Deletes the responses c kept. */
void blt_call_free(blt_call_t *c);

/** A request for `simple` ([1,16] INT32 inputs) with c's data; INPUT0 in
 *  two pieces, so that the backend sees two buffers. */
TRITONSERVER_InferenceRequest *blt_simple_request(blt_call_t *c, const char *id);

/** One output of a response, as TRITONSERVER_InferenceResponseOutput
 *  gives it. */
typedef struct {
  const char *name;
  TRITONSERVER_DataType datatype;
  const int64_t *shape;
  uint64_t dims;
  const void *base;
  size_t size;
  TRITONSERVER_MemoryType memory_type;
  int64_t memory_type_id;
  void *userp; /* the allocator's buffer_userp */
} blt_output_t;

/** Output `index` of resp into *o (a failed check when it has none). */
void blt_output_get(TRITONSERVER_InferenceResponse *resp, uint32_t index,
                    blt_output_t *o);

/** Checks one output of a `simple` response: the sum or the difference. */
void blt_output_check(TRITONSERVER_InferenceResponse *resp, uint32_t index,
                      const char *want_name, const blt_call_t *c, bool sub);

#endif
