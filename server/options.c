/* Command-line parsing (see options.h) over the table of options_flags.c:
 * each flag's kind says how its value is read and where it goes. Main
 * thread only. */
#include "server/options.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/cache/cache_config.h"
#include "server/common/host_policy.h"
#include "server/common/log.h"
#include "server/common/memory.h"
#include "server/common/restricted.h"
#include "server/options_flags.h"

static const flag_t *flag_find(const char *name, size_t len) {
  for (size_t i = 0; i < srv_option_flag_count; i++)
    if (strlen(srv_option_flags[i].name) == len &&
        strncmp(srv_option_flags[i].name, name, len) == 0)
      return &srv_option_flags[i];
  return NULL;
}

static srv_status_t *parse_bool(const char *name, const char *value, bool *out) {
  if (!strcmp(value, "true") || !strcmp(value, "1")) {
    *out = true;
  } else if (!strcmp(value, "false") || !strcmp(value, "0")) {
    *out = false;
  } else {
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "--%s expects true or false, got '%s'", name, value);
  }
  return NULL;
}

/* Decimal digits only: strtoull alone takes "-1" and leading blanks. */
static bool parse_u64(const char *s, uint64_t *out) {
  if (*s < '0' || *s > '9') return false;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *out = v;
  return true;
}

/* "<GPU id>:<bytes>" of --cuda-memory-pool-byte-size. */
static bool pool_setting_parse(const char *c, int *device, uint64_t *bytes) {
  const char *colon = strchr(c, ':');
  char id[16];
  if (colon == NULL || (size_t)(colon - c) >= sizeof id) return false;
  memcpy(id, c, (size_t)(colon - c));
  id[colon - c] = '\0';
  uint64_t d;
  if (!parse_u64(id, &d) || d > INT32_MAX || !parse_u64(colon + 1, bytes)) return false;
  *device = (int)d;
  return true;
}

bool srv_options_rate_resource_parse(const char *text, size_t *name_len, uint64_t *count,
                                     int32_t *device) {
  const char *c1 = strchr(text, ':');
  if (c1 == NULL || c1 == text || (size_t)(c1 - text) > SRV_RATE_RESOURCE_NAME_MAX)
    return false;
  const char *c2 = strchr(c1 + 1, ':');
  char num[24];
  size_t n = c2 != NULL ? (size_t)(c2 - c1 - 1) : strlen(c1 + 1);
  if (n >= sizeof num) return false;
  memcpy(num, c1 + 1, n);
  num[n] = '\0';
  if (!parse_u64(num, count) || *count > INT32_MAX) return false;
  *device = -1;
  uint64_t d;
  if (c2 != NULL && strcmp(c2 + 1, "-1") != 0) {
    if (!parse_u64(c2 + 1, &d) || d > INT32_MAX) return false;
    *device = (int32_t)d;
  }
  *name_len = (size_t)(c1 - text);
  return true;
}

srv_status_t *srv_options_rate_resource_check(const char *text) {
  size_t len;
  uint64_t count;
  int32_t device;
  if (srv_options_rate_resource_parse(text, &len, &count, &device)) return NULL;
  /* tritonserver's text first: scripts match on it. */
  return srv_status_new(
      GRPC_STATUS_INVALID_ARGUMENT,
      "--rate-limit-resource option format is "
      "'<resource_name>:<count>:<device>' or '<resource_name>:<count>'. "
      "Got %s (a name of 1 to %u bytes, a count of 0 to %d, a device of "
      "-1 for every device or a GPU id)",
      text, SRV_RATE_RESOURCE_NAME_MAX, INT32_MAX);
}

bool srv_options_rate_limited(const srv_options_t *opt) {
  return strcasecmp(opt->rate_limit, "execution_count") == 0;
}

