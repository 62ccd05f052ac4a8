/* Test helper: print with upb's text encoder, parse again with ours,
 * compare binary encodings. Any thread. */
#include "server/config/round_trip.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/config/pbtxt.h"
#include "upb/encode.h"
#include "upb/reflection.h"
#include "upb/text_encode.h"

static bool has_nan(const upb_Message *msg, const upb_MessageDef *m);

/* One value of field `f` (an element, for repeated fields). */
static bool value_has_nan(const upb_FieldDef *f, upb_MessageValue v) {
  switch (upb_FieldDef_CType(f)) {
    case kUpb_CType_Float:
      return isnan(v.float_val);
    case kUpb_CType_Double:
      return isnan(v.double_val);
    case kUpb_CType_Message:
      return has_nan(v.msg_val, upb_FieldDef_MessageSubDef(f));
    default:
      return false;
  }
}

static bool field_has_nan(const upb_FieldDef *f, upb_MessageValue v) {
  if (upb_FieldDef_IsMap(f)) {
    const upb_FieldDef *vf =
        upb_MessageDef_FindFieldByNumber(upb_FieldDef_MessageSubDef(f), 2);
    size_t iter = kUpb_Map_Begin;
    while (upb_MapIterator_Next(v.map_val, &iter))
      if (value_has_nan(vf, upb_MapIterator_Value(v.map_val, iter))) return true;
    return false;
  }
  if (upb_FieldDef_IsRepeated(f)) {
    for (size_t i = 0; i < upb_Array_Size(v.array_val); i++)
      if (value_has_nan(f, upb_Array_Get(v.array_val, i))) return true;
    return false;
  }
  return value_has_nan(f, v);
}

static bool has_nan(const upb_Message *msg, const upb_MessageDef *m) {
  size_t iter = kUpb_Message_Begin;
  const upb_FieldDef *f;
  upb_MessageValue v;
  while (upb_Message_Next(msg, m, NULL, &f, &v, &iter))
    if (field_has_nan(f, v)) return true;
  return false;
}

static bool encode(const upb_Message *msg, const upb_MessageDef *m, upb_Arena *a,
                   char **bin, size_t *len) {
  int opts =
      kUpb_EncodeOption_Deterministic | UPB_ENCODE_MAXDEPTH(CFG_PBTXT_MAX_DEPTH + 1);
  return upb_Encode(msg, upb_MessageDef_MiniTable(m), opts, a, bin, len) ==
         kUpb_EncodeStatus_Ok;
}

/* upb prints a group under its field name ("mygroup"), protoc wants the
 * type name; our test schema's one group ("MyGroup") differs only in case.
 * Only field names are renamed: each starts a line (after indentation),
 * and upb escapes every newline inside a string. */
static void fix_group_names(char *text) {
  for (char *line = text; line != NULL; line = strchr(line, '\n')) {
    while (*line == '\n' || *line == ' ') line++;
    if (strncmp(line, "mygroup {", 9) == 0) memcpy(line, "MyGroup", 7);
  }
}

cfg_round_trip_t cfg_round_trip_check(const upb_Message *msg, const upb_MessageDef *m,
                                      upb_Arena *arena, char *err, size_t err_len) {
  if (has_nan(msg, m)) return CFG_ROUND_TRIP_SKIPPED;
  size_t tlen = upb_TextEncode(msg, m, NULL, 0, NULL, 0);
  char *text = malloc(tlen + 1);
  upb_TextEncode(msg, m, NULL, 0, text, tlen + 1);
  fix_group_names(text);
  upb_Message *again = upb_Message_New(m, arena);
  cfg_round_trip_t result = CFG_ROUND_TRIP_OK;
  char *bin1, *bin2;
  size_t len1, len2;
  if (!cfg_pbtxt_parse(text, tlen, "upb-text", again, m, arena, err, err_len)) {
    result = CFG_ROUND_TRIP_REPARSE_FAILED;
  } else if (!encode(msg, m, arena, &bin1, &len1) ||
             !encode(again, m, arena, &bin2, &len2) || len1 != len2 ||
             memcmp(bin1, bin2, len1) != 0) {
    if (err && err_len) snprintf(err, err_len, "reparsed differently: %s", text);
    result = CFG_ROUND_TRIP_DIFFERENT;
  }
  free(text);
  return result;
}
