/* Restricted groups of endpoints, as tritonserver's
 * --grpc-restricted-protocol and --http-restricted-api: a group named in
 * the flag answers only requests that carry a header with a set value.
 * Parsed once by the main thread at start-up; read-only afterwards, any
 * thread. */
#ifndef NEREID_SERVER_COMMON_RESTRICTED_H
#define NEREID_SERVER_COMMON_RESTRICTED_H

#include <stdbool.h>
#include <stddef.h>

#include "server/common/status.h"

/** Triton's groups, in Triton's order (restricted_features.h). */
typedef enum {
  SRV_GROUP_HEALTH,
  SRV_GROUP_METADATA,
  SRV_GROUP_INFERENCE,
  SRV_GROUP_SHARED_MEMORY,
  SRV_GROUP_MODEL_CONFIG,
  SRV_GROUP_MODEL_REPOSITORY,
  SRV_GROUP_STATISTICS,
  SRV_GROUP_TRACE,
  SRV_GROUP_LOGGING,
  SRV_GROUP_COUNT,
  SRV_GROUP_NONE = SRV_GROUP_COUNT /* never restricted (grpc.health.v1) */
} srv_group_t;

/** A restricted group: the header a request must carry, and its value. */
typedef struct {
  char *key; /* with the frontend's prefix; NULL: the group is open */
  char *value;
} srv_restriction_t;

typedef struct {
  srv_restriction_t group[SRV_GROUP_COUNT];
} srv_restrictions_t;

/** The group's name as the flags spell it ("shared-memory"). */
const char *srv_group_name(srv_group_t g);

/** Applies every value of one flag (`option` without "--", e.g.
 *  "grpc-restricted-protocol"), each "<group>[,<group>...]:<key>=<value>".
 *  The header is `key_prefix` + key; `feature_type` ("protocol", "api")
 *  names a group in errors. Triton's rules and texts: all three parts
 *  non-empty, known groups only, each group restricted once across all
 *  values. On error r is left as parsed so far: free it. */
srv_status_t *srv_restrictions_parse(srv_restrictions_t *r, char *const *args,
                                     size_t count, const char *option,
                                     const char *key_prefix, const char *feature_type);

/** The restriction of group g, or NULL when g is open (or SRV_GROUP_NONE). */
const srv_restriction_t *srv_restrictions_get(const srv_restrictions_t *r, srv_group_t g);

/** Whether a header's value (not NUL-terminated) is the expected one. */
bool srv_restriction_matches(const srv_restriction_t *r, const char *value, size_t len);

void srv_restrictions_free(srv_restrictions_t *r);

#endif
