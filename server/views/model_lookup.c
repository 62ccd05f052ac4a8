/* Model lookup for requests of either frontend (see model_lookup.h). */
#include "server/views/model_lookup.h"

srv_status_t *srv_model_lookup(srv_server_t *srv, upb_StringView name,
                               upb_StringView version, srv_model_t **out) {
  return srv_registry_lookup(srv->registry, name.data, name.size, version.data,
                             version.size, out);
}
