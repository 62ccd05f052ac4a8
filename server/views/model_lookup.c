/* Model lookup for requests of either frontend (see model_lookup.h). */
#include "server/views/model_lookup.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

bool srv_version_parse(upb_StringView version, int64_t *out) {
  if (version.size == 0) {
    *out = -1;
    return true;
  }
  char buf[32];
  if (version.size >= sizeof buf) return false;
  memcpy(buf, version.data, version.size);
  buf[version.size] = '\0';
  char *end;
  errno = 0;
  long long v = strtoll(buf, &end, 10);
  if (errno != 0 || *end != '\0' || v < 0 || buf[0] == '-' || buf[0] == '+') return false;
  *out = v;
  return true;
}

srv_status_t *srv_model_lookup(srv_server_t *srv, upb_StringView name,
                               upb_StringView version, srv_model_t **out) {
  int64_t v;
  if (!srv_version_parse(version, &v)) {
    char qn[SRV_QUOTE_SIZE], qv[SRV_QUOTE_SIZE];
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "model '%s': version '%s' is not a non-negative integer",
                          srv_quote(qn, name.data, name.size),
                          srv_quote(qv, version.data, version.size));
  }
  return srv_registry_acquire(srv->registry, name.data, name.size, v, out);
}
