/* Test tool: parses a text-format file with cfg_pbtxt_parse and writes the
 * message's deterministic binary serialization (or, with --text, upb's text
 * rendering) to stdout; parse errors go to stderr with exit status 1.
 * Single-threaded. Usage: pbtxt_to_binary [--text] <message type> <file> */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "all_types.upbdefs.h"
#include "model_config.upbdefs.h"
#include "server/config/pbtxt.h"
#include "upb/encode.h"
#include "upb/reflection.h"
#include "upb/text_encode.h"

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  while (buf != NULL) {
    n += fread(buf + n, 1, cap - n, f);
    if (n < cap) break;
    char *bigger = realloc(buf, cap *= 2);
    if (bigger == NULL) free(buf);
    buf = bigger;
  }
  fclose(f);
  *len = n;
  return buf;
}

static int emit(const upb_Message *msg, const upb_MessageDef *m, bool text,
                upb_Arena *arena) {
  if (text) {
    size_t need = upb_TextEncode(msg, m, NULL, 0, NULL, 0);
    char *out = malloc(need + 1);
    if (out == NULL) return 2;
    upb_TextEncode(msg, m, NULL, 0, out, need + 1);
    fwrite(out, 1, need, stdout);
    free(out);
    return 0;
  }
  char *bin;
  size_t size;
  /* Parses may nest CFG_PBTXT_MAX_DEPTH deep; upb's default cap is lower. */
  int opts =
      kUpb_EncodeOption_Deterministic | UPB_ENCODE_MAXDEPTH(CFG_PBTXT_MAX_DEPTH + 1);
  if (upb_Encode(msg, upb_MessageDef_MiniTable(m), opts, arena, &bin, &size) !=
      kUpb_EncodeStatus_Ok) {
    fprintf(stderr, "pbtxt_to_binary: encoding failed\n");
    return 2;
  }
  fwrite(bin, 1, size, stdout);
  return 0;
}

int main(int argc, char **argv) {
  bool text = argc > 1 && strcmp(argv[1], "--text") == 0;
  if (argc != 3 + text) {
    fprintf(stderr, "usage: %s [--text] <message type> <file>\n", argv[0]);
    return 2;
  }
  const char *type = argv[1 + text], *path = argv[2 + text];
  upb_DefPool *pool = upb_DefPool_New();
  inference_ModelConfig_getmsgdef(pool);
  nereid_test_AllTypes_getmsgdef(pool);
  const upb_MessageDef *m = upb_DefPool_FindMessageByName(pool, type);
  if (m == NULL) {
    fprintf(stderr, "pbtxt_to_binary: unknown message type %s\n", type);
    return 2;
  }
  size_t len;
  char *data = read_file(path, &len);
  if (data == NULL) {
    perror(path);
    return 2;
  }
  upb_Arena *arena = upb_Arena_New();
  upb_Message *msg = upb_Message_New(m, arena);
  char err[512];
  int rc;
  if (cfg_pbtxt_parse(data, len, path, msg, m, arena, err, sizeof err)) {
    rc = emit(msg, m, text, arena);
  } else {
    fprintf(stderr, "%s\n", err);
    rc = 1;
  }
  upb_Arena_Free(arena);
  upb_DefPool_Free(pool);
  free(data);
  return rc;
}
