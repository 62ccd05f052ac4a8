/* The log settings as clients read and change them: the LogSettings RPC
 * (srv_view_log_settings) and GET/POST /v2/logging (http_views.h), with
 * Triton's keys, semantics and texts. An update is read and checked whole,
 * then applied (srv_log_update_apply): a refused request changes nothing,
 * where Triton applies the settings before the one at fault. Unknown keys
 * are ignored, as Triton does. The log file cannot be changed from the
 * network (UNIMPLEMENTED, Triton's text): only the operator chooses where
 * the server writes (--log-file, TRITONSERVER_ServerOptionsSetLogFile).
 * Any thread. */
#ifndef NEREID_SERVER_VIEWS_LOG_VIEW_H
#define NEREID_SERVER_VIEWS_LOG_VIEW_H

#include <stdbool.h>
#include <stdint.h>

#include "grpc_service.upb.h"
#include "server/common/log.h"
#include "server/common/status.h"
#include "upb/upb.h"

/** The keys, in the order Triton answers them: log_file, log_info,
 *  log_warning, log_error, log_verbose_level, log_format. */
#define SRV_LOG_SETTING_COUNT 6
extern const char *const srv_log_setting_names[SRV_LOG_SETTING_COUNT];

/** A checked update: each set_* says whether the request names it. */
typedef struct {
  bool set_file; /**< refused when applied: the network may not move the log */
  bool set_info, info;
  bool set_warning, warning;
  bool set_error, error;
  bool set_verbose;
  int verbose;
  bool set_format;
  srv_log_format_t format;
} srv_log_update_t;

/** Records a verbose level; one above INT_MAX is INVALID_ARGUMENT naming
 *  it (Triton would wrap it to a negative level, then 0). */
srv_status_t *srv_log_update_verbose(srv_log_update_t *u, uint64_t level);

/** Records the format called `name`; another name is INVALID_ARGUMENT
 *  "invalid argument for <flag>, got: <name>" (Triton's text, whose flag
 *  part differs between its frontends). */
srv_status_t *srv_log_update_format(srv_log_update_t *u, upb_StringView name,
                                    const char *flag);

/** Applies u, or refuses all of it when it moves the log file. */
srv_status_t *srv_log_update_apply(const srv_log_update_t *u);

/** The current settings, as both frontends print them. */
typedef struct {
  char file[SRV_LOG_FILE_MAX + 1];
  bool info, warning, error;
  int verbose;
  srv_log_format_t format;
} srv_log_settings_t;
void srv_log_settings_read(srv_log_settings_t *out);

/** LogSettings: applies the request's settings (Triton's texts for a value
 *  of the wrong kind: "expect boolean for 'log_info'", "expect int32 for
 *  'log_verbose_level'", "expect string for 'log_format'"), then answers
 *  every setting. *out is NULL on error. Allocates in `a`. */
srv_status_t *srv_view_log_settings(const inference_LogSettingsRequest *req, upb_Arena *a,
                                    inference_LogSettingsResponse **out);

#endif
