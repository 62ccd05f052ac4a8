/* The bodies of the non-inference endpoints, built once for both
 * frontends as messages of grpc_service.proto: server metadata, model
 * metadata, model config, statistics and the repository index. The gRPC
 * frontend serializes them; the HTTP frontend prints them as JSON
 * (http_views.h). Every builder runs on any thread: registry reads are
 * lock-free sections that end before it returns, and the message is
 * allocated in the caller's arena. */
#ifndef NEREID_SERVER_VIEWS_VIEWS_H
#define NEREID_SERVER_VIEWS_VIEWS_H

#include <stdbool.h>

#include "grpc_service.upb.h"
#include "server/core/core.h"
#include "upb/upb.h"

/** Triton's extension names, for what really works. */
extern const char *const srv_extensions[];
extern const size_t srv_extension_count;

/** Name (`name`: the server id, --id), version and extensions of the
 *  server. */
inference_ServerMetadataResponse *srv_view_server_metadata(upb_Arena *a,
                                                           const char *name);

/** The metadata of model version m (the caller holds a reference).
 *  `versions` lists m's version alone when the request named one
 *  (named_version), else every ready version of the model, as Triton
 *  does. Strings are copied into `a`: the message outlives m. */
inference_ModelMetadataResponse *srv_view_model_metadata(srv_server_t *srv,
                                                         srv_model_t *m,
                                                         bool named_version,
                                                         upb_Arena *a);

/** m's config. The message aliases m's own config: serialize it before
 *  dropping the reference on m. */
inference_ModelConfigResponse *srv_view_model_config(srv_model_t *m, upb_Arena *a);

/** Statistics of every version of every model (name empty), of every
 *  ready version of one model (version empty), or of one version. A model
 *  without a ready version, or without that version, is INVALID_ARGUMENT
 *  with Triton's texts ("requested model '<m>' is not available",
 *  "requested model version is not available for model '<m>'"); a
 *  malformed version is srv_model_lookup's status. *out is NULL on error.
 *  Strings are copied into `a`. */
srv_status_t *srv_view_model_statistics(srv_server_t *srv, upb_StringView name,
                                        upb_StringView version, upb_Arena *a,
                                        inference_ModelStatisticsResponse **out);

/** Every model of the registry and every folder of the repositories,
 *  sorted by name, as tritonserver lists them (only ready versions when
 *  ready_only). Reads the repositories' folders (blocking I/O) unless
 *  ready_only. Strings are copied into `a`. */
inference_RepositoryIndexResponse *srv_view_repository_index(srv_server_t *srv,
                                                             bool ready_only,
                                                             upb_Arena *a);

/** Settings in one TraceSetting request, and values of one setting:
 *  Triton has four settings and two levels; more is refused before
 *  anything is looked at (INVALID_ARGUMENT naming the limit). A frontend
 *  passes at most one item past the limit, however many it got. */
#define SRV_VIEW_TRACE_SETTINGS_MAX 16
#define SRV_VIEW_TRACE_VALUES_MAX 8

/** One setting of a TraceSetting request, as both frontends carry it: its
 *  name and string values; none clears it (gRPC's empty list, HTTP's
 *  null). */
typedef struct {
  upb_StringView name;
  const upb_StringView *values;
  size_t count;
} srv_view_trace_item_t;

/** The settings of a TraceSetting request as items in `a` (*count of
 *  them), at most one past SRV_VIEW_TRACE_SETTINGS_MAX however many it has;
 *  names and values alias the request's. */
srv_view_trace_item_t *srv_view_trace_items(const inference_TraceSettingRequest *req,
                                            upb_Arena *a, size_t *count);

/** TraceSetting (gRPC) and GET/POST .../trace/setting (HTTP): applies
 *  `items` to the global setting (model empty) or to the model's, all or
 *  nothing, then answers every setting in force for it (Triton's names:
 *  trace_level, trace_rate, trace_count, log_frequency, trace_file,
 *  trace_mode). A model without a ready version is INVALID_ARGUMENT,
 *  Triton's "Request for unknown model : <m>"; a bad setting is
 *  srv_trace_update_parse's or srv_tracer_update's status (trace_file is
 *  UNIMPLEMENTED: files are named on the command line only). *out is
 *  NULL on error. */
srv_status_t *srv_view_trace_setting(srv_server_t *srv, upb_StringView model,
                                     const srv_view_trace_item_t *items, size_t count,
                                     upb_Arena *a, inference_TraceSettingResponse **out);

/** NULL when clients may load and unload models (--model-control-mode
 *  explicit); else UNAVAILABLE with tritonserver's text: in modes none and
 *  poll the repository decides. */
srv_status_t *srv_view_model_control_check(const srv_server_t *srv);

#endif
