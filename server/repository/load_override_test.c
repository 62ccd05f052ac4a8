/* RepositoryModelLoad parameters: parsing and its error paths, config JSON
 * in both field spellings, and the private folder written from the files
 * and removed again. Folders live under $TEST_TMPDIR. */
#define _GNU_SOURCE /* nftw */
#include "server/repository/load_override.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test/unit/unit.h"

/* ---- helpers ------------------------------------------------------------- */

static inference_RepositoryModelLoadRequest *req_new(upb_Arena *a, const char *model) {
  inference_RepositoryModelLoadRequest *r = inference_RepositoryModelLoadRequest_new(a);
  inference_RepositoryModelLoadRequest_set_model_name(r,
                                                      upb_StringView_FromString(model));
  return r;
}

static inference_ModelRepositoryParameter *param_add(
    inference_RepositoryModelLoadRequest *r, const char *key, upb_Arena *a) {
  inference_ModelRepositoryParameter *p = inference_ModelRepositoryParameter_new(a);
  inference_RepositoryModelLoadRequest_parameters_set(r, upb_StringView_FromString(key),
                                                      p, a);
  return p;
}

static void add_string(inference_RepositoryModelLoadRequest *r, const char *key,
                       const char *value, upb_Arena *a) {
  inference_ModelRepositoryParameter_set_string_param(param_add(r, key, a),
                                                      upb_StringView_FromString(value));
}

static void add_bytes(inference_RepositoryModelLoadRequest *r, const char *key,
                      const void *data, size_t size, upb_Arena *a) {
  inference_ModelRepositoryParameter_set_bytes_param(
      param_add(r, key, a), upb_StringView_FromDataAndSize(data, size));
}

static void add_bool(inference_RepositoryModelLoadRequest *r, const char *key, bool v,
                     upb_Arena *a) {
  inference_ModelRepositoryParameter_set_bool_param(param_add(r, key, a), v);
}

/* Parses and expects INVALID_ARGUMENT whose message holds `want1` and
 * `want2` (NULL: anything). */
static void parse_fails(inference_RepositoryModelLoadRequest *r, upb_Arena *a,
                        const char *want1, const char *want2) {
  srv_load_override_t o;
  srv_status_t *st = srv_load_override_parse(r, a, &o);
  CHECK(st != NULL);
  if (st == NULL) return;
  CHECK(srv_status_code(st) == GRPC_STATUS_INVALID_ARGUMENT);
  const char *msg = srv_status_message(st);
  if (strstr(msg, want1) == NULL || (want2 != NULL && strstr(msg, want2) == NULL)) {
    fprintf(stderr, "  message: %s\n", msg);
    CHECK(!"the message names the model and the parameter");
  }
  CHECK(o.config_json == NULL && o.file_count == 0 && o.files == NULL);
  srv_status_free(st);
}

/* Parses and expects Triton's answer to files that cannot make a model
 * folder: INTERNAL, "failed to poll from model repository". */
static void parse_polls(inference_RepositoryModelLoadRequest *r, upb_Arena *a,
                        const char *model) {
  srv_load_override_t o;
  srv_status_t *st = srv_load_override_parse(r, a, &o);
  REQUIRE(st != NULL);
  CHECK(srv_status_code(st) == GRPC_STATUS_INTERNAL);
  char want[128];
  snprintf(want, sizeof want, "failed to load '%s', failed to poll from model repository",
           model);
  CHECK_STREQ(srv_status_message(st), want);
  CHECK(o.config_json == NULL && o.file_count == 0 && o.files == NULL);
  srv_status_free(st);
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb, (void)flag, (void)ftw;
  return remove(path);
}

static void rm_tree(const char *path) { nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS); }

/* A fresh folder under $TEST_TMPDIR, made $TMPDIR so that materialize
 * writes there. */
static char tmp_root[PATH_MAX];

static void tmp_begin(void) {
  const char *base = getenv("TEST_TMPDIR");
  if (base == NULL || base[0] == '\0') base = "/tmp";
  snprintf(tmp_root, sizeof tmp_root, "%s/load_override-XXXXXX", base);
  if (mkdtemp(tmp_root) == NULL) {
    perror("mkdtemp");
    abort();
  }
  setenv("TMPDIR", tmp_root, 1);
}

static void tmp_end(void) {
  unsetenv("TMPDIR");
  rm_tree(tmp_root);
}

