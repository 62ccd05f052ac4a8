/* The repository index (see views.h): the registry, read in one section,
 * merged with the folders of the repositories; and whether clients may
 * load and unload. */
#include <stdio.h>
#include <string.h>

#include "server/common/log.h"
#include "server/common/memory.h"
#include "server/views/views.h"

static void index_add(inference_RepositoryIndexResponse *reply, const char *name,
                      const char *version, const char *state, const char *reason,
                      upb_Arena *a) {
  inference_RepositoryIndexResponse_ModelIndex *m =
      inference_RepositoryIndexResponse_add_models(reply, a);
  if (m == NULL) SRV_FATAL("out of memory");
  /* Copies: the registry view ends before the reply is used. */
  upb_StringView fields[4];
  const char *values[4] = {name, version, state, reason};
  for (int i = 0; i < 4; i++) {
    size_t n = strlen(values[i]);
    fields[i] = upb_StringView_FromDataAndSize(srv_arena_copy(a, values[i], n), n);
  }
  inference_RepositoryIndexResponse_ModelIndex_set_name(m, fields[0]);
  inference_RepositoryIndexResponse_ModelIndex_set_version(m, fields[1]);
  inference_RepositoryIndexResponse_ModelIndex_set_state(m, fields[2]);
  inference_RepositoryIndexResponse_ModelIndex_set_reason(m, fields[3]);
}

/* The rows of one known model: each ready version, each failed version
 * with its reason, and a row for the model's own state when that is what
 * there is to say (loading, unloading, unavailable). */
static void entry_rows(inference_RepositoryIndexResponse *reply,
                       const srv_registry_entry_t *e, bool ready_only, upb_Arena *a) {
  for (size_t v = 0; v < e->version_count; v++) {
    srv_model_desc_t d;
    srv_model_describe(e->versions[v], &d);
    index_add(reply, e->name, d.version_string, "READY", "", a);
  }
  if (ready_only) return;
  for (size_t f = 0; f < e->failure_count; f++) {
    char version[24];
    snprintf(version, sizeof version, "%lld", (long long)e->failures[f].version);
    index_add(reply, e->name, version, "UNAVAILABLE", e->failures[f].reason, a);
  }
  bool busy =
      e->state == SRV_MODEL_STATE_LOADING || e->state == SRV_MODEL_STATE_UNLOADING;
  if (busy || (e->version_count == 0 && e->failure_count == 0))
    index_add(reply, e->name, "", srv_model_state_name(e->state),
              e->reason != NULL ? e->reason : "", a);
}

/* tritonserver's reason for a name that is a folder of several roots
 * (MODEL_READY_REASON_DUPLICATE); such a name cannot load. */
#define REASON_DUPLICATE "model appears in two or more repositories"

/* The index lists the model folders of the roots as they are now (a
 * mapped folder under its model name), each with what the registry says
 * of it, as tritonserver builds it from its repositories' folders: a
 * model still loaded from a root that was unregistered since, or whose
 * folder is gone, or loaded from files given with the load, serves on but
 * is not listed. A folder never loaded has a row with its name only. */
inference_RepositoryIndexResponse *srv_view_repository_index(srv_server_t *srv,
                                                             bool ready_only,
                                                             upb_Arena *a) {
  inference_RepositoryIndexResponse *reply = inference_RepositoryIndexResponse_new(a);
  if (reply == NULL) SRV_FATAL("out of memory");
  srv_repo_listing_t disk = {0};
  /* The roots now (registered ones included); a server made of a bare
   * registry (the views' tests) has only its options' roots. */
  if (srv->repository != NULL)
    srv_repository_listing(srv->repository, &disk);
  else
    srv_repo_scan(srv->options->model_repositories, srv->options->model_repository_count,
                  false, &disk);
  const srv_registry_view_t *view = srv_registry_view_begin(srv->registry);
  size_t n = srv_registry_view_count(view), i = 0;
  for (size_t j = 0; j < disk.count; j++) {
    const srv_repo_model_t *d = &disk.models[j];
    /* Both lists are sorted by name, then namespace. */
    const srv_registry_entry_t *e = NULL;
    for (; i < n; i++) {
      e = srv_registry_view_at(view, i);
      int order = strcmp(e->name, d->name);
      if (order == 0) order = srv_repo_ns_cmp(e->ns, d->ns);
      if (order >= 0) break;
    }
    if (i == n || strcmp(e->name, d->name) != 0 || srv_repo_ns_cmp(e->ns, d->ns) != 0)
      e = NULL;
    if (d->duplicate) {
      if (!ready_only) index_add(reply, d->name, "", "UNAVAILABLE", REASON_DUPLICATE, a);
    } else if (e != NULL) {
      entry_rows(reply, e, ready_only, a);
    } else if (!ready_only) {
      index_add(reply, d->name, "", "", "", a);
    }
  }
  srv_registry_view_end(srv->registry);
  srv_repo_listing_free(&disk);
  return reply;
}

srv_status_t *srv_view_model_control_check(const srv_server_t *srv) {
  if (strcmp(srv->options->model_control_mode, "explicit") == 0) return NULL;
  return srv_status_new(GRPC_STATUS_UNAVAILABLE,
                        "explicit model load / unload is not allowed if polling is "
                        "enabled");
}
