/* RepositoryModelLoad parameters and the private model folder built from
 * them (see load_override.h). Parsing runs on any thread; the folder is
 * written and removed by a loader thread. Files are created with openat and
 * O_NOFOLLOW below a folder we just made, so no path a client sends can
 * leave it. */
#include "server/repository/load_override.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/common/log.h"
#include "server/common/memory.h"
#include "server/config/model_config.h"
#include "server/repository/model_name.h"
#include "third_party/utf8_range/utf8_range.h"
#include "upb/json_decode.h"

#define FILE_PREFIX "file:"

/* Removal holds one descriptor per level below the folder it removes, so
 * it descends at most this deep; a folder found deeper is moved up to the
 * top of the tree and removed from there, so trees of any depth go (parse
 * bounds what a client makes, but a backend may write in its folder). */
enum { REMOVE_DEPTH_MAX = 32 };

/* ---- parse --------------------------------------------------------------- */

/* The normalized form of a "file:" path in `arena`: empty and "."
 * components dropped, so that "1//a" and "./1/a" name the same file as
 * "1/a". NULL when the path is empty, absolute or has a ".." component. */
static const char *path_normalize(upb_StringView p, upb_Arena *arena) {
  if (p.size == 0 || p.data[0] == '/') return NULL;
  char *out = srv_arena_alloc(arena, p.size + 1);
  size_t n = 0, i = 0;
  while (i < p.size) {
    size_t j = i;
    while (j < p.size && p.data[j] != '/') j++;
    size_t len = j - i;
    const char *c = p.data + i;
    if (memchr(c, '\0', len) != NULL) return NULL; /* not a file name */
    if (len == 2 && c[0] == '.' && c[1] == '.') return NULL;
    if (len > 0 && !(len == 1 && c[0] == '.')) {
      if (n > 0) out[n++] = '/';
      memcpy(out + n, c, len);
      n += len;
    }
    i = j + 1;
  }
  if (n == 0) return NULL;
  out[n] = '\0';
  return out;
}

static int file_cmp(const void *a, const void *b) {
  return strcmp(((const srv_model_file_t *)a)->path, ((const srv_model_file_t *)b)->path);
}

/* What srv_load_override_parse gathers, and the name its errors give. */
typedef struct {
  char model[SRV_QUOTE_SIZE]; /* the model's name as the client sent it, quoted */
  upb_Arena *arena;
  srv_model_file_t *files;
  size_t file_count;
  uint64_t bytes;     /* of all the files */
  const char *config; /* NULL: no "config" parameter */
  size_t config_len;
} parse_t;

/* INVALID_ARGUMENT "failed to load '<model>': <detail>"; or, when `poll`,
 * what Triton answers when the files of an override cannot make a model
 * folder (a path that leaves it, a file given twice, files without a
 * config): its repository poll fails, the client reads only INTERNAL
 * "failed to load '<model>', failed to poll from model repository", and
 * the detail goes to the log. */
static srv_status_t *override_error(const parse_t *p, bool poll, const char *fmt,
                                    va_list ap) {
  char detail[SRV_STATUS_MESSAGE_MAX + 1];
  vsnprintf(detail, sizeof detail, fmt, ap);
  if (!poll)
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT, "failed to load '%s': %s",
                          p->model, detail);
  SRV_ERROR("failed to poll model '%s': %s", p->model, detail);
  return srv_status_new(GRPC_STATUS_INTERNAL,
                        "failed to load '%s', failed to poll from model repository",
                        p->model);
}

__attribute__((format(printf, 2, 3))) static srv_status_t *parse_error(const parse_t *p,
                                                                       const char *fmt,
                                                                       ...) {
  va_list ap;
  va_start(ap, fmt);
  srv_status_t *st = override_error(p, false, fmt, ap);
  va_end(ap);
  return st;
}

__attribute__((format(printf, 2, 3))) static srv_status_t *poll_error(const parse_t *p,
                                                                      const char *fmt,
                                                                      ...) {
  va_list ap;
  va_start(ap, fmt);
  srv_status_t *st = override_error(p, true, fmt, ap);
  va_end(ap);
  return st;
}

