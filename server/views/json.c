/* upb messages as JSON with Triton's HTTP conventions (see json.h). The
 * def pool is built once; after that it is only read, which upb allows
 * from any number of threads. */
#include "server/views/json.h"

#include <limits.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grpc_service.upbdefs.h"
#include "server/common/log.h"

static pthread_once_t pool_once = PTHREAD_ONCE_INIT;
static upb_DefPool *pool;

static void pool_init(void) {
  pool = upb_DefPool_New();
  /* Loading one message of the file loads the file and what it imports
   * (model_config.proto). */
  if (pool == NULL || inference_ServerMetadataResponse_getmsgdef(pool) == NULL)
    SRV_FATAL("out of memory");
}

const upb_DefPool *srv_json_def_pool(void) {
  pthread_once(&pool_once, pool_init);
  return pool;
}

const upb_MessageDef *srv_json_message_def(const char *full_name) {
  const upb_MessageDef *m = upb_DefPool_FindMessageByName(srv_json_def_pool(), full_name);
  if (m == NULL) SRV_FATAL("no message %s in the def pool", full_name);
  return m;
}

static json_t *checked(json_t *v) {
  if (v == NULL) SRV_FATAL("out of memory");
  return v;
}

json_t *srv_json_string(upb_StringView s) {
  /* Not valid UTF-8 (a name a client sent, echoed back): jansson refuses
   * it, so it is printed with U+FFFD for each bad byte rather than lost. */
  json_t *v = json_stringn(s.data != NULL ? s.data : "", s.size);
  if (v != NULL) return v;
  char *fixed = malloc(s.size * 3 + 1);
  if (fixed == NULL) SRV_FATAL("out of memory");
  size_t n = 0;
  for (size_t i = 0; i < s.size; i++) {
    unsigned char c = (unsigned char)s.data[i];
    if (c < 0x80 && c != 0) {
      fixed[n++] = (char)c;
    } else {
      memcpy(fixed + n, "\xef\xbf\xbd", 3);
      n += 3;
    }
  }
  v = checked(json_stringn(fixed, n));
  free(fixed);
  return v;
}

static json_t *bytes_json(upb_StringView s) {
  if (s.size > (size_t)INT_MAX / 4 * 3) SRV_FATAL("bytes field too large for base64");
  unsigned char *out = malloc(4 * ((s.size + 2) / 3) + 1);
  if (out == NULL) SRV_FATAL("out of memory");
  int n = EVP_EncodeBlock(out, (const unsigned char *)s.data, (int)s.size);
  json_t *v = checked(json_stringn((const char *)out, (size_t)n));
  free(out);
  return v;
}

static json_t *uint_json(uint64_t u) {
  return checked(json_integer(u > (uint64_t)LLONG_MAX ? LLONG_MAX : (json_int_t)u));
}

static json_t *value_json(const upb_FieldDef *f, upb_MessageValue v, unsigned flags) {
  switch (upb_FieldDef_CType(f)) {
    case kUpb_CType_Bool:
      return checked(json_boolean(v.bool_val));
    case kUpb_CType_Float:
      return checked(json_real(v.float_val));
    case kUpb_CType_Double:
      return checked(json_real(v.double_val));
    case kUpb_CType_Int32:
      return checked(json_integer(v.int32_val));
    case kUpb_CType_UInt32:
      return checked(json_integer(v.uint32_val));
    case kUpb_CType_Int64:
      return checked(json_integer(v.int64_val));
    case kUpb_CType_UInt64:
      return uint_json(v.uint64_val);
    case kUpb_CType_String:
      return srv_json_string(v.str_val);
    case kUpb_CType_Bytes:
      return bytes_json(v.str_val);
    case kUpb_CType_Enum: {
      const upb_EnumValueDef *ev =
          upb_EnumDef_FindValueByNumber(upb_FieldDef_EnumSubDef(f), v.int32_val);
      return ev != NULL ? checked(json_string(upb_EnumValueDef_Name(ev)))
                        : checked(json_integer(v.int32_val));
    }
    case kUpb_CType_Message:
      return srv_json_from_message(v.msg_val, upb_FieldDef_MessageSubDef(f), flags);
  }
  SRV_FATAL("unknown field type");
}

