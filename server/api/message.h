/* TRITONSERVER_Message: a JSON document handed across the Triton C API
 * (server metadata, model config, statistics...). Any thread: a message is
 * owned by one thread at a time and never changes after it is made. */
#ifndef NEREID_SERVER_API_MESSAGE_H
#define NEREID_SERVER_API_MESSAGE_H

#include <stddef.h>

#include "triton/core/tritonserver.h"

/** A message holding 'json', 'len' bytes the server built with malloc. The
 *  message takes ownership of 'json' (it may realloc it to add a closing NUL)
 *  and frees it when deleted. The caller owns the message
 *  (TRITONSERVER_MessageDelete). Never returns NULL: out-of-memory is fatal.
 *  The JSON is not checked, as in Triton. */
TRITONSERVER_Message *api_message_new_take(char *json, size_t len);

#endif
