/* A upb message as JSON (jansson's json_t), with Triton's HTTP conventions
 * rather than proto3 JSON: the .proto field names (snake_case), 64-bit
 * integers as JSON numbers, enums by name, maps as objects, bytes as
 * base64. Reflection-driven, so any message of grpc_service.proto (or
 * model_config.proto) goes through it. Any thread; pure functions. */
#ifndef NEREID_SERVER_VIEWS_JSON_H
#define NEREID_SERVER_VIEWS_JSON_H

#include <jansson.h>

#include "upb/def.h"
#include "upb/reflection.h"

/** Print every field of Triton's own (numbers below 100) even at its
 *  default: scalars, empty lists as [] and empty maps as {}, as Triton's
 *  core writes its JSON messages. Fields with presence (sub-messages,
 *  oneof members) print only when set, whatever the flag. Without it,
 *  proto3's rule: defaults are left out. */
#define SRV_JSON_ALL_FIELDS 1u

/** Field numbers from this one on are Nereid's own, beyond Triton's
 *  protocol (e.g. ModelStatistics.sequence_stats): printed only when set
 *  or non-empty, so that a Triton client sees Triton's keys and no more
 *  unless Nereid has something to say. */
#define SRV_JSON_NEREID_FIELDS 100u

/** The def pool holding grpc_service.proto and model_config.proto: built
 *  once (thread-safe), kept for the process. */
const upb_DefPool *srv_json_def_pool(void);

/** The def of message `full_name` (e.g. "inference.ModelStatistics") in
 *  that pool; fatal when it is not there (a programming error). */
const upb_MessageDef *srv_json_message_def(const char *full_name);

/** A new JSON object for msg (of type m), per `flags`. Integers beyond
 *  json_int_t (uint64 values of 2^63 and more) saturate at its maximum:
 *  jansson has no unsigned integers. Out of memory is fatal; never NULL.
 *  The caller owns the reference. */
json_t *srv_json_from_message(const upb_Message *msg, const upb_MessageDef *m,
                              unsigned flags);

/** A JSON string of s's bytes; bytes that are not UTF-8 (a name a client
 *  sent, echoed back) become U+FFFD each. Out of memory is fatal. */
json_t *srv_json_string(upb_StringView s);

/** json_dumps with the options every view uses (compact, keys in the
 *  order they were added); malloc'ed, NUL-terminated, *len its length
 *  when len is not NULL. Out of memory is fatal. */
char *srv_json_text(const json_t *v, size_t *len);

#endif
