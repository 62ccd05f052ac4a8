/* The response cache's TRITONSERVER_ServerOptions: each becomes the flag
 * tritonserver's command line has for it (--response-cache-byte-size,
 * --cache-config, --cache-directory), so that the server checks them once,
 * at TRITONSERVER_ServerNew, with the command line's texts
 * (../cache/cache_config.h), and loads a cache library from there. One
 * thread at a time per object. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "server/api/error.h"
#include "server/embed/embed.h"

/* Triton: the `local` cache of that size; 0 asks for no cache here. */
TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetResponseCacheByteSize(
    TRITONSERVER_ServerOptions *o, uint64_t size) {
  return srv_embed_flag_add(o, "TRITONSERVER_ServerOptionsSetResponseCacheByteSize",
                            "response-cache-byte-size", "%llu", (unsigned long long)size);
}

/* One setting of the config as `<cache>,<key>=<value>`: strings as they
 * are, integers in decimal (Triton's caches read both forms). */
static TRITONSERVER_Error *setting_add(TRITONSERVER_ServerOptions *o, const char *fn,
                                       const char *cache, const char *key, json_t *v) {
  if (json_is_string(v))
    return srv_embed_flag_add(o, fn, "cache-config", "%s,%s=%s", cache, key,
                              json_string_value(v));
  if (json_is_integer(v))
    return srv_embed_flag_add(o, fn, "cache-config", "%s,%s=%lld", cache, key,
                              (long long)json_integer_value(v));
  return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                       "%s: cache '%s' setting '%s' must be a string or an integer", fn,
                       cache, key);
}

TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetCacheConfig(
    TRITONSERVER_ServerOptions *o, const char *cache_name, const char *config_json) {
  const char *fn = "TRITONSERVER_ServerOptionsSetCacheConfig";
  if (o == NULL) return SRV_EMBED_NULL(fn, "options");
  if (cache_name == NULL) return SRV_EMBED_NULL(fn, "cache_name");
  if (config_json == NULL) return SRV_EMBED_NULL(fn, "config_json");
  if (cache_name[0] == '\0' || strchr(cache_name, ',') != NULL)
    return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                         "%s: cache name '%s' must be non-empty and hold no ','", fn,
                         cache_name);
  json_error_t jerr;
  json_t *config = json_loads(config_json, JSON_REJECT_DUPLICATES, &jerr);
  if (config == NULL || !json_is_object(config) || json_object_size(config) == 0) {
    TRITONSERVER_Error *err = api_error_new(
        TRITONSERVER_ERROR_INVALID_ARG,
        "%s: cache '%s' config must be a JSON object of settings, such as "
        "{\"size\": 1048576}%s%s",
        fn, cache_name, config == NULL ? ": " : "", config == NULL ? jerr.text : "");
    json_decref(config);
    return err;
  }
  /* All or nothing: settings added before a bad one are taken back. */
  size_t had = o->arg_count;
  const char *key;
  json_t *v;
  TRITONSERVER_Error *err = NULL;
  json_object_foreach(config, key, v) {
    err = setting_add(o, fn, cache_name, key, v);
    if (err != NULL) break;
  }
  json_decref(config);
  if (err != NULL)
    while (o->arg_count > had) free(o->args[--o->arg_count]);
  return err;
}

/* Where cache libraries are found (<dir>/<name>/libtritoncache_<name>.so). */
TRITONSERVER_Error *TRITONSERVER_ServerOptionsSetCacheDirectory(
    TRITONSERVER_ServerOptions *o, const char *dir) {
  const char *fn = "TRITONSERVER_ServerOptionsSetCacheDirectory";
  if (o == NULL) return SRV_EMBED_NULL(fn, "options");
  if (dir == NULL) return SRV_EMBED_NULL(fn, "cache_dir");
  return srv_embed_flag_add(o, fn, "cache-directory", "%s", dir);
}
