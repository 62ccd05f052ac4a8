/* What call.c relies on when it leaves a new call's slices and metadata
 * array as its memset made them: gRPC's empty slice and an initialised
 * metadata array are all zero bytes, so the gRPC that Nereid links makes
 * them the same way. One thread. */
#include <grpc/grpc.h>
#include <grpc/slice.h>
#include <stdbool.h>
#include <string.h>

#include "test/unit/unit.h"

static bool all_zero(const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++)
    if (b[i] != 0) return false;
  return true;
}

static void empty_slice_is_zeroed(void) {
  grpc_slice s;
  memset(&s, 0xa5, sizeof s);
  s = grpc_empty_slice();
  /* Padding aside: the refcount and the inline length are what count. */
  CHECK(s.refcount == NULL);
  CHECK_EQ_U64(GRPC_SLICE_LENGTH(s), 0);
  grpc_slice zero;
  memset(&zero, 0, sizeof zero);
  CHECK(zero.refcount == NULL);
  CHECK_EQ_U64(GRPC_SLICE_LENGTH(zero), 0);
  CHECK(grpc_slice_eq(zero, grpc_empty_slice()));
  grpc_slice_unref(zero); /* as call_release does: nothing to drop */
}

static void metadata_array_init_is_zeroed(void) {
  grpc_metadata_array a;
  memset(&a, 0xa5, sizeof a);
  grpc_metadata_array_init(&a);
  CHECK(all_zero(&a, sizeof a));
  grpc_metadata_array zero;
  memset(&zero, 0, sizeof zero);
  grpc_metadata_array_destroy(&zero); /* as call_release does */
}

UNIT_MAIN("zeroed_init", UNIT_CASE(empty_slice_is_zeroed),
          UNIT_CASE(metadata_array_init_is_zeroed))