static size_t dir_count(const char *path) {
  DIR *d = opendir(path);
  if (d == NULL) return (size_t)-1;
  size_t n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL)
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) n++;
  closedir(d);
  return n;
}

/* The file's bytes equal data[0..size). */
static bool file_is(const char *dir, const char *rel, const void *data, size_t size) {
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/%s", dir, rel);
  FILE *f = fopen(path, "rb");
  if (f == NULL) return false;
  char *buf = malloc(size + 1);
  size_t got = fread(buf, 1, size + 1, f);
  fclose(f);
  bool same = got == size && memcmp(buf, data, size) == 0;
  free(buf);
  return same;
}

static bool exists(const char *path) {
  struct stat sb;
  return lstat(path, &sb) == 0;
}

/* ---- parse --------------------------------------------------------------- */

static void parse_reads_config_and_files(void) {
  upb_Arena *a = upb_Arena_New();
  inference_RepositoryModelLoadRequest *r = req_new(a, "m");
  static const char model[] = "\x00\x01onnx\xff";
  add_string(r, "config", "{\"backend\":\"identity\"}", a);
  add_bytes(r, "file:1/model.onnx", model, sizeof model, a);
  add_bytes(r, "file:./labels.txt", "a\nb\n", 4, a);
  add_bytes(r, "file:2//sub/./x", "", 0, a);
  srv_load_override_t o;
  srv_status_t *st = srv_load_override_parse(r, a, &o);
  REQUIRE(st == NULL);
  REQUIRE(o.config_json != NULL);
  CHECK(o.config_json_len == strlen("{\"backend\":\"identity\"}"));
  CHECK(memcmp(o.config_json, "{\"backend\":\"identity\"}", o.config_json_len) == 0);
  REQUIRE(o.file_count == 3);
  /* sorted by normalized path */
  CHECK_STREQ(o.files[0].path, "1/model.onnx");
  CHECK_STREQ(o.files[1].path, "2/sub/x");
  CHECK_STREQ(o.files[2].path, "labels.txt");
  CHECK(o.files[0].data == (const void *)model); /* referenced, not copied */
  CHECK_EQ_U64(o.files[0].size, sizeof model);
  CHECK_EQ_U64(o.files[1].size, 0);
  CHECK_EQ_U64(o.files[2].size, 4);
  upb_Arena_Free(a);
}

static void parse_without_parameters_overrides_nothing(void) {
  upb_Arena *a = upb_Arena_New();
  srv_load_override_t o;
  CHECK(srv_load_override_parse(req_new(a, "m"), a, &o) == NULL);
  CHECK(o.config_json == NULL && o.files == NULL && o.file_count == 0);
  /* config alone, even empty, is present */
  inference_RepositoryModelLoadRequest *r = req_new(a, "m");
  add_string(r, "config", "", a);
  CHECK(srv_load_override_parse(r, a, &o) == NULL);
  CHECK(o.config_json != NULL && o.config_json_len == 0 && o.file_count == 0);
  upb_Arena_Free(a);
}

static void parse_errors_name_model_and_parameter(void) {
  upb_Arena *a = upb_Arena_New();
  inference_RepositoryModelLoadRequest *r;

  r = req_new(a, "alpha"); /* config must be a string */
  add_bytes(r, "config", "{}", 2, a);
  parse_fails(r, a, "'alpha'", "'config', expected string_param");
  r = req_new(a, "alpha");
  add_bool(r, "config", true, a);
  parse_fails(r, a, "'alpha'", "'config', expected string_param");
  r = req_new(a, "alpha");
  param_add(r, "config", a); /* no value set at all */
  parse_fails(r, a, "'alpha'", "'config', expected string_param");

  r = req_new(a, "beta"); /* a file must be bytes */
  add_string(r, "config", "{}", a);
  add_string(r, "file:1/model.onnx", "text", a);
  parse_fails(r, a, "'beta'", "'file:1/model.onnx', expected bytes_param");

  static const char *const bad_paths[] = {
      "file:",   "file:/etc/passwd", "file:../x", "file:1/../../x", "file:a/..",
      "file:..", "file:.",           "file://",   "file:./",
  };
  for (size_t i = 0; i < sizeof bad_paths / sizeof bad_paths[0]; i++) {
    r = req_new(a, "gamma");
    add_string(r, "config", "{}", a);
    add_bytes(r, bad_paths[i], "x", 1, a);
    parse_polls(r, a, "gamma");
  }

  r = req_new(a, "delta"); /* the same file twice, spelled differently */
  add_string(r, "config", "{}", a);
  add_bytes(r, "file:1/model.onnx", "x", 1, a);
  add_bytes(r, "file:./1//model.onnx", "y", 1, a);
  parse_polls(r, a, "delta");

  r = req_new(a, "epsilon"); /* files need the config (Triton's rule) */
  add_bytes(r, "file:1/model.onnx", "x", 1, a);
  parse_polls(r, a, "epsilon");

  r = req_new(a, "zeta"); /* tritonserver refuses other names */
  add_string(r, "config", "{}", a);
  add_bool(r, "unload_dependents", true, a);
  parse_fails(r, a, "'zeta'", "unrecognized load parameter 'unload_dependents'");
  upb_Arena_Free(a);
}