static srv_status_t *flag_set(srv_options_t *opt, const flag_t *f, const char *value) {
  void *slot = (char *)opt + f->offset;
  switch (f->kind) {
    case FLAG_STRING:
      free(*(char **)slot);
      *(char **)slot = srv_strdup(value);
      return NULL;
    case FLAG_STRING_LIST: {
      char ***list = slot;
      size_t *count = (size_t *)((char *)slot + sizeof(char **));
      char **grown = realloc(*list, (*count + 1) * sizeof *grown);
      if (grown == NULL) SRV_FATAL("out of memory");
      grown[*count] = srv_strdup(value);
      *list = grown;
      *count += 1;
      return NULL;
    }
    case FLAG_INT: {
      char *end;
      errno = 0;
      long v = strtol(value, &end, 10);
      if (errno != 0 || end == value || *end != '\0' || v < f->min || v > f->max)
        return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                              "--%s expects an integer in [%ld, %ld], got '%s'", f->name,
                              f->min, f->max, value);
      *(int *)slot = (int)v;
      return NULL;
    }
    case FLAG_BOOL:
      return parse_bool(f->name, value, (bool *)slot);
    case FLAG_DOUBLE: {
      char *end;
      errno = 0;
      double v = strtod(value, &end);
      if (errno != 0 || end == value || *end != '\0' || !(v >= (double)f->min) ||
          !(v <= (double)f->max))
        return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                              "--%s expects a number in [%ld, %ld], got '%s'", f->name,
                              f->min, f->max, value);
      *(double *)slot = v;
      return NULL;
    }
    case FLAG_U64: {
      uint64_t v;
      if (!parse_u64(value, &v) || v < (uint64_t)f->min)
        return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                              "--%s expects an integer in [%ld, %llu], got '%s'", f->name,
                              f->min, (unsigned long long)UINT64_MAX, value);
      *(uint64_t *)slot = v;
      return NULL;
    }
  }
  return NULL;
}

char *srv_options_backend_directory_for(const char *exe) {
  /* tools/install's layout: PREFIX/bin/nereid beside PREFIX/backends. The
   * executable's real path (/proc/self/exe has symlinks resolved), so a
   * symlink to nereid elsewhere still finds the installation's backends. */
  char dir[PATH_MAX];
  char *up = NULL;
  if (exe != NULL && snprintf(dir, sizeof dir, "%s", exe) < (int)sizeof dir) {
    char *slash = strrchr(dir, '/'); /* PREFIX/bin/|nereid */
    if (slash != NULL && slash != dir) {
      *slash = '\0';
      up = strrchr(dir, '/'); /* PREFIX/|bin */
    }
  }
  struct stat sb;
  if (up != NULL && (size_t)(up - dir) + sizeof "/backends" <= sizeof dir) {
    memcpy(up, "/backends", sizeof "/backends");
    if (stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode)) return srv_strdup(dir);
  }
  return srv_strdup("/opt/tritonserver/backends");
}

static char *default_backend_directory(void) {
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return srv_options_backend_directory_for(NULL);
  exe[n] = '\0';
  return srv_options_backend_directory_for(exe);
}

static void options_defaults(srv_options_t *opt) {
  memset(opt, 0, sizeof *opt);
  opt->grpc_address = srv_strdup("0.0.0.0");
  opt->backend_directory = default_backend_directory();
  opt->repoagent_directory = srv_strdup("/opt/tritonserver/repoagents");
  opt->grpc_port = 8001;
  opt->http_address = srv_strdup("0.0.0.0");
  opt->http_port = 8000;
  opt->http_threads = 8;
  opt->http_max_input_size = 64 << 20;
  opt->allow_cpu_metrics = true;
  opt->metrics_address = srv_strdup("0.0.0.0");
  opt->metrics_port = 8002;
  opt->metrics_interval_ms = 2000;
  opt->exit_timeout_secs = 30;
  opt->grpc_max_receive_message_size = INT_MAX;
  opt->grpc_stream_max_queued_responses = 262144;
  opt->grpc_stream_max_queued_bytes = 256 << 20;
  opt->grpc_request_max_queued_responses = 65536;
  opt->grpc_request_max_queued_bytes = 64 << 20;
  opt->grpc_keepalive_time_ms = 7200000;
  opt->grpc_keepalive_timeout_ms = 20000;
  opt->grpc_http2_max_pings_without_data = 2;
  opt->grpc_http2_min_recv_ping_interval_ms = 300000;
  opt->grpc_http2_max_ping_strikes = 2;
  opt->grpc_max_concurrent_streams = 1024;
  opt->grpc_infer_response_compression_level = srv_strdup("none");
  opt->grpc_ssl_refresh_interval_secs = 60;
  opt->repository_poll_secs = 15;
  opt->model_load_threads = 4;
  opt->allow_grpc = true;
  opt->allow_http = true;
  opt->allow_metrics = true;
  opt->model_control_mode = srv_strdup("none");
  opt->strict_readiness = true;
  opt->exit_on_error = true;
  opt->pinned_memory_pool_byte_size = 256ull << 20;
  opt->log_info = true;
  opt->log_warning = true;
  opt->log_error = true;
  opt->log_format = srv_strdup("default");
  opt->server_id = srv_strdup("triton");
  opt->model_config_name = srv_strdup("");
  opt->allow_gpu_metrics = true;
  opt->min_compute_capability = SRV_MIN_COMPUTE_CAPABILITY_DEFAULT;
  opt->rate_limit = srv_strdup("off");
}