/* A normalized path within SRV_LOAD_OVERRIDE_DEPTH_MAX components of at
 * most SRV_LOAD_OVERRIDE_NAME_MAX bytes; `qk` is the parameter, quoted. */
static srv_status_t *path_limits(const parse_t *p, const char *qk, const char *path) {
  size_t depth = 1, part = 0;
  for (const char *c = path; *c != '\0'; c++) {
    if (*c == '/') {
      depth++;
      part = 0;
    } else if (++part > SRV_LOAD_OVERRIDE_NAME_MAX) {
      return parse_error(p,
                         "invalid load parameter '%s': a file or folder name in the "
                         "path is longer than %d bytes",
                         qk, SRV_LOAD_OVERRIDE_NAME_MAX);
    }
  }
  if (depth > SRV_LOAD_OVERRIDE_DEPTH_MAX)
    return parse_error(p,
                       "invalid load parameter '%s': the file path has %zu "
                       "components, more than the %d allowed",
                       qk, depth, SRV_LOAD_OVERRIDE_DEPTH_MAX);
  return NULL;
}

/* Adds a file of the override, within the count and size limits. */
static srv_status_t *file_add(parse_t *p, const char *path, upb_StringView bytes) {
  if (p->file_count == SRV_LOAD_OVERRIDE_FILES_MAX)
    return parse_error(p,
                       "the load parameters give more than %d files, the most one "
                       "load may have",
                       SRV_LOAD_OVERRIDE_FILES_MAX);
  p->bytes += bytes.size;
  if (p->bytes > SRV_LOAD_OVERRIDE_BYTES_MAX)
    return parse_error(p,
                       "the files of the load parameters hold more than %llu bytes, "
                       "the most one load may write",
                       (unsigned long long)SRV_LOAD_OVERRIDE_BYTES_MAX);
  p->files[p->file_count++] = (srv_model_file_t){path, bytes.data, bytes.size};
  return NULL;
}

/* One "config" or "file:<path>" parameter into *p. */
static srv_status_t *param_read(parse_t *p, upb_StringView key,
                                const inference_ModelRepositoryParameter *v) {
  char qk[SRV_QUOTE_SIZE];
  srv_quote(qk, key.data, key.size);
  bool is_config = key.size == 6 && memcmp(key.data, "config", 6) == 0;
  bool is_file = key.size >= strlen(FILE_PREFIX) &&
                 memcmp(key.data, FILE_PREFIX, strlen(FILE_PREFIX)) == 0;
  if (!is_config && !is_file)
    /* tritonserver's gRPC frontend refuses other names, with this text. */
    return parse_error(p, "unrecognized load parameter '%s'.", qk);
  if (is_config) {
    if (v == NULL || !inference_ModelRepositoryParameter_has_string_param(v))
      return parse_error(p,
                         "invalid value type for load parameter 'config', expected "
                         "string_param.");
    upb_StringView s = inference_ModelRepositoryParameter_string_param(v);
    if (s.size > CFG_MODEL_CONFIG_MAX_BYTES)
      return parse_error(p, "config override: %zu bytes, above the limit of %zu", s.size,
                         (size_t)CFG_MODEL_CONFIG_MAX_BYTES);
    p->config = s.data != NULL ? s.data : ""; /* present, even when empty */
    p->config_len = s.size;
    return NULL;
  }
  if (v == NULL || !inference_ModelRepositoryParameter_has_bytes_param(v))
    return parse_error(p,
                       "invalid value type for load parameter '%s', expected "
                       "bytes_param.",
                       qk);
  upb_StringView raw = {key.data + strlen(FILE_PREFIX), key.size - strlen(FILE_PREFIX)};
  const char *path = path_normalize(raw, p->arena);
  if (path == NULL)
    return poll_error(p,
                      "invalid load parameter '%s': the file path must be relative "
                      "to the model folder, not empty, and without '..'",
                      qk);
  srv_status_t *st = path_limits(p, qk, path);
  if (st != NULL) return st;
  return file_add(p, path, inference_ModelRepositoryParameter_bytes_param(v));
}