/* ---- config -------------------------------------------------------------- */

static void check_config(const inference_ModelConfig *c) {
  upb_StringView name = inference_ModelConfig_name(c);
  CHECK(name.size == 1 && name.data[0] == 'm');
  CHECK(inference_ModelConfig_max_batch_size(c) == 8);
  size_t n;
  const inference_ModelInstanceGroup *const *g =
      inference_ModelConfig_instance_group(c, &n);
  REQUIRE(n == 1);
  CHECK(inference_ModelInstanceGroup_kind(g[0]) == inference_ModelInstanceGroup_KIND_CPU);
  CHECK(inference_ModelInstanceGroup_count(g[0]) == 2);
  const inference_ModelInput *const *in = inference_ModelConfig_input(c, &n);
  REQUIRE(n == 1);
  CHECK(inference_ModelInput_data_type(in[0]) == inference_TYPE_FP32);
  const int64_t *dims = inference_ModelInput_dims(in[0], &n);
  REQUIRE(n == 3);
  CHECK(dims[0] == 4 && dims[1] == 8 && dims[2] == -1);
  const inference_ModelDynamicBatching *db = inference_ModelConfig_dynamic_batching(c);
  REQUIRE(db != NULL);
  CHECK(inference_ModelDynamicBatching_max_queue_delay_microseconds(db) == 100);
}

static void config_accepts_snake_and_camel_case(void) {
  static const char snake[] =
      "{\"max_batch_size\": 8,"
      " \"instance_group\": [{\"kind\": \"KIND_CPU\", \"count\": 2}],"
      " \"input\": [{\"name\": \"IN\", \"data_type\": \"TYPE_FP32\","
      "             \"dims\": [4, \"8\", -1]}],"
      " \"dynamic_batching\": {\"max_queue_delay_microseconds\": \"100\"}}";
  static const char camel[] =
      "{\"name\": \"m\", \"maxBatchSize\": 8,"
      " \"instanceGroup\": [{\"kind\": \"KIND_CPU\", \"count\": 2}],"
      " \"input\": [{\"name\": \"IN\", \"dataType\": \"TYPE_FP32\","
      "             \"dims\": [\"4\", 8, \"-1\"]}],"
      " \"dynamicBatching\": {\"maxQueueDelayMicroseconds\": 100}}";
  static const char mixed[] =
      "{\"name\": \"\", \"maxBatchSize\": 8,"
      " \"instance_group\": [{\"kind\": 2, \"count\": 2}],"
      " \"input\": [{\"name\": \"IN\", \"dataType\": \"TYPE_FP32\", \"dims\": [4, 8, "
      "-1]}],"
      " \"dynamic_batching\": {\"maxQueueDelayMicroseconds\": 100}}";
  const char *docs[] = {snake, camel, mixed};
  for (size_t i = 0; i < 3; i++) {
    upb_Arena *a = upb_Arena_New();
    inference_ModelConfig *c = NULL;
    srv_status_t *st = srv_load_override_config("m", docs[i], strlen(docs[i]), a, &c);
    if (st != NULL) fprintf(stderr, "  doc %zu: %s\n", i, srv_status_message(st));
    CHECK(st == NULL);
    if (c != NULL) check_config(c);
    srv_status_free(st);
    upb_Arena_Free(a);
  }
}

