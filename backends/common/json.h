/* A small JSON reader for model configurations: parses a whole document into
 * a read-only tree. Any thread; a parsed document never changes, so several
 * threads may read it at once. Pure C, no server calls (unit-testable). */
#ifndef NEREID_BACKENDS_COMMON_JSON_H
#define NEREID_BACKENDS_COMMON_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Nesting deeper than this is rejected, so hostile input cannot exhaust the
 * stack of the recursive parser. Model configurations nest about 6 deep. */
#define BK_JSON_MAX_DEPTH 64

/* BK_JSON_ABSENT is what the accessors report for a NULL value, so lookups
 * can be chained without checking every step. */
typedef enum {
  BK_JSON_ABSENT = 0,
  BK_JSON_NULL,
  BK_JSON_BOOL,
  BK_JSON_NUMBER,
  BK_JSON_STRING,
  BK_JSON_ARRAY,
  BK_JSON_OBJECT
} bk_json_type_t;

typedef struct bk_json bk_json_t;
typedef struct bk_json_doc bk_json_doc_t;

/** Parses `len` bytes of JSON text (not necessarily NUL-terminated). Returns
 * the document, which the caller frees with bk_json_doc_free, or NULL with a
 * "line L column C: reason" message in `err` (always NUL-terminated when
 * err_len > 0). The document copies what it keeps: `text` may go away. */
bk_json_doc_t *bk_json_parse(const char *text, size_t len, char *err, size_t err_len);

/** Frees a document and every value and string read from it. NULL is fine. */
void bk_json_doc_free(bk_json_doc_t *doc);

/** The top-level value. */
const bk_json_t *bk_json_root(const bk_json_doc_t *doc);

/** Type of a value; BK_JSON_ABSENT for NULL. */
bk_json_type_t bk_json_type(const bk_json_t *v);

/** Member `key` of an object (the first one if the key repeats); NULL when v
 * is not an object or has no such member. */
const bk_json_t *bk_json_get(const bk_json_t *v, const char *key);

/** Number of elements of an array or members of an object; 0 otherwise. */
size_t bk_json_count(const bk_json_t *v);

/** Element i of an array, or the value of member i of an object, in document
 * order; NULL when out of range or not a container. */
const bk_json_t *bk_json_at(const bk_json_t *v, size_t i);

/** Name of member i of an object; NULL when out of range or not an object. */
const char *bk_json_key_at(const bk_json_t *v, size_t i);

/** A string's bytes (NUL-terminated, escapes decoded to UTF-8) and length,
 * which counts any embedded NUL from "\u0000". NULL when not a string. */
const char *bk_json_str(const bk_json_t *v, size_t *len);

/** A boolean. False (and *out untouched) when v is not one. */
bool bk_json_bool(const bk_json_t *v, bool *out);

/** An integer in int64 range: a number without fraction or exponent, or a
 * string holding one (protobuf's JSON mapping may print 64-bit integers as
 * strings). False (and *out untouched) otherwise. */
bool bk_json_int(const bk_json_t *v, int64_t *out);

/** Any number, as a double. False (and *out untouched) when not a number. */
bool bk_json_num(const bk_json_t *v, double *out);

#endif
