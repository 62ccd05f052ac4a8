/* Classification labels (see labels.h). */
#include "server/model/labels.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "server/common/memory.h"

#define INVALID(...) srv_status_new(GRPC_STATUS_INVALID_ARGUMENT, __VA_ARGS__)

/* Inside the folder: relative, no ".." component, no NUL. */
static bool path_inside(upb_StringView f) {
  if (f.size == 0 || f.data[0] == '/' || memchr(f.data, '\0', f.size) != NULL)
    return false;
  for (size_t i = 0; i < f.size;) {
    size_t start = i;
    while (i < f.size && f.data[i] != '/') i++;
    if (i - start == 2 && f.data[start] == '.' && f.data[start + 1] == '.') return false;
    i++;
  }
  return true;
}

srv_status_t *srv_labels_read(const char *model, const char *output, const char *dir,
                              upb_StringView file, upb_Arena *a, const char ***labels,
                              uint32_t *count) {
  if (!path_inside(file))
    return INVALID(
        "model '%s': output '%s': label_filename '%.*s' must name a file "
        "inside the model's folder",
        model, output, (int)(file.size > 200 ? 200 : file.size), file.data);
  char path[PATH_MAX];
  if (snprintf(path, sizeof path, "%s/%.*s", dir, (int)file.size, file.data) >=
      (int)sizeof path)
    return INVALID("model '%s': output '%s': label_filename is too long", model, output);
  FILE *fp = fopen(path, "rb");
  if (fp == NULL)
    return INVALID("model '%s': output '%s': cannot read the labels file '%s'", model,
                   output, path);
  char *text = upb_Arena_Malloc(a, SRV_LABELS_BYTES_MAX + 1);
  if (text == NULL) {
    fclose(fp);
    return srv_status_new(GRPC_STATUS_RESOURCE_EXHAUSTED, "no memory for labels");
  }
  size_t n = fread(text, 1, SRV_LABELS_BYTES_MAX + 1, fp);
  fclose(fp);
  if (n > SRV_LABELS_BYTES_MAX)
    return INVALID(
        "model '%s': output '%s': the labels file '%s' holds more than %u bytes", model,
        output, path, SRV_LABELS_BYTES_MAX);
  text[n] = '\0';
  uint32_t lines = 0;
  for (size_t i = 0; i < n; i++) lines += text[i] == '\n';
  if (n > 0 && text[n - 1] != '\n') lines++;
  const char **out = upb_Arena_Malloc(a, (lines ? lines : 1) * sizeof *out);
  if (out == NULL)
    return srv_status_new(GRPC_STATUS_RESOURCE_EXHAUSTED, "no memory for labels");
  uint32_t k = 0;
  for (size_t i = 0; i < n && k < lines;) {
    size_t start = i;
    while (i < n && text[i] != '\n') i++;
    size_t end = i;
    if (end > start && text[end - 1] == '\r') end--;
    text[end] = '\0';
    out[k++] = text + start;
    i++;
  }
  *labels = out;
  *count = k;
  return NULL;
}