srv_status_t *srv_options_parse(srv_options_t *opt, int argc, char **argv) {
  options_defaults(opt);
  bool strict_given = false;
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    if (strncmp(arg, "--", 2) != 0)
      return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                            "unexpected argument '%s' (flags start with --)", arg);
    const char *name = arg + 2;
    const char *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    const flag_t *f = flag_find(name, len);
    if (f == NULL)
      return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT, "unknown flag '--%.*s'",
                            (int)len, name);
    const char *value = eq ? eq + 1 : NULL;
    if (value == NULL && f->kind == FLAG_BOOL) {
      /* "--flag false", as tritonserver takes it; a bare flag turns it on. */
      bool next_is_bool =
          i + 1 < argc &&
          (!strcmp(argv[i + 1], "true") || !strcmp(argv[i + 1], "false") ||
           !strcmp(argv[i + 1], "1") || !strcmp(argv[i + 1], "0"));
      value = next_is_bool ? argv[++i] : "true";
    } else if (value == NULL) {
      if (i + 1 >= argc)
        return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT, "flag '--%s' needs a value",
                              f->name);
      value = argv[++i];
    }
    srv_status_t *st = flag_set(opt, f, value);
    if (st != NULL) return st;
    if (f->offset == OPT(strict_model_config)) {
      strict_given = true;
      SRV_WARN(
          "'--strict-model-config' has been deprecated! Please use "
          "'--disable-auto-complete-config' instead.");
    }
  }
  /* tritonserver's rule: the newer flag wins over the older one. */
  if (opt->disable_auto_complete_config) {
    if (strict_given && !opt->strict_model_config)
      SRV_WARN(
          "Overriding deprecated '--strict-model-config' from False to True in favor "
          "of '--disable-auto-complete-config'!");
    opt->strict_model_config = true;
  }
  return NULL;
}

/* Parses both restriction flags once, for their errors; each frontend
 * parses its own again when it starts. Triton's texts, after "Bad option". */
static srv_status_t *restrictions_validate(const srv_options_t *opt) {
  srv_restrictions_t r;
  srv_status_t *st = srv_restrictions_parse(
      &r, opt->grpc_restricted_protocols, opt->grpc_restricted_protocol_count,
      "grpc-restricted-protocol", SRV_GRPC_RESTRICTED_PREFIX, "protocol");
  srv_restrictions_free(&r);
  const char *flag = "grpc-restricted-protocol";
  if (st == NULL) {
    st = srv_restrictions_parse(&r, opt->http_restricted_apis,
                                opt->http_restricted_api_count, "http-restricted-api", "",
                                "api");
    srv_restrictions_free(&r);
    flag = "http-restricted-api";
  }
  if (st == NULL) return NULL;
  srv_status_t *bad = srv_status_new(srv_status_code(st), "Bad option: \"--%s\".\n%s",
                                     flag, srv_status_message(st));
  srv_status_free(st);
  return bad;
}

int srv_options_compression_level(const srv_options_t *opt) {
  static const char *const levels[] = {"none", "low", "medium", "high"};
  for (int i = 0; i < 4; i++)
    if (strcasecmp(opt->grpc_infer_response_compression_level, levels[i]) == 0) return i;
  return -1;
}

#define BAD(...) srv_status_new(GRPC_STATUS_INVALID_ARGUMENT, __VA_ARGS__)

/* "<GPU id>:<fraction>" of --model-load-gpu-limit. */
static bool gpu_limit_parse(const char *c, int *device, double *fraction) {
  const char *colon = strchr(c, ':');
  char id[16];
  uint64_t d;
  if (colon == NULL || (size_t)(colon - c) >= sizeof id) return false;
  memcpy(id, c, (size_t)(colon - c));
  id[colon - c] = '\0';
  if (!parse_u64(id, &d) || d > INT32_MAX || colon[1] < '0' || colon[1] > '9')
    return false;
  *device = (int)d;
  char *end;
  errno = 0;
  *fraction = strtod(colon + 1, &end);
  return errno == 0 && *end == '\0' && *fraction >= 0.0;
}

/* tritonserver's flags for what Nereid has in part or not at all: the
 * form first, then what asks for a missing feature, naming it. */
