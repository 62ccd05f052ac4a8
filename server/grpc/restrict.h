/* Restricted protocol groups of the gRPC frontend
 * (--grpc-restricted-protocol): each registered method's group, as
 * tritonserver assigns them, resolved once at start-up into one pointer
 * per method, so that an open method costs one load and a NULL test.
 * Built by the main thread; read-only afterwards, any thread. */
#ifndef NEREID_SERVER_GRPC_RESTRICT_H
#define NEREID_SERVER_GRPC_RESTRICT_H

#include <grpc/grpc.h>
#include <stddef.h>

#include "server/common/restricted.h"
#include "server/common/status.h"
#include "server/options.h"

typedef struct {
  srv_restrictions_t groups;
  /* Per srv_rpcs index, plus one for unregistered methods: the method's
   * restriction, NULL when it is open. */
  const srv_restriction_t **of_rpc;
} srv_grpc_restrict_t;

/** The group of srv_rpcs[rpc] (SRV_GROUP_NONE for grpc.health.v1 and for
 *  unregistered methods). */
srv_group_t srv_grpc_rpc_group(size_t rpc);

/** Parses --grpc-restricted-protocol (already validated) into r. */
void srv_grpc_restrict_init(srv_grpc_restrict_t *r, const srv_options_t *opt);
void srv_grpc_restrict_free(srv_grpc_restrict_t *r);

/** Whether a call with metadata md may use a method restricted by `rule`;
 *  if not, the status to answer (UNAVAILABLE, Triton's text). Scans the
 *  metadata only here, that is only for restricted methods. */
srv_status_t *srv_grpc_restrict_check(const srv_restriction_t *rule,
                                      const grpc_metadata_array *md);

#endif
