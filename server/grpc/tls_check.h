/* Start-up checks of the gRPC TLS flags and of the files they name, with
 * OpenSSL's libcrypto, so that a bad file fails start-up with its name
 * rather than every handshake later. Main thread, before the frontend
 * starts. gRPC itself never sees OpenSSL objects of ours. */
#ifndef NEREID_SERVER_GRPC_TLS_CHECK_H
#define NEREID_SERVER_GRPC_TLS_CHECK_H

#include "server/common/status.h"
#include "server/options.h"

/** Checks that the TLS flags go together (README.md, "TLS") and, when TLS
 *  is on, that each file is readable PEM, that the certificates are valid
 *  now, and that the key matches the server certificate. Returns a status
 *  naming the flag and the file at fault, or NULL. A root that does not
 *  verify the server certificate is only warned about (the root is the
 *  clients' CA, which need not be the server's). */
srv_status_t *srv_tls_check(const srv_options_t *opt);

#endif
