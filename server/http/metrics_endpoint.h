/* The metrics endpoint: GET /metrics (Prometheus text, server/metrics/) on
 * its own port, on the HTTP server of http_server.h. See http.md. */
#ifndef NEREID_SERVER_HTTP_METRICS_ENDPOINT_H
#define NEREID_SERVER_HTTP_METRICS_ENDPOINT_H

#include <stdbool.h>
#include <stdint.h>

#include "server/core/core.h"

typedef struct srv_metrics_endpoint srv_metrics_endpoint_t;

/** Listens on --metrics-address:--metrics-port with one loop, with the
 *  --metrics-config settings (refused with the setting named). Main
 *  thread. */
srv_status_t *srv_metrics_endpoint_start(srv_server_t *srv, srv_metrics_endpoint_t **out);

/** Stops serving, waits for scrapes under way, frees. Before the core
 *  stops (a scrape reads the models). Main thread. */
void srv_metrics_endpoint_stop(srv_metrics_endpoint_t *e);

#endif
