/* The last parsed JSON header of an HTTP inference request, kept per thread
 * (header_memo.c): clients of the binary tensor extension send the same
 * JSON header with every request, and jansson's parse of it is the largest
 * cost of an HTTP request (docs/perf.md, issue 18). */
#ifndef NEREID_SERVER_HTTP_HEADER_MEMO_H
#define NEREID_SERVER_HTTP_HEADER_MEMO_H

#include <jansson.h>
#include <stddef.h>

/** Headers longer than this are parsed every time and never kept. */
enum { SRV_HEADER_MEMO_MAX = 4096 };

/** The tree of the `len` bytes at `text`, a new reference the caller
 *  drops: the calling thread's kept tree when the bytes are the same as
 *  the last ones it kept, else json_loadb's (with `flags`, errors in
 *  `err`; NULL on a parse error), kept in its place when it is an object
 *  of at most SRV_HEADER_MEMO_MAX bytes. The tree must not be changed.
 *  Any thread; each keeps one header. */
json_t *srv_header_memo_load(const char *text, size_t len, size_t flags, json_error_t *err);

#endif
