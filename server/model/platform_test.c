/* Completion of platform, backend and default_model_filename (platform.h)
 * as tritonserver does it: from each other, from the model file in the
 * first version folder of folders this test makes, from the model's name;
 * and every error of the agreement check, with its exact text. One thread. */
#include "server/model/platform.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/config/model_config.h"
#include "test/unit/unit.h"

/* "backend|platform|default_model_filename" after completion and check of
 * `text` for model `name` in folder `dir`, or the error's message. */
static const char *complete(const char *text, const char *name, const char *dir) {
  static char out[1024];
  upb_Arena *a = upb_Arena_New();
  char err[256];
  inference_ModelConfig *c =
      cfg_model_config_parse(text, strlen(text), "config.pbtxt", a, err, sizeof err);
  if (c == NULL) {
    snprintf(out, sizeof out, "(no parse: %s)", err);
    upb_Arena_Free(a);
    return out;
  }
  srv_status_t *st = srv_platform_complete(c, name, dir, "config.pbtxt", a);
  if (st == NULL) st = srv_platform_check(c, name, "config.pbtxt");
  if (st != NULL) {
    CHECK_EQ_U64(srv_status_code(st), GRPC_STATUS_INVALID_ARGUMENT);
    snprintf(out, sizeof out, "%s", srv_status_message(st));
    srv_status_free(st);
  } else {
    upb_StringView b = inference_ModelConfig_backend(c);
    upb_StringView p = inference_ModelConfig_platform(c);
    upb_StringView f = inference_ModelConfig_default_model_filename(c);
    snprintf(out, sizeof out, "%.*s|%.*s|%.*s", (int)b.size, b.data, (int)p.size, p.data,
             (int)f.size, f.data);
  }
  upb_Arena_Free(a);
  return out;
}

/* A config text and what completing it gives (complete()'s form). */
typedef struct {
  const char *text, *expected;
} case_t;

static void run_cases(const case_t *cases, size_t n) {
  for (size_t i = 0; i < n; i++) {
    const char *got = complete(cases[i].text, "m", NULL);
    if (strcmp(got, cases[i].expected) != 0)
      fprintf(stderr, "  config <%s>\n", cases[i].text);
    CHECK_STREQ(got, cases[i].expected);
  }
}

/* Each backend and platform Triton knows, and their default files. */
static void test_from_names(void) {
  static const case_t cases[] = {
      {"backend: 'pytorch'", "pytorch|pytorch_libtorch|model.pt"},
      {"platform: 'pytorch_libtorch'", "pytorch|pytorch_libtorch|model.pt"},
      {"default_model_filename: 'model.pt'", "pytorch|pytorch_libtorch|model.pt"},
      {"backend: 'onnxruntime'", "onnxruntime|onnxruntime_onnx|model.onnx"},
      {"platform: 'onnxruntime_onnx'", "onnxruntime|onnxruntime_onnx|model.onnx"},
      {"backend: 'tensorrt'", "tensorrt|tensorrt_plan|model.plan"},
      {"platform: 'tensorrt_plan'", "tensorrt|tensorrt_plan|model.plan"},
      {"default_model_filename: 'model.plan'", "tensorrt|tensorrt_plan|model.plan"},
      {"platform: 'tensorflow_graphdef'",
       "tensorflow|tensorflow_graphdef|model.graphdef"},
      {"platform: 'tensorflow_savedmodel'",
       "tensorflow|tensorflow_savedmodel|model.savedmodel"},
      {"default_model_filename: 'model.savedmodel'",
       "tensorflow|tensorflow_savedmodel|model.savedmodel"},
      {"backend: 'tensorflow' default_model_filename: 'model.graphdef'",
       "tensorflow|tensorflow_graphdef|model.graphdef"},
      /* No platform for OpenVINO and Python. */
      {"backend: 'openvino'", "openvino||model.xml"},
      {"default_model_filename: 'model.xml'", "openvino||model.xml"},
      {"backend: 'python'", "python||model.py"},
      {"default_model_filename: 'model.py'", "python||model.py"},
      /* What the config gives stays. */
      {"backend: 'pytorch' default_model_filename: 'traced.pt'",
       "pytorch|pytorch_libtorch|traced.pt"},
      {"backend: 'identity'", "identity||"},
      {"backend: 'identity' platform: 'anything'", "identity|anything|"},
  };
  run_cases(cases, sizeof cases / sizeof cases[0]);
}

/* A custom backend from the model's name, when the config says nothing. */
static void test_from_model_name(void) {
  CHECK_STREQ(complete("max_batch_size: 8", "model.identity", NULL),
              "identity||model.identity");
  CHECK_STREQ(complete("", "a.b.c", NULL), "b.c||model.b.c");
  CHECK_STREQ(complete("max_batch_size: 8", "simple", NULL),
              "model 'simple': config.pbtxt: Invalid model name: Could not determine "
              "backend for model 'simple' with no backend in model configuration. "
              "Expected model name of the form 'model.<backend_name>'.");
}

static char root[256];

/* <root>/<model>/<version>/<file> (a folder when `folder`), made fresh. */
static const char *make_model(const char *model, const char *version, const char *file,
                              bool folder) {
  static char dir[512];
  char path[1024];
  snprintf(dir, sizeof dir, "%s/%s", root, model);
  mkdir(dir, 0755);
  snprintf(path, sizeof path, "%s/%s", dir, version);
  mkdir(path, 0755);
  snprintf(path, sizeof path, "%s/%s/%s", dir, version, file);
  if (folder) {
    mkdir(path, 0755);
  } else {
    FILE *f = fopen(path, "w");
    if (f != NULL) fclose(f);
  }
  return dir;
}

