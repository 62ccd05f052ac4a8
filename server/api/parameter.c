/* TRITONSERVER_Parameter (see parameter.h). Any thread; immutable once made. */
#include "server/api/parameter.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "server/api/log.h"

/* One allocation: the name (and a STRING value) are stored after the struct,
 * so a label set of N parameters costs N mallocs, and Delete one free(). */
struct TRITONSERVER_Parameter {
  TRITONSERVER_ParameterType type;
  union {
    int64_t i;
    bool b;
    double d;
    const char *s;   /* STRING: points into text[] */
    const void *ptr; /* BYTES: the caller's memory, not copied */
  } v;
  uint64_t byte_size;
  const char *name; /* points into text[] */
  char text[];
};

static TRITONSERVER_Parameter *param_alloc(const char *name,
                                           TRITONSERVER_ParameterType type,
                                           const char *str) {
  size_t name_len = strlen(name);
  size_t str_len = str ? strlen(str) : 0;
  size_t extra = name_len + 1 + (str ? str_len + 1 : 0);
  TRITONSERVER_Parameter *p = malloc(sizeof *p + extra);
  if (p == NULL) API_FATAL("out of memory making parameter '%s'", name);
  memcpy(p->text, name, name_len + 1);
  p->name = p->text;
  p->type = type;
  p->byte_size = 0;
  if (str) {
    char *copy = p->text + name_len + 1;
    memcpy(copy, str, str_len + 1);
    p->v.s = copy;
    p->byte_size = str_len;
  }
  return p;
}

const char *api_parameter_name(const TRITONSERVER_Parameter *param) {
  return param->name;
}

TRITONSERVER_ParameterType api_parameter_type(const TRITONSERVER_Parameter *param) {
  return param->type;
}

const void *api_parameter_value(const TRITONSERVER_Parameter *param) {
  switch (param->type) {
    case TRITONSERVER_PARAMETER_STRING:
      return param->v.s;
    case TRITONSERVER_PARAMETER_INT:
      return &param->v.i;
    case TRITONSERVER_PARAMETER_BOOL:
      return &param->v.b;
    case TRITONSERVER_PARAMETER_DOUBLE:
      return &param->v.d;
    case TRITONSERVER_PARAMETER_BYTES:
      return param->v.ptr;
  }
  return NULL;
}

uint64_t api_parameter_byte_size(const TRITONSERVER_Parameter *param) {
  return param->byte_size;
}

/* ---- Exported API --------------------------------------------------------- */

const char *TRITONSERVER_ParameterTypeString(TRITONSERVER_ParameterType paramtype) {
  switch (paramtype) {
    case TRITONSERVER_PARAMETER_STRING:
      return "STRING";
    case TRITONSERVER_PARAMETER_INT:
      return "INT";
    case TRITONSERVER_PARAMETER_BOOL:
      return "BOOL";
    case TRITONSERVER_PARAMETER_DOUBLE:
      return "DOUBLE";
    case TRITONSERVER_PARAMETER_BYTES:
      return "BYTES";
  }
  return "<invalid>";
}

TRITONSERVER_Parameter *TRITONSERVER_ParameterNew(const char *name,
                                                  const TRITONSERVER_ParameterType type,
                                                  const void *value) {
  /* NULL for BYTES (ParameterBytesNew makes those) and for unknown types, as
   * Triton; NULL too where Triton would crash on a NULL name or value. */
  if (name == NULL || value == NULL) return NULL;
  TRITONSERVER_Parameter *p = NULL;
  switch (type) {
    case TRITONSERVER_PARAMETER_STRING:
      return param_alloc(name, type, value);
    case TRITONSERVER_PARAMETER_INT:
      p = param_alloc(name, type, NULL);
      memcpy(&p->v.i, value, sizeof p->v.i);
      p->byte_size = sizeof p->v.i;
      return p;
    case TRITONSERVER_PARAMETER_BOOL:
      p = param_alloc(name, type, NULL);
      /* Read as a byte: a C++ caller's bool is one byte, and any non-zero
       * byte means true without the UB of loading a bool that is not 0/1. */
      p->v.b = *(const unsigned char *)value != 0;
      p->byte_size = sizeof p->v.b;
      return p;
    case TRITONSERVER_PARAMETER_DOUBLE:
      p = param_alloc(name, type, NULL);
      memcpy(&p->v.d, value, sizeof p->v.d);
      p->byte_size = sizeof p->v.d;
      return p;
    case TRITONSERVER_PARAMETER_BYTES:
      break;
  }
  return NULL;
}

TRITONSERVER_Parameter *TRITONSERVER_ParameterBytesNew(const char *name,
                                                       const void *byte_ptr,
                                                       const uint64_t size) {
  if (name == NULL) return NULL;
  /* A shallow copy, as Triton: the bytes must outlive the parameter. */
  TRITONSERVER_Parameter *p = param_alloc(name, TRITONSERVER_PARAMETER_BYTES, NULL);
  p->v.ptr = byte_ptr;
  p->byte_size = size;
  return p;
}

void TRITONSERVER_ParameterDelete(TRITONSERVER_Parameter *parameter) { free(parameter); }
