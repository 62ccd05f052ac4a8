/* Fuzz target of the text-format parser (server/config/pbtxt.h): any bytes
 * as inference.ModelConfig and as nereid.test.AllTypes (recursive, every
 * scalar type). Checks that errors are well-formed and that an accepted
 * message survives upb's text encoder and our own reparse (round_trip.h).
 * Single-threaded (libFuzzer or fuzz_driver.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "all_types.upbdefs.h"
#include "model_config.upbdefs.h"
#include "server/config/pbtxt.h"
#include "server/config/round_trip.h"
#include "test/fuzz/fuzz.h"
#include "upb/reflection.h"

#define FUZZ_CHECK(cond)                                                          \
  do {                                                                            \
    if (!(cond)) {                                                                \
      fprintf(stderr, "%s:%d: property failed: %s\n", __FILE__, __LINE__, #cond); \
      abort();                                                                    \
    }                                                                             \
  } while (0)

static bool well_formed(const char *err) {
  static const char prefix[] = "fuzz:";
  if (strncmp(err, prefix, sizeof prefix - 1) != 0) return false;
  char *end;
  unsigned long line = strtoul(err + sizeof prefix - 1, &end, 10);
  if (line == 0 || *end != ':') return false;
  unsigned long col = strtoul(end + 1, &end, 10);
  return col > 0 && end[0] == ':' && end[1] == ' ' && end[2] != '\0';
}

static void run(const uint8_t *data, size_t size, const upb_MessageDef *m) {
  upb_Arena *a = upb_Arena_New();
  upb_Message *msg = upb_Message_New(m, a);
  char err[512];
  if (cfg_pbtxt_parse((const char *)data, size, "fuzz", msg, m, a, err, sizeof err)) {
    char why[4096];
    cfg_round_trip_t r = cfg_round_trip_check(msg, m, a, why, sizeof why);
    if (r != CFG_ROUND_TRIP_OK && r != CFG_ROUND_TRIP_SKIPPED)
      fprintf(stderr, "%s\n", why);
    FUZZ_CHECK(r == CFG_ROUND_TRIP_OK || r == CFG_ROUND_TRIP_SKIPPED);
  } else {
    FUZZ_CHECK(well_formed(err));
  }
  upb_Arena_Free(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static upb_DefPool *pool;
  static const upb_MessageDef *model_config, *all_types;
  if (pool == NULL) {
    pool = upb_DefPool_New();
    model_config = inference_ModelConfig_getmsgdef(pool);
    all_types = nereid_test_AllTypes_getmsgdef(pool);
  }
  run(data, size, model_config);
  run(data, size, all_types);
  return 0;
}
