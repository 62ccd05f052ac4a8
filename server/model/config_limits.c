/* Bounds on a model configuration (see config_limits.h). The generic part
 * walks the message by reflection, so fields that no scheduler reads yet
 * (sequence batching, ensembles, warmup) are bounded too; the rest reads
 * the few numbers that size threads or per-level memory. */
#include "server/model/config_limits.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "server/common/log.h"
#include "server/config/model_config.h"
#include "upb/reflection.h"

#define PATH_LEN 256

typedef struct {
  const char *model, *source;
  char path[PATH_LEN]; /* the field being looked at, as "input[2].dims" */
} walk_t;

static srv_status_t *fail(const walk_t *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static srv_status_t *fail(const walk_t *w, const char *fmt, ...) {
  char what[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT, "model '%s': %s: %s", w->model,
                        w->source, what);
}

/* Appends to w->path from `len` on; returns the new length. Paths only
 * name fields in messages, so truncation (never reached by this schema's
 * depth) would only shorten the text. */
static size_t path_add(walk_t *w, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static size_t path_add(walk_t *w, size_t len, const char *fmt, ...) {
  if (len >= PATH_LEN - 1) return len;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(w->path + len, PATH_LEN - len, fmt, ap);
  va_end(ap);
  if (n < 0) return len;
  return len + (size_t)n < PATH_LEN ? len + (size_t)n : PATH_LEN - 1;
}

static bool name_is(const upb_FieldDef *f, const char *name) {
  return strcmp(upb_FieldDef_Name(f), name) == 0;
}

static bool is_shape(const upb_FieldDef *f) {
  upb_CType t = upb_FieldDef_CType(f);
  return (t == kUpb_CType_Int64 || t == kUpb_CType_Int32) &&
         (name_is(f, "dims") || name_is(f, "shape") || name_is(f, "dim"));
}

static bool is_duration(const upb_FieldDef *f) {
  static const char suffix[] = "_microseconds";
  const char *n = upb_FieldDef_Name(f);
  size_t len = strlen(n), s = sizeof suffix - 1;
  return upb_FieldDef_CType(f) == kUpb_CType_UInt64 && len > s &&
         strcmp(n + len - s, suffix) == 0;
}

static srv_status_t *walk_message(walk_t *w, const upb_Message *msg,
                                  const upb_MessageDef *m, size_t len);

static srv_status_t *check_scalar(walk_t *w, const upb_FieldDef *f, upb_MessageValue v) {
  if (upb_FieldDef_CType(f) == kUpb_CType_String && name_is(f, "name") &&
      v.str_val.size > SRV_CONFIG_NAME_MAX)
    return fail(w, "'%s' is %zu bytes long, above the limit of %u", w->path,
                v.str_val.size, SRV_CONFIG_NAME_MAX);
  if (is_duration(f) && v.uint64_val > SRV_CONFIG_MICROSECONDS_MAX)
    return fail(w, "'%s' is %llu, above the limit of %llu (365 days)", w->path,
                (unsigned long long)v.uint64_val, SRV_CONFIG_MICROSECONDS_MAX);
  return NULL;
}

static srv_status_t *check_count(walk_t *w, size_t n, unsigned limit) {
  if (n <= limit) return NULL;
  return fail(w, "'%s' has %zu entries, above the limit of %u", w->path, n, limit);
}

/* A map key as part of a path: ["name"] (at most 64 bytes of it) or [7]. */
static size_t path_add_key(walk_t *w, size_t len, const upb_FieldDef *key_f,
                           upb_MessageValue key) {
  switch (upb_FieldDef_CType(key_f)) {
    case kUpb_CType_String:
      return path_add(w, len, "[\"%.*s\"]",
                      (int)(key.str_val.size > 64 ? 64 : key.str_val.size),
                      key.str_val.data);
    case kUpb_CType_Int32:
      return path_add(w, len, "[%d]", (int)key.int32_val);
    case kUpb_CType_UInt32:
      return path_add(w, len, "[%u]", (unsigned)key.uint32_val);
    case kUpb_CType_Int64:
      return path_add(w, len, "[%lld]", (long long)key.int64_val);
    case kUpb_CType_UInt64:
      return path_add(w, len, "[%llu]", (unsigned long long)key.uint64_val);
    default:
      return path_add(w, len, "[%s]", key.bool_val ? "true" : "false");
  }
}

static srv_status_t *walk_map(walk_t *w, const upb_FieldDef *f, const upb_Map *map,
                              size_t len) {
  srv_status_t *st =
      check_count(w, map != NULL ? upb_Map_Size(map) : 0, SRV_CONFIG_LIST_MAX);
  const upb_FieldDef *val_f = upb_MessageDef_Field(upb_FieldDef_MessageSubDef(f), 1);
  if (st != NULL || map == NULL || !upb_FieldDef_IsSubMessage(val_f)) return st;
  const upb_FieldDef *key_f = upb_MessageDef_Field(upb_FieldDef_MessageSubDef(f), 0);
  size_t iter = kUpb_Map_Begin;
  while (st == NULL && upb_MapIterator_Next(map, &iter)) {
    size_t at = path_add_key(w, len, key_f, upb_MapIterator_Key(map, iter));
    st = walk_message(w, upb_MapIterator_Value(map, iter).msg_val,
                      upb_FieldDef_MessageSubDef(val_f), at);
  }
  return st;
}

static srv_status_t *walk_array(walk_t *w, const upb_FieldDef *f, const upb_Array *arr,
                                size_t len) {
  size_t n = arr != NULL ? upb_Array_Size(arr) : 0;
  srv_status_t *st =
      check_count(w, n, is_shape(f) ? SRV_CONFIG_DIMS_MAX : SRV_CONFIG_LIST_MAX);
  for (size_t i = 0; st == NULL && i < n; i++) {
    size_t at = path_add(w, len, "[%zu]", i);
    if (upb_FieldDef_IsSubMessage(f))
      st = walk_message(w, upb_Array_Get(arr, i).msg_val, upb_FieldDef_MessageSubDef(f),
                        at);
    else
      st = check_scalar(w, f, upb_Array_Get(arr, i));
  }
  return st;
}

/* Every field of msg, recursively; w->path[0, len) names msg. */
static srv_status_t *walk_message(walk_t *w, const upb_Message *msg,
                                  const upb_MessageDef *m, size_t len) {
  srv_status_t *st = NULL;
  for (int i = 0; st == NULL && i < upb_MessageDef_FieldCount(m); i++) {
    const upb_FieldDef *f = upb_MessageDef_Field(m, i);
    size_t at = path_add(w, len, len > 0 ? ".%s" : "%s", upb_FieldDef_Name(f));
    if (upb_FieldDef_IsMap(f))
      st = walk_map(w, f, upb_Message_Get(msg, f).map_val, at);
    else if (upb_FieldDef_IsRepeated(f))
      st = walk_array(w, f, upb_Message_Get(msg, f).array_val, at);
    else if (upb_FieldDef_IsSubMessage(f))
      st = upb_Message_Has(msg, f) ? walk_message(w, upb_Message_Get(msg, f).msg_val,
                                                  upb_FieldDef_MessageSubDef(f), at)
                                   : NULL;
    else
      st = check_scalar(w, f, upb_Message_Get(msg, f));
  }
  return st;
}

uint64_t srv_config_instance_total(const inference_ModelConfig *config) {
  size_t n;
  const inference_ModelInstanceGroup *const *g =
      inference_ModelConfig_instance_group(config, &n);
  uint64_t total = 0;
  for (size_t i = 0; i < n; i++) {
    int32_t count = inference_ModelInstanceGroup_count(g[i]);
    /* A GPU group has `count` instances on each GPU it lists (at most
     * SRV_CONFIG_LIST_MAX: the product fits in 64 bits). */
    size_t gpus = 0;
    if (inference_ModelInstanceGroup_kind(g[i]) !=
            inference_ModelInstanceGroup_KIND_CPU &&
        inference_ModelInstanceGroup_kind(g[i]) !=
            inference_ModelInstanceGroup_KIND_MODEL)
      inference_ModelInstanceGroup_gpus(g[i], &gpus);
    total += (count > 0 ? (uint64_t)count : 1) * (gpus > 0 ? gpus : 1);
  }
  return total;
}

/* Each group's count alone, then the sum: the first names the group. */
static srv_status_t *check_instances(walk_t *w, const inference_ModelConfig *config) {
  size_t n;
  const inference_ModelInstanceGroup *const *g =
      inference_ModelConfig_instance_group(config, &n);
  for (size_t i = 0; i < n; i++) {
    int32_t count = inference_ModelInstanceGroup_count(g[i]);
    if (count > 0 && (uint32_t)count > SRV_CONFIG_INSTANCES_MAX)
      return fail(w,
                  "'instance_group[%zu].count' is %d, above the limit of %u instances "
                  "per model version",
                  i, (int)count, SRV_CONFIG_INSTANCES_MAX);
  }
  uint64_t total = srv_config_instance_total(config);
  if (total > SRV_CONFIG_INSTANCES_MAX)
    return fail(w,
                "'instance_group' counts add up to %llu instances, above the limit of "
                "%u per model version",
                (unsigned long long)total, SRV_CONFIG_INSTANCES_MAX);
  return NULL;
}

static srv_status_t *check_levels(walk_t *w, const inference_ModelConfig *config) {
  const inference_ModelDynamicBatching *db =
      inference_ModelConfig_dynamic_batching(config);
  uint64_t levels = db != NULL ? inference_ModelDynamicBatching_priority_levels(db) : 0;
  if (levels <= SRV_CONFIG_PRIORITY_LEVELS_MAX) return NULL;
  return fail(w, "'dynamic_batching.priority_levels' is %llu, above the limit of %u",
              (unsigned long long)levels, SRV_CONFIG_PRIORITY_LEVELS_MAX);
}

srv_status_t *srv_config_limits_check(const inference_ModelConfig *config,
                                      const char *model, const char *source) {
  const upb_MessageDef *def = cfg_model_config_def();
  if (def == NULL) SRV_FATAL("out of memory"); /* building the def pool failed */
  walk_t w = {.model = model, .source = source};
  w.path[0] = '\0';
  srv_status_t *st = walk_message(&w, (const upb_Message *)config, def, 0);
  if (st == NULL) st = check_instances(&w, config);
  if (st == NULL) st = check_levels(&w, config);
  return st;
}