/* Sorts the files; each may be given once, and only with a config. */
static srv_status_t *files_check(parse_t *p) {
  if (p->file_count > 1) qsort(p->files, p->file_count, sizeof *p->files, file_cmp);
  for (size_t i = 1; i < p->file_count; i++)
    if (strcmp(p->files[i - 1].path, p->files[i].path) == 0) {
      char q[SRV_QUOTE_SIZE];
      return poll_error(p, "the file '%s' is given by more than one load parameter",
                        srv_quote_str(q, p->files[i].path));
    }
  if (p->file_count > 0 && p->config == NULL)
    return poll_error(p,
                      "load parameter 'config' must be specified for model file "
                      "override");
  return NULL;
}

srv_status_t *srv_load_override_parse(const inference_RepositoryModelLoadRequest *req,
                                      upb_Arena *arena, srv_load_override_t *out) {
  *out = (srv_load_override_t){0};
  upb_StringView model = inference_RepositoryModelLoadRequest_model_name(req);
  parse_t p = {.arena = arena};
  srv_quote(p.model, model.data, model.size);
  size_t cap = inference_RepositoryModelLoadRequest_parameters_size(req);
  if (cap > SRV_LOAD_OVERRIDE_FILES_MAX) cap = SRV_LOAD_OVERRIDE_FILES_MAX; /* file_add */
  p.files = srv_arena_alloc(arena, (cap + 1) * sizeof *p.files);
  size_t iter = kUpb_Map_Begin;
  const inference_RepositoryModelLoadRequest_ParametersEntry *e;
  while ((e = inference_RepositoryModelLoadRequest_parameters_next(req, &iter)) != NULL) {
    srv_status_t *st =
        param_read(&p, inference_RepositoryModelLoadRequest_ParametersEntry_key(e),
                   inference_RepositoryModelLoadRequest_ParametersEntry_value(e));
    if (st != NULL) return st;
  }
  srv_status_t *st = files_check(&p);
  if (st != NULL) return st;
  out->config_json = p.config;
  out->config_json_len = p.config_len;
  out->files = p.file_count > 0 ? p.files : NULL;
  out->file_count = p.file_count;
  return NULL;
}

/* ---- config -------------------------------------------------------------- */

srv_status_t *srv_load_override_config(const char *model_name, const char *json,
                                       size_t len, upb_Arena *arena,
                                       inference_ModelConfig **out) {
  *out = NULL;
  const upb_MessageDef *def = cfg_model_config_def();
  if (def == NULL) SRV_FATAL("out of memory");
  inference_ModelConfig *c = inference_ModelConfig_new(arena);
  if (c == NULL) SRV_FATAL("out of memory");
  size_t i = 0;
  while (i < len &&
         (json[i] == ' ' || json[i] == '\t' || json[i] == '\n' || json[i] == '\r'))
    i++;
  if (i == len) /* upb takes no text as {}; protobuf's parser, as Triton uses it, not */
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "failed to load '%s': invalid config override: no JSON text",
                          model_name);
  /* JSON text is UTF-8 (RFC 8259), and string fields must be: upb's JSON
   * decoder copies their bytes unchecked, and its binary decoder, which
   * checks them with this same function, then refused the copy of the
   * config that loading takes (a fatal error: found by config_json_fuzz). */
  if (len > INT_MAX || utf8_range2((const unsigned char *)json, (int)len) != 0)
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "failed to load '%s': invalid config override: the text is "
                          "not valid UTF-8",
                          model_name);
  upb_Status status;
  upb_Status_Clear(&status);
  /* Options 0: unknown fields are an error, as in tritonserver's parse. The
   * decoder looks names up in a table holding both the proto name and the
   * JSON (lowerCamel) name of every field. */
  if (!upb_JsonDecode(json, len, (upb_Message *)c, def,
                      upb_FileDef_Pool(upb_MessageDef_File(def)), 0, arena, &status))
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "failed to load '%s': invalid config override: %s", model_name,
                          upb_Status_ErrorMessage(&status));
  upb_StringView name = inference_ModelConfig_name(c);
  if (name.size == 0) {
    size_t n = strlen(model_name);
    inference_ModelConfig_set_name(
        c, upb_StringView_FromDataAndSize(srv_arena_copy(arena, model_name, n), n));
  } else if (name.size != strlen(model_name) ||
             memcmp(name.data, model_name, name.size) != 0) {
    char q[SRV_QUOTE_SIZE];
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "failed to load '%s': the config override names model "
                          "'%s'; the name must be empty or '%s'",
                          model_name, srv_quote(q, name.data, name.size), model_name);
  }
  *out = c;
  return NULL;
}

