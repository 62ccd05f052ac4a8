/* Server metadata (see views.h). Constant but for the arena. */
#include "server/views/views.h"

#include "server/common/log.h"

/* Triton's extension names, for what really works, more as they land; the
 * last entry is Nereid's own and names it (Triton's clients skip names they
 * do not know). */
const char *const srv_extensions[] = {"model_repository",
                                      "model_repository(unload_dependents)",
                                      "model_configuration", "sequence", "statistics",
                                      "system_shared_memory", "cuda_shared_memory",
                                      "logging",
                                      "trace",
                                      NEREID_EXTENSION};
const size_t srv_extension_count = sizeof srv_extensions / sizeof srv_extensions[0];

inference_ServerMetadataResponse *srv_view_server_metadata(upb_Arena *a,
                                                           const char *name) {
  inference_ServerMetadataResponse *reply = inference_ServerMetadataResponse_new(a);
  if (reply == NULL) SRV_FATAL("out of memory");
  /* --id, tritonserver's "triton" unless set. */
  inference_ServerMetadataResponse_set_name(reply, upb_StringView_FromString(name));
  inference_ServerMetadataResponse_set_version(
      reply, upb_StringView_FromString(TRITON_COMPAT_VERSION));
  for (size_t i = 0; i < srv_extension_count; i++)
    if (!inference_ServerMetadataResponse_add_extensions(
            reply, upb_StringView_FromString(srv_extensions[i]), a))
      SRV_FATAL("out of memory");
  return reply;
}