static srv_status_t *triton_flags_validate(const srv_options_t *opt) {
  if (strlen(opt->server_id) > SRV_SERVER_ID_MAX)
    return BAD("--id is longer than %d bytes", SRV_SERVER_ID_MAX);
  const char *cn = opt->model_config_name;
  if (strlen(cn) > SRV_MODEL_CONFIG_NAME_MAX || strchr(cn, '/') != NULL ||
      strcmp(cn, ".") == 0 || strcmp(cn, "..") == 0)
    return BAD(
        "--model-config-name '%.*s': expected a file name of at most %d bytes "
        "(without '/'), read as <model>/configs/<name>.pbtxt",
        SRV_MODEL_CONFIG_NAME_MAX, cn, SRV_MODEL_CONFIG_NAME_MAX);
  for (size_t i = 0; i < opt->cuda_virtual_address_size_count; i++) {
    int device;
    uint64_t bytes;
    if (!pool_setting_parse(opt->cuda_virtual_address_sizes[i], &device, &bytes))
      return BAD(
          "--cuda-virtual-address-size '%s': expected <GPU id>:<bytes>, both "
          "non-negative integers",
          opt->cuda_virtual_address_sizes[i]);
  }
  for (size_t i = 0; i < opt->model_load_gpu_limit_count; i++) {
    double fraction;
    int device;
    const char *c = opt->model_load_gpu_limits[i];
    if (!gpu_limit_parse(c, &device, &fraction))
      return BAD(
          "--model-load-gpu-limit '%s': expected <GPU id>:<fraction>, a fraction "
          ">= 0",
          c);
  }
  srv_status_t *st = srv_host_policy_check(opt->host_policies, opt->host_policy_count);
  if (st == NULL)
    st = srv_host_policy_check_nodes(opt->host_policies, opt->host_policy_count);
  if (st != NULL) return st;
  /* tritonserver reads the mode without case. */
  if (strcasecmp(opt->rate_limit, "off") != 0 &&
      strcasecmp(opt->rate_limit, "execution_count") != 0)
    return BAD(
        "invalid argument for --rate-limit: expected off or execution_count, got "
        "'%s'",
        opt->rate_limit);
  for (size_t i = 0; i < opt->rate_limit_resource_count && st == NULL; i++)
    st = srv_options_rate_resource_check(opt->rate_limit_resources[i]);
  if (st != NULL) return st;
  srv_cache_choice_t cache;
  srv_status_t *cst = srv_cache_config_parse(opt->cache_configs, opt->cache_config_count,
                                             opt->response_cache_byte_size, &cache);
  srv_cache_choice_free(&cache);
  return cst;
}

srv_status_t *srv_options_validate(const srv_options_t *opt) {
  srv_status_t *tst = triton_flags_validate(opt);
  if (tst != NULL) return tst;
  for (size_t i = 0; i < opt->backend_config_count; i++) {
    const char *c = opt->backend_configs[i];
    const char *comma = strchr(c, ',');
    if (comma == NULL || comma == c || strchr(comma, '=') == NULL || comma[1] == '=')
      return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                            "--backend-config '%s': expected <backend>,<key>=<value>", c);
  }
  for (size_t i = 0; i < opt->cuda_memory_pool_count; i++) {
    int device;
    uint64_t bytes;
    if (!pool_setting_parse(opt->cuda_memory_pools[i], &device, &bytes))
      return srv_status_new(
          GRPC_STATUS_INVALID_ARGUMENT,
          "--cuda-memory-pool-byte-size '%s': expected <GPU id>:<bytes>, "
          "both non-negative integers",
          opt->cuda_memory_pools[i]);
  }
  srv_status_t *st = restrictions_validate(opt);
  if (st != NULL) return st;
  srv_log_format_t log_format;
  if (!srv_log_format_parse(opt->log_format, &log_format))
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "invalid argument for --log-format, got: %s", opt->log_format);
  if (srv_options_compression_level(opt) < 0)
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "invalid argument for --grpc_infer_response_compression_level");
  const char *mode = opt->model_control_mode;
  if (strcmp(mode, "none") != 0 && strcmp(mode, "explicit") != 0 &&
      strcmp(mode, "poll") != 0)
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "--model-control-mode expects none, explicit or poll, got '%s'",
                          mode);
  if (opt->load_model_count > 0 && strcmp(mode, "explicit") != 0)
    return srv_status_new(
        GRPC_STATUS_INVALID_ARGUMENT,
        "--load-model is only allowed with --model-control-mode=explicit");
  if (opt->model_repository_count == 0)
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "--model-repository must be specified");
  for (size_t i = 0; i < opt->model_repository_count; i++) {
    struct stat sb;
    const char *path = opt->model_repositories[i];
    /* tritonserver's cloud repositories: said by name, not as a missing
     * folder, so the user knows what to change. */
    if (strncmp(path, "s3://", 5) == 0 || strncmp(path, "gs://", 5) == 0 ||
        strncmp(path, "as://", 5) == 0)
      return srv_status_new(GRPC_STATUS_UNIMPLEMENTED,
                            "model repository '%s': Nereid reads model repositories from "
                            "local folders only (no s3://, gs:// or as:// storage); copy "
                            "the repository to a folder",
                            path);
    if (stat(path, &sb) != 0)
      return srv_status_new(GRPC_STATUS_NOT_FOUND,
                            "failed to stat model repository '%s': %s", path,
                            strerror(errno));
    if (!S_ISDIR(sb.st_mode))
      return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                            "model repository '%s' is not a directory", path);
  }
  return NULL;
}