static void config_name_rules_and_errors(void) {
  upb_Arena *a = upb_Arena_New();
  inference_ModelConfig *c;
  /* absent name: the model's */
  CHECK(srv_load_override_config("simple", "{}", 2, a, &c) == NULL);
  REQUIRE(c != NULL);
  upb_StringView n = inference_ModelConfig_name(c);
  CHECK(n.size == 6 && memcmp(n.data, "simple", 6) == 0);

  struct {
    const char *json, *want;
  } bad[] = {
      {"{\"name\": \"other\"}", "'other'"}, /* a different name */
      {"{\"max_batch_size\": ", NULL},      /* truncated */
      {"{\"no_such_field\": 1}", NULL},     /* unknown field */
      {"{\"instance_group\": [{\"kind\": \"KIND_NOPE\"}]}", NULL},
      {"{\"max_batch_size\": \"eight\"}", NULL},
      {"", NULL},
      {"[]", NULL},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    c = (inference_ModelConfig *)1;
    srv_status_t *st =
        srv_load_override_config("simple", bad[i].json, strlen(bad[i].json), a, &c);
    CHECK(st != NULL);
    if (st == NULL) continue;
    CHECK(c == NULL);
    CHECK(srv_status_code(st) == GRPC_STATUS_INVALID_ARGUMENT);
    const char *msg = srv_status_message(st);
    CHECK(strstr(msg, "'simple'") != NULL);
    if (bad[i].want != NULL) CHECK(strstr(msg, bad[i].want) != NULL);
    /* upb's own reason follows the prefix */
    const char *tail = strstr(msg, "invalid config override: ");
    if (bad[i].want == NULL) CHECK(tail != NULL && tail[25] != '\0');
    srv_status_free(st);
  }
  upb_Arena_Free(a);
}

/* A string field of bytes that are not UTF-8 passed upb's JSON decoder,
 * and then the copy of the config that loading takes failed, fatally
 * (config_json_fuzz). Escapes and valid characters stay accepted, and what
 * is accepted survives that copy. */
static void config_text_must_be_utf8(void) {
  upb_Arena *a = upb_Arena_New();
  static const char *const bad[] = {
      "{\"backend\": \"\xff\"}", "{\"backend\": \"b\xc3\"}", /* a sequence cut short */
      "{\"backend\": \"\xed\xa0\x80\"}",                     /* a surrogate, encoded */
      "{\"backend\": \"b\"} \xc0\xaf", /* after the object: the text */
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    inference_ModelConfig *c = (inference_ModelConfig *)1;
    srv_status_t *st = srv_load_override_config("m", bad[i], strlen(bad[i]), a, &c);
    REQUIRE(st != NULL);
    CHECK(c == NULL);
    CHECK_STREQ(srv_status_message(st),
                "failed to load 'm': invalid config override: the text is not valid "
                "UTF-8");
    srv_status_free(st);
  }
  static const char good[] = "{\"backend\": \"\xc3\xa9\\u00e9\\ud83d\\ude00\"}";
  inference_ModelConfig *c;
  REQUIRE(srv_load_override_config("m", good, strlen(good), a, &c) == NULL);
  size_t len;
  char *bytes = inference_ModelConfig_serialize(c, a, &len);
  REQUIRE(bytes != NULL);
  inference_ModelConfig *copy = inference_ModelConfig_parse(bytes, len, a);
  REQUIRE(copy != NULL);
  upb_StringView b = inference_ModelConfig_backend(copy);
  CHECK(b.size == 8 && memcmp(b.data, "\xc3\xa9\xc3\xa9\xf0\x9f\x98\x80", 8) == 0);
  upb_Arena_Free(a);
}

/* "file:" + `depth` components of `width` bytes each ("aa/aa/aa"). */
static const char *deep_key(char *buf, size_t size, size_t depth, size_t width) {
  size_t n = (size_t)snprintf(buf, size, "file:");
  for (size_t d = 0; d < depth && n + width + 2 < size; d++) {
    if (d > 0) buf[n++] = '/';
    memset(buf + n, 'a', width);
    n += width;
  }
  buf[n] = '\0';
  return buf;
}