/* JSON keys are strings: a map's integer or bool keys are printed. */
static void map_key(const upb_FieldDef *kf, upb_MessageValue k, char *buf, size_t n,
                    upb_StringView *out) {
  switch (upb_FieldDef_CType(kf)) {
    case kUpb_CType_String:
      *out = k.str_val;
      return;
    case kUpb_CType_Bool:
      snprintf(buf, n, "%s", k.bool_val ? "true" : "false");
      break;
    case kUpb_CType_Int32:
      snprintf(buf, n, "%d", k.int32_val);
      break;
    case kUpb_CType_UInt32:
      snprintf(buf, n, "%u", k.uint32_val);
      break;
    case kUpb_CType_Int64:
      snprintf(buf, n, "%lld", (long long)k.int64_val);
      break;
    default:
      snprintf(buf, n, "%llu", (unsigned long long)k.uint64_val);
      break;
  }
  *out = upb_StringView_FromString(buf);
}

static json_t *map_json(const upb_FieldDef *f, const upb_Map *map, unsigned flags) {
  const upb_MessageDef *entry = upb_FieldDef_MessageSubDef(f);
  const upb_FieldDef *kf = upb_MessageDef_Field(entry, 0);
  const upb_FieldDef *vf = upb_MessageDef_Field(entry, 1);
  json_t *obj = checked(json_object());
  size_t iter = kUpb_Map_Begin;
  while (map != NULL && upb_MapIterator_Next(map, &iter)) {
    char buf[32];
    upb_StringView key;
    map_key(kf, upb_MapIterator_Key(map, iter), buf, sizeof buf, &key);
    json_t *k = srv_json_string(key); /* the key as jansson will hold it */
    json_t *v = value_json(vf, upb_MapIterator_Value(map, iter), flags);
    if (json_object_setn_new_nocheck(obj, json_string_value(k), json_string_length(k),
                                     v) != 0)
      SRV_FATAL("out of memory");
    json_decref(k);
  }
  return obj;
}

static json_t *array_json(const upb_FieldDef *f, const upb_Array *arr, unsigned flags) {
  json_t *a = checked(json_array());
  size_t n = arr != NULL ? upb_Array_Size(arr) : 0;
  for (size_t i = 0; i < n; i++)
    if (json_array_append_new(a, value_json(f, upb_Array_Get(arr, i), flags)) != 0)
      SRV_FATAL("out of memory");
  return a;
}

/* Whether a field without presence holds its default. */
static bool is_default(const upb_FieldDef *f, upb_MessageValue v) {
  if (upb_FieldDef_IsMap(f)) return v.map_val == NULL || upb_Map_Size(v.map_val) == 0;
  if (upb_FieldDef_IsRepeated(f))
    return v.array_val == NULL || upb_Array_Size(v.array_val) == 0;
  switch (upb_FieldDef_CType(f)) {
    case kUpb_CType_Bool:
      return !v.bool_val;
    case kUpb_CType_Float:
      return v.float_val == 0;
    case kUpb_CType_Double:
      return v.double_val == 0;
    case kUpb_CType_Int32:
    case kUpb_CType_Enum:
      return v.int32_val == 0;
    case kUpb_CType_UInt32:
      return v.uint32_val == 0;
    case kUpb_CType_Int64:
      return v.int64_val == 0;
    case kUpb_CType_UInt64:
      return v.uint64_val == 0;
    case kUpb_CType_String:
    case kUpb_CType_Bytes:
      return v.str_val.size == 0;
    case kUpb_CType_Message:
      return v.msg_val == NULL;
  }
  return false;
}

json_t *srv_json_from_message(const upb_Message *msg, const upb_MessageDef *m,
                              unsigned flags) {
  json_t *obj = checked(json_object());
  int n = upb_MessageDef_FieldCount(m);
  for (int i = 0; i < n; i++) {
    const upb_FieldDef *f = upb_MessageDef_Field(m, i);
    if (upb_FieldDef_HasPresence(f) && !upb_Message_Has(msg, f)) continue;
    upb_MessageValue v = upb_Message_Get(msg, f);
    bool all =
        (flags & SRV_JSON_ALL_FIELDS) && upb_FieldDef_Number(f) < SRV_JSON_NEREID_FIELDS;
    if (!upb_FieldDef_HasPresence(f) && !all && is_default(f, v)) continue;
    json_t *j = upb_FieldDef_IsMap(f)        ? map_json(f, v.map_val, flags)
                : upb_FieldDef_IsRepeated(f) ? array_json(f, v.array_val, flags)
                                             : value_json(f, v, flags);
    if (json_object_set_new_nocheck(obj, upb_FieldDef_Name(f), j) != 0)
      SRV_FATAL("out of memory");
  }
  return obj;
}

char *srv_json_text(const json_t *v, size_t *len) {
  char *s = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
  if (s == NULL) SRV_FATAL("out of memory");
  if (len != NULL) *len = strlen(s);
  return s;
}