double srv_options_gpu_load_limit(const srv_options_t *opt, int device) {
  double limit = 1.0;
  for (size_t i = 0; i < opt->model_load_gpu_limit_count; i++) {
    int d;
    double f;
    if (gpu_limit_parse(opt->model_load_gpu_limits[i], &d, &f) && d == device) limit = f;
  }
  return limit;
}

uint64_t srv_options_cuda_pool_bytes(const srv_options_t *opt, int device) {
  uint64_t bytes = 64ull << 20;
  /* The last setting for a device wins, as a later flag overrides. */
  for (size_t i = 0; i < opt->cuda_memory_pool_count; i++) {
    int d;
    uint64_t b;
    if (pool_setting_parse(opt->cuda_memory_pools[i], &d, &b) && d == device) bytes = b;
  }
  return bytes;
}

void srv_options_usage(FILE *out) {
  fprintf(out, "Usage: nereid --model-repository=PATH [flags]\n\nFlags:\n");
  for (size_t i = 0; i < srv_option_flag_count; i++) {
    const char *arg = srv_option_flags[i].kind == FLAG_BOOL ? "[=true|false]" : "=VALUE";
    fprintf(out, "  --%s%s\n      %s\n", srv_option_flags[i].name, arg,
            srv_option_flags[i].help);
  }
}

void srv_options_free(srv_options_t *opt) {
  for (size_t i = 0; i < opt->model_repository_count; i++)
    free(opt->model_repositories[i]);
  free(opt->model_repositories);
  for (size_t i = 0; i < opt->load_model_count; i++) free(opt->load_models[i]);
  free(opt->load_models);
  for (size_t i = 0; i < opt->backend_config_count; i++) free(opt->backend_configs[i]);
  free(opt->backend_configs);
  free(opt->grpc_address);
  free(opt->http_address);
  free(opt->metrics_address);
  for (size_t i = 0; i < opt->metrics_config_count; i++) free(opt->metrics_configs[i]);
  free(opt->metrics_configs);
  for (size_t i = 0; i < opt->cuda_memory_pool_count; i++)
    free(opt->cuda_memory_pools[i]);
  free(opt->cuda_memory_pools);
  for (size_t i = 0; i < opt->grpc_restricted_protocol_count; i++)
    free(opt->grpc_restricted_protocols[i]);
  free(opt->grpc_restricted_protocols);
  for (size_t i = 0; i < opt->http_restricted_api_count; i++)
    free(opt->http_restricted_apis[i]);
  free(opt->http_restricted_apis);
  free(opt->grpc_infer_response_compression_level);
  free(opt->backend_directory);
  free(opt->model_control_mode);
  free(opt->grpc_server_cert);
  free(opt->grpc_server_key);
  free(opt->grpc_root_cert);
  free(opt->grpc_health_address);
  free(opt->log_file);
  free(opt->log_format);
  for (size_t i = 0; i < opt->trace_config_count; i++) free(opt->trace_configs[i]);
  free(opt->trace_configs);
  for (size_t i = 0; i < opt->trace_level_count; i++) free(opt->trace_levels[i]);
  free(opt->trace_levels);
  free(opt->trace_file);
  free(opt->trace_rate);
  free(opt->trace_count);
  free(opt->trace_log_frequency);
  free(opt->server_id);
  free(opt->model_config_name);
  free(opt->cache_directory);
  free(opt->repoagent_directory);
  free(opt->rate_limit);
  char **lists[] = {opt->cuda_virtual_address_sizes, opt->model_load_gpu_limits,
                    opt->host_policies, opt->rate_limit_resources, opt->cache_configs};
  size_t counts[] = {opt->cuda_virtual_address_size_count,
                     opt->model_load_gpu_limit_count, opt->host_policy_count,
                     opt->rate_limit_resource_count, opt->cache_config_count};
  for (size_t l = 0; l < sizeof lists / sizeof lists[0]; l++) {
    for (size_t i = 0; i < counts[l]; i++) free(lists[l][i]);
    free(lists[l]);
  }
  memset(opt, 0, sizeof *opt);
}