static void parse_refuses_past_the_limits(void) {
  upb_Arena *a = upb_Arena_New();
  char key[8192], limit[32];
  srv_load_override_t o;
  /* Depth: SRV_LOAD_OVERRIDE_DEPTH_MAX components, not one more. */
  inference_RepositoryModelLoadRequest *r = req_new(a, "m");
  add_string(r, "config", "{}", a);
  add_bytes(r, deep_key(key, sizeof key, SRV_LOAD_OVERRIDE_DEPTH_MAX, 1), "x", 1, a);
  add_bytes(r, deep_key(key, sizeof key, 1, SRV_LOAD_OVERRIDE_NAME_MAX), "x", 1, a);
  CHECK(srv_load_override_parse(r, a, &o) == NULL);
  CHECK_EQ_U64(o.file_count, 2);
  r = req_new(a, "m");
  add_string(r, "config", "{}", a);
  add_bytes(r, deep_key(key, sizeof key, SRV_LOAD_OVERRIDE_DEPTH_MAX + 1, 1), "x", 1, a);
  snprintf(limit, sizeof limit, "more than the %d allowed", SRV_LOAD_OVERRIDE_DEPTH_MAX);
  parse_fails(r, a, "'m'", limit);
  /* A name longer than a file name may be. */
  r = req_new(a, "m");
  add_string(r, "config", "{}", a);
  add_bytes(r, deep_key(key, sizeof key, 2, SRV_LOAD_OVERRIDE_NAME_MAX + 1), "x", 1, a);
  parse_fails(r, a, "'m'", "longer than 255 bytes");
  /* Count: SRV_LOAD_OVERRIDE_FILES_MAX files, not one more. */
  for (int extra = 0; extra < 2; extra++) {
    r = req_new(a, "m");
    add_string(r, "config", "{}", a);
    for (int i = 0; i < SRV_LOAD_OVERRIDE_FILES_MAX + extra; i++) {
      snprintf(key, sizeof key, "file:1/f%d", i);
      add_bytes(r, key, "x", 1, a);
    }
    snprintf(limit, sizeof limit, "more than %d files", SRV_LOAD_OVERRIDE_FILES_MAX);
    if (extra == 0)
      CHECK(srv_load_override_parse(r, a, &o) == NULL);
    else
      parse_fails(r, a, "'m'", limit);
  }
  /* Bytes: parse reads only the sizes, so the views may claim more than
   * the small buffer they point at. */
  static const char small[1];
  r = req_new(a, "m");
  add_string(r, "config", "{}", a);
  add_bytes(r, "file:1/big", small, (size_t)SRV_LOAD_OVERRIDE_BYTES_MAX, a);
  CHECK(srv_load_override_parse(r, a, &o) == NULL);
  add_bytes(r, "file:1/one_more", small, 1, a);
  snprintf(limit, sizeof limit, "more than %llu bytes",
           (unsigned long long)SRV_LOAD_OVERRIDE_BYTES_MAX);
  parse_fails(r, a, "'m'", limit);
  upb_Arena_Free(a);
}

/* ---- materialize and remove ---------------------------------------------- */

static void materialize_writes_exact_bytes_and_remove_cleans(void) {
  tmp_begin();
  unsigned char blob[3000];
  for (size_t i = 0; i < sizeof blob; i++) blob[i] = (unsigned char)(i * 7 + 3);
  srv_model_file_t files[] = {
      {"1/model.bin", blob, sizeof blob},
      {"1/sub/deep/er/x.dat", "\0\1\2", 3},
      {"2/empty", NULL, 0},
      {"labels.txt", "a\nb\n", 4},
  };
  srv_load_override_t o = {"{}", 2, files, 4};
  char *dir = NULL;
  srv_status_t *st = srv_load_override_materialize("mymodel", &o, &dir);
  CHECK(st == NULL);
  REQUIRE(dir != NULL);
  /* <TMPDIR>/nereid-model-XXXXXX/mymodel */
  char parent[PATH_MAX], copy[PATH_MAX];
  snprintf(copy, sizeof copy, "%s", dir);
  CHECK_STREQ(basename(copy), "mymodel");
  snprintf(copy, sizeof copy, "%s", dir);
  snprintf(parent, sizeof parent, "%s", dirname(copy));
  snprintf(copy, sizeof copy, "%s", parent);
  CHECK(strncmp(basename(copy), "nereid-model-", 13) == 0);
  snprintf(copy, sizeof copy, "%s", parent);
  CHECK_STREQ(dirname(copy), tmp_root);
  struct stat sb;
  CHECK(stat(parent, &sb) == 0 && (sb.st_mode & 0777) == 0700);
  CHECK(file_is(dir, "1/model.bin", blob, sizeof blob));
  CHECK(file_is(dir, "1/sub/deep/er/x.dat", "\0\1\2", 3));
  CHECK(file_is(dir, "2/empty", "", 0));
  CHECK(file_is(dir, "labels.txt", "a\nb\n", 4));
  CHECK_EQ_U64(dir_count(dir), 3); /* 1, 2, labels.txt: nothing else */

  srv_load_override_remove(dir);
  CHECK(!exists(parent));
  CHECK_EQ_U64(dir_count(tmp_root), 0);
  free(dir);
  tmp_end();
}

