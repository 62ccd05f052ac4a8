/* One kept header per thread (header_memo.h). A hit costs a comparison of
 * the bytes instead of a parse; a tree is shared only by the requests of
 * its own thread, one at a time, and never changed, so it needs no lock.
 * Bounded: one header of at most SRV_HEADER_MEMO_MAX bytes (and its tree)
 * per thread that parses, freed when the thread exits. */
#include "server/http/header_memo.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "server/common/log.h"

typedef struct {
  size_t len;
  json_t *root;
  char bytes[SRV_HEADER_MEMO_MAX];
} memo_t;

static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pthread_key_t memo_key;

static void memo_free(void *p) {
  memo_t *m = p;
  json_decref(m->root);
  free(m);
}

static void key_make(void) {
  if (pthread_key_create(&memo_key, memo_free) != 0)
    SRV_FATAL("pthread_key_create failed for the HTTP header memo");
}

/* The thread's memo, made at its first kept header. */
static memo_t *memo_mine(void) {
  pthread_once(&key_once, key_make);
  memo_t *m = pthread_getspecific(memo_key);
  if (m != NULL) return m;
  m = calloc(1, sizeof *m);
  if (m == NULL || pthread_setspecific(memo_key, m) != 0)
    SRV_FATAL("out of memory for the HTTP header memo");
  return m;
}

json_t *srv_header_memo_load(const char *text, size_t len, size_t flags, json_error_t *err) {
  if (len > SRV_HEADER_MEMO_MAX) return json_loadb(text, len, flags, err);
  memo_t *m = memo_mine();
  if (m->root != NULL && m->len == len && memcmp(m->bytes, text, len) == 0)
    return json_incref(m->root);
  json_t *root = json_loadb(text, len, flags, err);
  if (root == NULL || !json_is_object(root)) return root;
  json_decref(m->root);
  memcpy(m->bytes, text, len);
  m->len = len;
  m->root = json_incref(root);
  return root;
}
