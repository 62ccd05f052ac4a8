/* Restricted API groups of the HTTP/REST frontend (--http-restricted-api):
 * a restricted group answers 403 with Triton's text unless the request
 * carries the group's header with its value. Built by the main thread at
 * start-up; read-only afterwards, on the loops. */
#ifndef NEREID_SERVER_HTTP_REST_RESTRICT_H
#define NEREID_SERVER_HTTP_REST_RESTRICT_H

#include <stdbool.h>

#include "server/common/restricted.h"
#include "server/http/exchange.h"
#include "server/options.h"

typedef struct {
  srv_restrictions_t groups;
  char *lower[SRV_GROUP_COUNT]; /* each header name in lower case, as h2o has it */
  bool any;                     /* some group is restricted */
} srv_rest_restrict_t;

/** Parses --http-restricted-api (already validated) into r. */
void srv_rest_restrict_init(srv_rest_restrict_t *r, const srv_options_t *opt);
void srv_rest_restrict_free(srv_rest_restrict_t *r);

/** Whether x, of group g, is refused: if so it was answered 403
 *  {"error": "This API is restricted, expecting header '<key>'"} and is
 *  done. The loop thread, before the endpoint runs. */
bool srv_rest_refused(const srv_rest_restrict_t *r, srv_group_t g,
                      srv_http_exchange_t *x);

#endif
