/* A model version from its configuration alone (see model_bare.h). The
 * steps are srv_model_load's, minus the backend and what runs on it. */
#include "server/model/model_bare.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/common/log.h"
#include "server/common/memory.h"
#include "server/config/model_config.h"
#include "server/model/config_json.h"
#include "server/model/model.h"
#include "server/model/model_check.h"
#include "server/sched/batcher.h"
#include "server/sched/ensemble_graph.h"
#include "server/sched/sequence.h"

/* No folder: an initial_state data_file is looked for here and never found. */
#define BARE_DIR "/nonexistent/nereid-bare-model"

/* The model's own copy, as loading takes one: completion changes it. */
static void config_copy(srv_model_t *m, const inference_ModelConfig *config) {
  upb_Arena *tmp = upb_Arena_New();
  size_t len;
  char *bytes = tmp != NULL ? inference_ModelConfig_serialize(config, tmp, &len) : NULL;
  m->config = bytes != NULL ? inference_ModelConfig_parse(bytes, len, m->arena) : NULL;
  upb_Arena_Free(tmp);
  if (m->config == NULL) SRV_FATAL("out of memory");
}

srv_status_t *srv_model_bare_new(const char *name, const inference_ModelConfig *config,
                                 srv_model_t **out) {
  *out = NULL;
  srv_model_t *m = aligned_alloc(_Alignof(srv_model_t), sizeof *m); /* model.h */
  if (m == NULL) SRV_FATAL("out of memory");
  memset(m, 0, sizeof *m);
  m->name = srv_strdup(name);
  m->dir = srv_strdup(BARE_DIR);
  m->version = 1;
  snprintf(m->version_string, sizeof m->version_string, "1");
  m->arena = upb_Arena_New();
  if (m->arena == NULL) SRV_FATAL("out of memory");
  config_copy(m, config);
  srv_status_t *st = srv_model_config_complete(m, "config");
  bool ensemble = st == NULL && srv_ensemble_config_is(m->config);
  if (ensemble) { /* the step graph and its checks on the config alone */
    srv_ensemble_graph_t graph;
    st = srv_ensemble_graph_compile(m->config, m->name, "config", m->arena, &graph);
    if (st == NULL)
      m->config_json = srv_config_json_encode(
          (const upb_Message *)m->config, cfg_model_config_def(), &m->config_json_len);
  } else if (st == NULL) {
    m->config_json = srv_config_json_encode((const upb_Message *)m->config,
                                            cfg_model_config_def(), &m->config_json_len);
    st = srv_batcher_setup(m);
  }
  if (st == NULL && inference_ModelConfig_has_sequence_batching(m->config))
    st = srv_seq_setup(m, "config"); /* the settings only: no slot starts */
  if (st != NULL) {
    srv_model_bare_free(m);
    return st;
  }
  srv_stats_init(&m->stats, (uint32_t)m->max_batch_size);
  /* The queue (set up by the batcher) publishes its depth per level. */
  m->stats.queue_depth = m->queue.depth;
  m->stats.queue_levels = m->queue.depth != NULL ? m->queue.level_count : 0;
  atomic_init(&m->refs, 1);
  *out = m;
  return NULL;
}

srv_status_t *srv_model_bare_from_text(const char *name, const char *pbtxt,
                                       srv_model_t **out) {
  *out = NULL;
  upb_Arena *a = upb_Arena_New();
  if (a == NULL) SRV_FATAL("out of memory");
  char err[256];
  inference_ModelConfig *c =
      cfg_model_config_parse(pbtxt, strlen(pbtxt), "config.pbtxt", a, err, sizeof err);
  srv_status_t *st = c != NULL ? srv_model_bare_new(name, c, out)
                               : srv_status_new(GRPC_STATUS_INVALID_ARGUMENT, "%s", err);
  upb_Arena_Free(a);
  return st;
}

const char *srv_model_bare_config_json(const srv_model_t *m, size_t *len) {
  *len = m->config_json_len;
  return m->config_json;
}

bool srv_model_bare_is_ensemble(const srv_model_t *m) {
  return srv_ensemble_config_is(m->config);
}

void srv_model_bare_free(srv_model_t *m) {
  srv_seq_free(m);
  srv_batcher_free(m);
  srv_stats_free(&m->stats);
  free(m->config_json);
  free(m->name);
  free(m->dir);
  upb_Arena_Free(m->arena);
  free(m);
}