static void materialize_refuses_bad_names_and_paths(void) {
  tmp_begin();
  srv_model_file_t ok_file = {"1/m", "x", 1};
  srv_load_override_t o = {"{}", 2, &ok_file, 1};
  static const char *const names[] = {"", ".", "..", "a/b", "/abs", "../up"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    char *dir = (char *)1;
    srv_status_t *st = srv_load_override_materialize(names[i], &o, &dir);
    CHECK(st != NULL && srv_status_code(st) == GRPC_STATUS_INVALID_ARGUMENT);
    CHECK(dir == NULL);
    srv_status_free(st);
  }
  /* Paths that escape, built by hand (parse would refuse them first). */
  static const char *const paths[] = {"../escape", "/abs/escape", "a/../../escape",
                                      "a//b",      "./a",         ""};
  for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
    srv_model_file_t files[] = {{"1/good", "g", 1}, {paths[i], "x", 1}};
    srv_load_override_t bad = {"{}", 2, files, 2};
    char *dir = (char *)1;
    srv_status_t *st = srv_load_override_materialize("m", &bad, &dir);
    CHECK(st != NULL && srv_status_code(st) == GRPC_STATUS_INVALID_ARGUMENT);
    if (st != NULL && strstr(srv_status_message(st), "'m'") == NULL)
      CHECK(!"the message names the model");
    CHECK(dir == NULL);
    srv_status_free(st);
  }
  /* A file where a folder must go: refused, and what was written is gone. */
  srv_model_file_t clash[] = {{"1", "f", 1}, {"1/model", "x", 1}};
  srv_load_override_t c = {"{}", 2, clash, 2};
  char *dir = (char *)1;
  srv_status_t *st = srv_load_override_materialize("m", &c, &dir);
  CHECK(st != NULL && dir == NULL);
  srv_status_free(st);
  CHECK_EQ_U64(dir_count(tmp_root), 0); /* nothing left behind, nothing escaped */
  char up[PATH_MAX];
  snprintf(up, sizeof up, "%s/../escape", tmp_root);
  CHECK(!exists(up));
  tmp_end();
}

static void remove_refuses_foreign_folders_and_keeps_links(void) {
  tmp_begin();
  char victim[PATH_MAX], model[PATH_MAX], outside[PATH_MAX], path[PATH_MAX];
  /* Not below a nereid-model-* folder: nothing is removed. */
  snprintf(victim, sizeof victim, "%s/precious", tmp_root);
  snprintf(model, sizeof model, "%s/m", victim);
  CHECK(mkdir(victim, 0700) == 0 && mkdir(model, 0700) == 0);
  srv_load_override_remove(model);
  CHECK(exists(model));
  snprintf(victim, sizeof victim, "%s/nereid-model-", tmp_root); /* the bare prefix */
  snprintf(model, sizeof model, "%s/m", victim);
  CHECK(mkdir(victim, 0700) == 0 && mkdir(model, 0700) == 0);
  srv_load_override_remove(model);
  CHECK(exists(model));
  srv_load_override_remove("m");
  srv_load_override_remove("/");

  /* A link inside the private folder is removed, never followed. */
  snprintf(outside, sizeof outside, "%s/outside", tmp_root);
  CHECK(mkdir(outside, 0700) == 0);
  snprintf(path, sizeof path, "%s/keep.txt", outside);
  FILE *f = fopen(path, "w");
  REQUIRE(f != NULL);
  fputs("keep", f);
  fclose(f);
  srv_model_file_t files[] = {{"1/model", "x", 1}};
  srv_load_override_t o = {"{}", 2, files, 1};
  char *dir = NULL;
  CHECK(srv_load_override_materialize("m", &o, &dir) == NULL);
  REQUIRE(dir != NULL);
  snprintf(path, sizeof path, "%s/1/link", dir);
  CHECK(symlink(outside, path) == 0);
  snprintf(path, sizeof path, "%s/filelink", dir);
  CHECK(symlink(outside, path) == 0);
  srv_load_override_remove(dir);
  snprintf(path, sizeof path, "%s", dir);
  CHECK(!exists(path));
  snprintf(path, sizeof path, "%s/keep.txt", outside);
  CHECK(file_is(outside, "keep.txt", "keep", 4));
  free(dir);
  tmp_end();
}