/* ---- remove -------------------------------------------------------------- */

/* A removal under way: deep folders are moved up into `top`. */
typedef struct {
  int top;        /* the folder being removed */
  unsigned moved; /* for the names of moved folders */
} remove_t;

/* Moves folder `name` of `dir` into the top folder, under a name starting
 * with '.', which no model folder has. Renaming onto an empty folder left
 * by an earlier move replaces it, which is fine: both are to go. */
static bool move_up(remove_t *rm, int dir, const char *name) {
  for (int tries = 0; tries < 64; tries++) {
    char to[32];
    snprintf(to, sizeof to, ".deep-%u", rm->moved++);
    if (renameat(dir, name, rm->top, to) == 0) return true;
    if (errno != EEXIST && errno != ENOTEMPTY) return false;
  }
  return false;
}

/* Empties the folder `fd` (which it closes), `depth` levels below the top,
 * without following links. */
static bool tree_empty(remove_t *rm, int fd, int depth) {
  DIR *d = fdopendir(fd);
  if (d == NULL) {
    close(fd);
    return false;
  }
  bool ok = true;
  struct dirent *ent;
  /* Unlinking while reading may skip entries, and moves add some to the
   * top: go round until none is left or a round changes nothing. */
  for (bool removed = true; removed;) {
    removed = false;
    rewinddir(d);
    while ((ent = readdir(d)) != NULL) {
      const char *n = ent->d_name;
      if (strcmp(n, ".") == 0 || strcmp(n, "..") == 0) continue;
      struct stat sb;
      if (fstatat(dirfd(d), n, &sb, AT_SYMLINK_NOFOLLOW) != 0) continue;
      if (!S_ISDIR(sb.st_mode)) {
        if (unlinkat(dirfd(d), n, 0) == 0)
          removed = true;
        else
          ok = false;
      } else if (depth + 1 >= REMOVE_DEPTH_MAX) {
        if (move_up(rm, dirfd(d), n))
          removed = true;
        else
          ok = false;
      } else {
        int sub = openat(dirfd(d), n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub < 0 || !tree_empty(rm, sub, depth + 1)) ok = false;
        if (unlinkat(dirfd(d), n, AT_REMOVEDIR) == 0) removed = true;
      }
    }
  }
  closedir(d);
  return ok;
}

/* Removes the folder `path` and everything below it. */
static bool tree_remove(const char *path) {
  remove_t rm = {.top = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)};
  if (rm.top < 0) return errno == ENOENT;
  int fd = dup(rm.top);
  if (fd >= 0) tree_empty(&rm, fd, 0);
  close(rm.top);
  return rmdir(path) == 0;
}

void srv_load_override_remove(const char *model_dir) {
  size_t len = strlen(model_dir);
  while (len > 1 && model_dir[len - 1] == '/') len--;
  const char *slash = NULL;
  for (size_t i = 0; i < len; i++)
    if (model_dir[i] == '/') slash = model_dir + i;
  size_t parent_len = slash != NULL ? (size_t)(slash - model_dir) : 0;
  const char *base = NULL;
  if (parent_len > 0) {
    base = model_dir + parent_len;
    while (base > model_dir && base[-1] != '/') base--;
  }
  bool dotdot = false;
  for (const char *p = model_dir; (p = strstr(p, "..")) != NULL; p += 2)
    if ((p == model_dir || p[-1] == '/') && (p[2] == '/' || p[2] == '\0')) dotdot = true;
  if (base == NULL || dotdot ||
      strncmp(base, SRV_LOAD_OVERRIDE_PREFIX, strlen(SRV_LOAD_OVERRIDE_PREFIX)) != 0 ||
      (size_t)(model_dir + parent_len - base) == strlen(SRV_LOAD_OVERRIDE_PREFIX)) {
    SRV_ERROR("not removing '%s': not a private model folder", model_dir);
    return;
  }
  char *parent = srv_strndup(model_dir, parent_len);
  if (!tree_remove(parent))
    SRV_ERROR("cannot fully remove private model folder '%s': %s", parent,
              strerror(errno));
  free(parent);
}

