/* Completion and agreement of platform, backend and default model file
 * name, as tritonserver does them (see platform.h). The loading thread. */
#include "server/model/platform.h"

#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "server/common/log.h"

#define INVALID(...) srv_status_new(GRPC_STATUS_INVALID_ARGUMENT, __VA_ARGS__)

/* What a model file must be for its name to tell the backend. */
typedef enum { FILE_ANY, FILE_REGULAR, FILE_FOLDER } file_kind_t;

/* One framework tritonserver knows by its file. The order is tritonserver's:
 * TensorFlow is decided before this table (its platform comes first and
 * has two files), then each row in turn, the first that claims the config
 * wins. `platform` NULL: the backend has none (OpenVINO, Python). */
/* The frameworks whose platform and backend tritonserver holds to each
 * other; a backend of none of them may go with any platform. */
typedef enum {
  FAMILY_NONE,
  FAMILY_TENSORFLOW,
  FAMILY_TENSORRT,
  FAMILY_ONNXRUNTIME,
  FAMILY_PYTORCH,
} family_t;

typedef struct {
  const char *platform, *backend, *filename;
  file_kind_t kind;
  family_t family;
} framework_t;

static const framework_t frameworks[] = {
    {"tensorrt_plan", "tensorrt", "model.plan", FILE_REGULAR, FAMILY_TENSORRT},
    /* A large ONNX model may be a folder. */
    {"onnxruntime_onnx", "onnxruntime", "model.onnx", FILE_ANY, FAMILY_ONNXRUNTIME},
    {NULL, "openvino", "model.xml", FILE_ANY, FAMILY_NONE},
    {"pytorch_libtorch", "pytorch", "model.pt", FILE_REGULAR, FAMILY_PYTORCH},
    {NULL, "python", "model.py", FILE_ANY, FAMILY_NONE},
};

#define FRAMEWORK_COUNT (sizeof frameworks / sizeof frameworks[0])

#define TF_BACKEND "tensorflow"
#define TF_GRAPHDEF "tensorflow_graphdef"
#define TF_SAVEDMODEL "tensorflow_savedmodel"
#define TF_GRAPHDEF_FILE "model.graphdef"
#define TF_SAVEDMODEL_FILE "model.savedmodel"
#define ENSEMBLE "ensemble"

static bool is(upb_StringView v, const char *s) {
  return v.size == strlen(s) && memcmp(v.data, s, v.size) == 0;
}

static upb_StringView sv(const char *s) { return upb_StringView_FromString(s); }

/* The model's first version folder as tritonserver picks it: the first
 * sub-folder of `dir` in byte order, whatever its name. False when there is
 * none (or `dir` cannot be read: the repository found it a moment ago, and
 * a config that needs it fails later with its own reason). */
static bool first_version(const char *dir, char *out, size_t len) {
  DIR *d = dir != NULL ? opendir(dir) : NULL;
  if (d == NULL) return false;
  char best[NAME_MAX + 1] = "";
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    if (best[0] != '\0' && strcmp(e->d_name, best) >= 0) continue;
    char path[PATH_MAX];
    struct stat sb;
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= sizeof path ||
        stat(path, &sb) != 0 || !S_ISDIR(sb.st_mode))
      continue;
    snprintf(best, sizeof best, "%s", e->d_name);
  }
  closedir(d);
  if (best[0] == '\0') return false;
  return (size_t)snprintf(out, len, "%s/%s", dir, best) < len;
}

/* Whether <vdir>/<file> exists as `kind` (links followed, as tritonserver's
 * checks follow them). */
static bool has_file(const char *vdir, const char *file, file_kind_t kind) {
  if (vdir == NULL) return false;
  char path[PATH_MAX];
  struct stat sb;
  if ((size_t)snprintf(path, sizeof path, "%s/%s", vdir, file) >= sizeof path ||
      stat(path, &sb) != 0)
    return false;
  if (kind == FILE_REGULAR) return !S_ISDIR(sb.st_mode);
  if (kind == FILE_FOLDER) return S_ISDIR(sb.st_mode);
  return true;
}

/* TensorFlow first: its backend serves two platforms, told apart by the
 * file name or by what the version folder holds (both found: graphdef,
 * as tritonserver checks it second). True when the config is TensorFlow's. */
static bool tensorflow_complete(inference_ModelConfig *c, const char *vdir) {
  upb_StringView b = inference_ModelConfig_backend(c);
  upb_StringView f = inference_ModelConfig_default_model_filename(c);
  if (inference_ModelConfig_platform(c).size == 0 && (b.size == 0 || is(b, TF_BACKEND))) {
    if (is(f, TF_SAVEDMODEL_FILE)) {
      inference_ModelConfig_set_platform(c, sv(TF_SAVEDMODEL));
    } else if (is(f, TF_GRAPHDEF_FILE)) {
      inference_ModelConfig_set_platform(c, sv(TF_GRAPHDEF));
    } else if (f.size == 0) {
      if (has_file(vdir, TF_SAVEDMODEL_FILE, FILE_FOLDER))
        inference_ModelConfig_set_platform(c, sv(TF_SAVEDMODEL));
      if (has_file(vdir, TF_GRAPHDEF_FILE, FILE_REGULAR))
        inference_ModelConfig_set_platform(c, sv(TF_GRAPHDEF));
    }
  }
  upb_StringView p = inference_ModelConfig_platform(c);
  bool savedmodel = is(p, TF_SAVEDMODEL);
  if (!savedmodel && !is(p, TF_GRAPHDEF)) return false;
  if (b.size == 0) inference_ModelConfig_set_backend(c, sv(TF_BACKEND));
  if (f.size == 0)
    inference_ModelConfig_set_default_model_filename(
        c, sv(savedmodel ? TF_SAVEDMODEL_FILE : TF_GRAPHDEF_FILE));
  return true;
}