#define NO_BACKEND                                                                \
  "model 'm': config.pbtxt: Invalid model name: Could not determine backend for " \
  "model 'm' with no backend in model configuration. Expected model name of the " \
  "form 'model.<backend_name>'."

/* The model file in the first version folder tells the backend. */
static void test_from_files(void) {
  const char *tmp = getenv("TEST_TMPDIR");
  snprintf(root, sizeof root, "%s/platform_test_XXXXXX", tmp ? tmp : "/tmp");
  REQUIRE(mkdtemp(root) != NULL);
  static const struct {
    const char *model, *version, *file;
    bool folder;
    const char *text, *expected;
  } cases[] = {
      {"onnx", "1", "model.onnx", false, "", "onnxruntime|onnxruntime_onnx|model.onnx"},
      {"onnx_dir", "1", "model.onnx", true, "",
       "onnxruntime|onnxruntime_onnx|model.onnx"},
      {"pt", "1", "model.pt", false, "", "pytorch|pytorch_libtorch|model.pt"},
      {"plan", "3", "model.plan", false, "", "tensorrt|tensorrt_plan|model.plan"},
      {"sm", "1", "model.savedmodel", true, "",
       "tensorflow|tensorflow_savedmodel|model.savedmodel"},
      {"gd", "1", "model.graphdef", false, "",
       "tensorflow|tensorflow_graphdef|model.graphdef"},
      {"py", "1", "model.py", false, "", "python||model.py"},
      {"ov", "1", "model.xml", false, "", "openvino||model.xml"},
      /* A backend named without platform finds TensorFlow's from the file. */
      {"tf", "1", "model.graphdef", false, "backend: 'tensorflow'",
       "tensorflow|tensorflow_graphdef|model.graphdef"},
      /* Files of the wrong kind tell nothing: a plan or .pt folder, a
       * savedmodel file. */
      {"plan_dir", "1", "model.plan", true, "", NO_BACKEND},
      {"pt_dir", "1", "model.pt", true, "", NO_BACKEND},
      {"sm_file", "1", "model.savedmodel", false, "backend: 'tensorflow'",
       "model 'm': config.pbtxt: unexpected 'platform' and 'backend' pair, got:, "
       "tensorflow"},
      /* Only the first version folder in byte order counts: "10" before
       * "2" (made by the row before). */
      {"order", "2", "model.pt", false, "", "pytorch|pytorch_libtorch|model.pt"},
      {"order", "10", "model.onnx", false, "", "onnxruntime|onnxruntime_onnx|model.onnx"},
      /* A file name or platform in the config wins over the folder. */
      {"named", "1", "model.onnx", false, "platform: 'tensorrt_plan'",
       "tensorrt|tensorrt_plan|model.plan"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const char *dir =
        make_model(cases[i].model, cases[i].version, cases[i].file, cases[i].folder);
    CHECK_STREQ(complete(cases[i].text, "m", dir), cases[i].expected);
  }
  /* No folder, or no version folder: nothing to find. */
  CHECK_STREQ(complete("", "model.x", "/nonexistent/nereid"), "x||model.x");
  char empty[600];
  snprintf(empty, sizeof empty, "%s/empty", root);
  mkdir(empty, 0755);
  CHECK_STREQ(complete("", "model.y", empty), "y||model.y");
}

/* tritonserver's agreement checks, in its words after model and source. */
static void test_check(void) {
#define PAIR "model 'm': config.pbtxt: unexpected 'platform' and 'backend' pair, got:"
  static const case_t cases[] = {
      {"platform: 'caffe2_netdef'",
       "model 'm': config.pbtxt: unexpected platform type 'caffe2_netdef' for m"},
      {"backend: 'pytorch' platform: 'onnxruntime_onnx'",
       PAIR "onnxruntime_onnx, pytorch"},
      {"backend: 'onnxruntime' platform: 'tensorflow_graphdef'",
       PAIR "tensorflow_graphdef, onnxruntime"},
      {"backend: 'tensorrt' platform: 'pytorch_libtorch'",
       PAIR "pytorch_libtorch, tensorrt"},
      {"backend: 'tensorflow' platform: 'tensorrt_plan'",
       PAIR "tensorrt_plan, tensorflow"},
      {"backend: 'tensorflow'", PAIR ", tensorflow"},
      /* OpenVINO and Python have no platform to disagree with. */
      {"backend: 'python' platform: 'pytorch_libtorch'",
       "python|pytorch_libtorch|model.py"},
  };
#undef PAIR
  run_cases(cases, sizeof cases / sizeof cases[0]);
  /* A long platform is quoted, not copied whole. */
  char text[800];
  snprintf(text, sizeof text, "platform: \"%0500d\"", 0);
  const char *msg = complete(text, "m", NULL);
  CHECK(strlen(msg) < 400);
  CHECK(strstr(msg, "...' for m") != NULL);
}

UNIT_MAIN("platform", UNIT_CASE(test_from_names), UNIT_CASE(test_from_model_name),
          UNIT_CASE(test_from_files), UNIT_CASE(test_check))
