/* Test helper (not for the server): checks that a message parsed by
 * cfg_pbtxt_parse survives upb's text encoder and a second parse, byte for
 * byte. Used by the corpus test and the fuzz target; any thread. */
#ifndef NEREID_SERVER_CONFIG_ROUND_TRIP_H
#define NEREID_SERVER_CONFIG_ROUND_TRIP_H

#include <stddef.h>

#include "upb/def.h"
#include "upb/msg.h"
#include "upb/upb.h"

typedef enum {
  CFG_ROUND_TRIP_OK,
  /** Not checked: the message holds a float NaN, on which upb's text
   *  encoder asserts (NaN != NaN in its own round-trip check). */
  CFG_ROUND_TRIP_SKIPPED,
  /** The text upb printed did not parse again; `err` says why. */
  CFG_ROUND_TRIP_REPARSE_FAILED,
  /** It parsed, to a message with different binary encoding. */
  CFG_ROUND_TRIP_DIFFERENT,
} cfg_round_trip_t;

/** Prints `msg` (of type `m`) with upb_TextEncode, parses that with
 *  cfg_pbtxt_parse into a new message in `arena`, and compares both
 *  deterministic binary encodings. `err` (may be NULL) gets the parse error
 *  or the printed text on failure. */
cfg_round_trip_t cfg_round_trip_check(const upb_Message *msg, const upb_MessageDef *m,
                                      upb_Arena *arena, char *err, size_t err_len);

#endif