/* A tree far deeper than removal descends (it moves deep folders up): all
 * of it goes, and a link at the bottom is removed, not followed. */
static void remove_takes_trees_of_any_depth(void) {
  tmp_begin();
  char top[PATH_MAX], model[PATH_MAX], outside[PATH_MAX];
  snprintf(top, sizeof top, "%s/nereid-model-XXXXXX", tmp_root);
  REQUIRE(mkdtemp(top) != NULL);
  snprintf(model, sizeof model, "%s/m", top);
  snprintf(outside, sizeof outside, "%s/outside", tmp_root);
  REQUIRE(mkdir(model, 0700) == 0 && mkdir(outside, 0700) == 0);
  int dir = open(model, O_RDONLY | O_DIRECTORY);
  REQUIRE(dir >= 0);
  for (int level = 0; level < 300; level++) {
    if (level % 50 == 0) { /* a file and a second folder now and then */
      int f = openat(dir, "file", O_WRONLY | O_CREAT, 0600);
      CHECK(f >= 0 && write(f, "x", 1) == 1);
      if (f >= 0) close(f);
      CHECK(mkdirat(dir, "side", 0700) == 0);
    }
    CHECK(mkdirat(dir, "d", 0700) == 0);
    int next = openat(dir, "d", O_RDONLY | O_DIRECTORY);
    close(dir);
    REQUIRE(next >= 0);
    dir = next;
  }
  CHECK(symlinkat(outside, dir, "link") == 0);
  close(dir);
  srv_load_override_remove(model);
  CHECK(!exists(top));
  CHECK(exists(outside));
  CHECK_EQ_U64(dir_count(tmp_root), 1); /* outside only */
  tmp_end();
}

/* Loader threads use all of this at once: nothing is shared between calls
 * but the config def, built once. */
enum { THREADS = 4, ROUNDS = 25 };

static void *loader(void *arg) {
  char name[32];
  snprintf(name, sizeof name, "model%u", (unsigned)(uintptr_t)arg);
  static const char json[] =
      "{\"maxBatchSize\": 4, \"instance_group\": [{\"count\": 1}]}";
  for (int i = 0; i < ROUNDS; i++) {
    upb_Arena *a = upb_Arena_New();
    inference_ModelConfig *c;
    srv_status_t *st = srv_load_override_config(name, json, strlen(json), a, &c);
    CHECK(st == NULL && c != NULL && inference_ModelConfig_max_batch_size(c) == 4);
    srv_status_free(st);
    char body[64];
    int len = snprintf(body, sizeof body, "%s round %d", name, i);
    srv_model_file_t files[] = {{"1/model.bin", body, (size_t)len}};
    srv_load_override_t o = {json, strlen(json), files, 1};
    char *dir = NULL;
    st = srv_load_override_materialize(name, &o, &dir);
    CHECK(st == NULL && dir != NULL);
    srv_status_free(st);
    if (dir != NULL) {
      CHECK(file_is(dir, "1/model.bin", body, (size_t)len));
      srv_load_override_remove(dir);
      CHECK(!exists(dir));
      free(dir);
    }
    upb_Arena_Free(a);
  }
  return NULL;
}

static void loaders_run_concurrently(void) {
  tmp_begin();
  pthread_t th[THREADS];
  for (uintptr_t t = 0; t < THREADS; t++) pthread_create(&th[t], NULL, loader, (void *)t);
  for (int t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
  CHECK_EQ_U64(dir_count(tmp_root), 0);
  tmp_end();
}

UNIT_MAIN("load_override", UNIT_CASE(parse_reads_config_and_files),
          UNIT_CASE(parse_without_parameters_overrides_nothing),
          UNIT_CASE(parse_errors_name_model_and_parameter),
          UNIT_CASE(config_accepts_snake_and_camel_case),
          UNIT_CASE(config_name_rules_and_errors), UNIT_CASE(config_text_must_be_utf8),
          UNIT_CASE(materialize_writes_exact_bytes_and_remove_cleans),
          UNIT_CASE(materialize_refuses_bad_names_and_paths),
          UNIT_CASE(remove_refuses_foreign_folders_and_keeps_links),
          UNIT_CASE(parse_refuses_past_the_limits),
          UNIT_CASE(remove_takes_trees_of_any_depth), UNIT_CASE(loaders_run_concurrently))
