/* Protobuf text format (the language of Triton's config.pbtxt) parsed into
 * any upb message through upb reflection. Any thread; calls share nothing. */
#ifndef NEREID_SERVER_CONFIG_PBTXT_H
#define NEREID_SERVER_CONFIG_PBTXT_H

#include <stdbool.h>
#include <stddef.h>

#include "upb/def.h"
#include "upb/msg.h"
#include "upb/upb.h"

/** Deepest message nesting accepted, in levels counting the top-level
 *  message (map entries count as a level). Deeper input is an error, which
 *  bounds the parser's stack; 64 also keeps every accepted message within
 *  the default depth limits of upb's binary encoder and decoder. protoc and
 *  Python set no limit, but no Triton config nests more than ~8 levels. */
#define CFG_PBTXT_MAX_DEPTH 64

/** Parses protobuf text format into `msg` (of message type `m`, created by
 *  the caller in `arena`) using upb reflection. Accepts what protoc's
 *  TextFormat parser accepts, except `[extension]` and Any expansion
 *  syntax, which are rejected with an error. `text` need not be
 *  NUL-terminated; every string of `msg` is copied into `arena`, so `text`
 *  may be freed after the call. Fields are merged into what `msg` holds.
 *  Returns true on success; on failure fills `err` (caller buffer of
 *  `err_len` bytes, may be NULL/0) with "<filename>:<line>:<col>: <what was
 *  expected / what is wrong>" (1-based line, 1-based byte column) and returns
 *  false (msg content then unspecified). Linear time in `len`; the def pool
 *  of `m` is only read, so parses may run concurrently on any threads. */
bool cfg_pbtxt_parse(const char *text, size_t len, const char *filename, upb_Message *msg,
                     const upb_MessageDef *m, upb_Arena *arena, char *err,
                     size_t err_len);

#endif
