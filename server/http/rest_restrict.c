/* The HTTP restricted groups (see rest_restrict.h). Main thread at
 * start-up; the check runs on the loop that read the request. */
#include "server/http/rest_restrict.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "server/common/log.h"
#include "server/common/memory.h"

void srv_rest_restrict_init(srv_rest_restrict_t *r, const srv_options_t *opt) {
  memset(r, 0, sizeof *r);
  srv_status_t *st = srv_restrictions_parse(&r->groups, opt->http_restricted_apis,
                                            opt->http_restricted_api_count,
                                            "http-restricted-api", "", "api");
  if (st != NULL) SRV_FATAL("options not validated: %s", srv_status_message(st));
  for (int g = 0; g < SRV_GROUP_COUNT; g++) {
    const srv_restriction_t *rule = srv_restrictions_get(&r->groups, (srv_group_t)g);
    if (rule == NULL) continue;
    r->any = true;
    r->lower[g] = srv_strdup(rule->key);
    for (char *c = r->lower[g]; *c != '\0'; c++) *c = (char)tolower((unsigned char)*c);
    SRV_INFO("HTTP %s APIs are restricted (header '%s')", srv_group_name((srv_group_t)g),
             rule->key);
  }
}

void srv_rest_restrict_free(srv_rest_restrict_t *r) {
  for (int g = 0; g < SRV_GROUP_COUNT; g++) free(r->lower[g]);
  srv_restrictions_free(&r->groups);
}

bool srv_rest_refused(const srv_rest_restrict_t *r, srv_group_t g,
                      srv_http_exchange_t *x) {
  if (!r->any) return false;
  const srv_restriction_t *rule = srv_restrictions_get(&r->groups, g);
  if (rule == NULL) return false;
  srv_http_bytes_t v;
  if (srv_http_header(x, r->lower[g], &v) && srv_restriction_matches(rule, v.base, v.len))
    return false;
  srv_http_reply_error(x, 403, "This API is restricted, expecting header '%s'",
                       rule->key);
  return true;
}