/* One row of the table: claims the config when the backend is empty and
 * the platform or file name is the row's, or nothing is given and the
 * version folder holds the row's file; then fills what the row knows. True
 * when the config is the row's. */
static bool framework_complete(inference_ModelConfig *c, const framework_t *fw,
                               const char *vdir) {
  upb_StringView p = inference_ModelConfig_platform(c);
  upb_StringView f = inference_ModelConfig_default_model_filename(c);
  if (inference_ModelConfig_backend(c).size == 0) {
    bool named = (fw->platform != NULL && is(p, fw->platform)) || is(f, fw->filename);
    bool found = p.size == 0 && f.size == 0 && has_file(vdir, fw->filename, fw->kind);
    if (named || found) inference_ModelConfig_set_backend(c, sv(fw->backend));
  }
  if (!is(inference_ModelConfig_backend(c), fw->backend)) return false;
  if (fw->platform != NULL && p.size == 0)
    inference_ModelConfig_set_platform(c, sv(fw->platform));
  if (f.size == 0) inference_ModelConfig_set_default_model_filename(c, sv(fw->filename));
  return true;
}

/* A custom backend, when the config says nothing: the model's name is
 * `model.<backend>` (tritonserver's rule for lazily loaded backends). */
static srv_status_t *custom_complete(inference_ModelConfig *c, const char *name,
                                     const char *source, upb_Arena *arena) {
  if (inference_ModelConfig_backend(c).size > 0 ||
      inference_ModelConfig_platform(c).size > 0 ||
      inference_ModelConfig_default_model_filename(c).size > 0)
    return NULL;
  const char *dot = strchr(name, '.');
  if (dot == NULL)
    return INVALID(
        "model '%s': %s: Invalid model name: Could not determine backend for model "
        "'%s' with no backend in model configuration. Expected model name of the "
        "form 'model.<backend_name>'.",
        name, source, name);
  size_t len = strlen(dot + 1), flen = len + sizeof "model.";
  char *backend = upb_Arena_Malloc(arena, len + 1), *file = upb_Arena_Malloc(arena, flen);
  if (backend == NULL || file == NULL) SRV_FATAL("out of memory");
  memcpy(backend, dot + 1, len + 1);
  snprintf(file, flen, "model.%s", backend);
  inference_ModelConfig_set_backend(c, upb_StringView_FromDataAndSize(backend, len));
  inference_ModelConfig_set_default_model_filename(c, sv(file));
  return NULL;
}

srv_status_t *srv_platform_complete(inference_ModelConfig *c, const char *name,
                                    const char *dir, const char *source,
                                    upb_Arena *arena) {
  char vpath[PATH_MAX];
  const char *vdir = first_version(dir, vpath, sizeof vpath) ? vpath : NULL;
  if (tensorflow_complete(c, vdir)) return NULL;
  for (size_t i = 0; i < FRAMEWORK_COUNT; i++)
    if (framework_complete(c, &frameworks[i], vdir)) return NULL;
  return custom_complete(c, name, source, arena);
}

/* The framework a platform or a backend names in tritonserver's check. */
static family_t family_of_platform(upb_StringView p) {
  if (is(p, TF_GRAPHDEF) || is(p, TF_SAVEDMODEL)) return FAMILY_TENSORFLOW;
  for (size_t i = 0; i < FRAMEWORK_COUNT; i++)
    if (frameworks[i].platform != NULL && is(p, frameworks[i].platform))
      return frameworks[i].family;
  return FAMILY_NONE;
}

static family_t family_of_backend(upb_StringView b) {
  if (is(b, TF_BACKEND)) return FAMILY_TENSORFLOW;
  for (size_t i = 0; i < FRAMEWORK_COUNT; i++)
    if (is(b, frameworks[i].backend)) return frameworks[i].family;
  return FAMILY_NONE;
}

srv_status_t *srv_platform_check(const inference_ModelConfig *c, const char *name,
                                 const char *source) {
  upb_StringView p = inference_ModelConfig_platform(c);
  upb_StringView b = inference_ModelConfig_backend(c);
  char qp[SRV_QUOTE_SIZE], qb[SRV_QUOTE_SIZE];
  srv_quote(qp, p.data, p.size);
  /* Only an ensemble goes without a backend once completion ran. */
  if (b.size == 0 && !is(p, ENSEMBLE))
    return INVALID("model '%s': %s: unexpected platform type '%s' for %s", name, source,
                   qp, name);
  family_t fb = family_of_backend(b);
  if (fb != FAMILY_NONE && fb != family_of_platform(p))
    return INVALID("model '%s': %s: unexpected 'platform' and 'backend' pair, got:%s, %s",
                   name, source, qp, srv_quote(qb, b.data, b.size));
  return NULL;
}
