/* The tracing flags at start-up: tritonserver's --trace-config
 * ([mode,]key=value, repeatable) and its older --trace-file, --trace-level,
 * --trace-rate, --trace-count and --trace-log-frequency, which
 * --trace-config overrides as tritonserver does. Main thread. */
#ifndef NEREID_SERVER_TRACE_TRACE_CONFIG_H
#define NEREID_SERVER_TRACE_TRACE_CONFIG_H

#include <stdint.h>

#include "server/common/status.h"
#include "server/options.h"

/** Triton's defaults: level OFF, rate 1000, count -1 (no limit), log
 *  frequency 0 (one file), no file. */
typedef struct {
  uint32_t level; /* TRITONSERVER_InferenceTraceLevel bits */
  uint32_t rate;
  int32_t count;
  uint32_t log_frequency;
  char *file; /* NULL: none given */
} srv_trace_config_t;

/** The flags of opt as a config. INVALID_ARGUMENT naming the flag and the
 *  value at fault: a malformed setting, an unknown key, a value out of
 *  range, mode opentelemetry (no exporter is built), or a trace file that
 *  cannot be written where it is named (see trace.md, "The trace file"). */
srv_status_t *srv_trace_config_parse(const srv_options_t *opt, srv_trace_config_t *out);

void srv_trace_config_free(srv_trace_config_t *c);

/** Parses, then frees: the start-up check of the flags. */
srv_status_t *srv_trace_config_check(const srv_options_t *opt);

/** A level name as --trace-level and level= take it (case-insensitive):
 *  off/false: 0; timestamps/true/on/min/max; tensors. False if unknown. */
bool srv_trace_level_parse(const char *s, uint32_t *level);

/** The trace file rule (trace.md): an absolute or relative path of at
 *  most PATH_MAX bytes whose folder exists and is writable and which, if
 *  it exists, is a regular file. NULL when it may be written. */
srv_status_t *srv_trace_file_check(const char *path);

#endif