/* ---- materialize --------------------------------------------------------- */

static bool write_all(int fd, const void *data, size_t size) {
  const char *p = data;
  while (size > 0) {
    ssize_t w = write(fd, p, size);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    size -= (size_t)w;
  }
  return true;
}

/* Writes one file below the model folder `root`, making its folders.
 * Every step is relative to an fd we opened, never through a link. */
static srv_status_t *file_write(const char *model_name, int root,
                                const srv_model_file_t *f) {
  upb_Arena *a = upb_Arena_New();
  if (a == NULL) SRV_FATAL("out of memory");
  const char *path = path_normalize(upb_StringView_FromString(f->path), a);
  srv_status_t *st = NULL;
  int dir = dup(root), fd = -1;
  if (path == NULL || strcmp(path, f->path) != 0) {
    st = srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                        "failed to load '%s': invalid file path '%s'", model_name,
                        f->path);
    goto out;
  }
  char *rest = (char *)path; /* the arena copy, ours to cut */
  for (char *slash; (slash = strchr(rest, '/')) != NULL; rest = slash + 1) {
    *slash = '\0';
    if (mkdirat(dir, rest, 0700) != 0 && errno != EEXIST) goto io_error;
    int next = openat(dir, rest, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0) goto io_error;
    close(dir);
    dir = next;
  }
  fd = openat(dir, rest, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0 || !write_all(fd, f->data, f->size)) goto io_error;
  if (close(fd) != 0) {
    fd = -1;
    goto io_error;
  }
  fd = -1;
  goto out;
io_error:
  st = srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                      "failed to load '%s': cannot write the file '%s' of the load "
                      "parameters: %s",
                      model_name, f->path, strerror(errno));
out:
  if (fd >= 0) close(fd);
  if (dir >= 0) close(dir);
  upb_Arena_Free(a);
  return st;
}

srv_status_t *srv_load_override_materialize(const char *model_name,
                                            const srv_load_override_t *o,
                                            char **out_dir) {
  *out_dir = NULL;
  srv_status_t *bad_name = srv_model_name_check(model_name, strlen(model_name));
  if (bad_name != NULL) return bad_name;
  const char *tmp = getenv("TMPDIR");
  if (tmp == NULL || tmp[0] == '\0') tmp = "/tmp";
  size_t tmp_len = strlen(tmp);
  while (tmp_len > 1 && tmp[tmp_len - 1] == '/') tmp_len--;
  size_t size = tmp_len + strlen(SRV_LOAD_OVERRIDE_PREFIX) + strlen(model_name) + 10;
  char *top = malloc(size), *dir = malloc(size);
  if (top == NULL || dir == NULL) SRV_FATAL("out of memory");
  snprintf(top, size, "%.*s/%sXXXXXX", (int)tmp_len, tmp, SRV_LOAD_OVERRIDE_PREFIX);
  if (mkdtemp(top) == NULL) {
    srv_status_t *st = srv_status_new(GRPC_STATUS_INTERNAL,
                                      "failed to load '%s': cannot make a private model "
                                      "folder in '%.*s': %s",
                                      model_name, (int)tmp_len, tmp, strerror(errno));
    free(top);
    free(dir);
    return st;
  }
  snprintf(dir, size, "%s/%s", top, model_name);
  srv_status_t *st = NULL;
  int root = -1;
  if (mkdir(dir, 0700) != 0 ||
      (root = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
    st = srv_status_new(GRPC_STATUS_INTERNAL, "failed to load '%s': cannot make '%s': %s",
                        model_name, dir, strerror(errno));
  for (size_t i = 0; st == NULL && i < o->file_count; i++)
    st = file_write(model_name, root, &o->files[i]);
  if (root >= 0) close(root);
  if (st != NULL) {
    if (!tree_remove(top))
      SRV_ERROR("cannot fully remove private model folder '%s': %s", top,
                strerror(errno));
    free(dir);
    dir = NULL;
  }
  free(top);
  *out_dir = dir;
  return st;
}
