/* Model instances (see model.h): each a pinned actor whose thread calls the
 * backend's execute, then tells the model actor it is idle. Also the
 * TRITONBACKEND_ModelInstance* API, called on that thread or while loading. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actors/inline.h"
#include "actors/timer.h"
#include "server/api/error.h"
#include "server/common/host_policy.h"
#include "server/common/log.h"
#include "server/common/memory.h"
#include "server/core/server.h"
#include "server/cuda/cuda.h"
#include "server/model/config_limits.h"
#include "server/model/model.h"
#include "server/sched/rate_limiter_model.h"
#include "server/trace/trace_request.h"

enum { INSTANCE_EXECUTE = 0x300, INSTANCE_STOP };

/* Triton's rule: when execute fails, the backend has not answered or
 * released the requests, so the server does both, and counts each as a
 * failure of the backend (reason BACKEND), as the backend would have with
 * ReportStatistics(success=false). */
static void batch_fail(srv_instance_t *inst, TRITONSERVER_Error *err) {
  uint64_t now = act_now_ns();
  for (uint32_t i = 0; i < inst->batch_count; i++) {
    TRITONBACKEND_Request *r = inst->batch[i];
    uint64_t start = r->state->request_start_ns;
    if (!r->seq_padding)
      srv_stats_fail(&inst->model->stats, SRV_FAIL_BACKEND, now > start ? now - start : 0);
    TRITONBACKEND_Response *response;
    TRITONBACKEND_ResponseNew(&response, r);
    TRITONBACKEND_ResponseSend(response, TRITONSERVER_RESPONSE_COMPLETE_FINAL, err);
    TRITONSERVER_Error *rel =
        TRITONBACKEND_RequestRelease(r, TRITONSERVER_REQUEST_RELEASE_ALL);
    if (rel != NULL) TRITONSERVER_ErrorDelete(rel);
  }
}

/* The instance's thread, once, before the backend's first call on it:
 * for a GPU instance its device made current (CUDA's current device is
 * per thread and stays). Its host policy it has from its birth
 * (instance_start). A device failure is logged; the backend's calls then
 * fail with CUDA's own reason. */
static void device_bind(srv_instance_t *inst) {
  if (inst->device_bound) return;
  inst->device_bound = true;
  if (inst->kind != TRITONSERVER_INSTANCEGROUPKIND_GPU) return;
  srv_status_t *st = srv_cuda_set_device(inst->device_id);
  if (st == NULL) return;
  SRV_ERROR("model '%s' instance '%s': %s", inst->model->name, inst->name,
            srv_status_message(st));
  srv_status_free(st);
}

static void instance_behaviour(act_actor_t *self, act_msg_t *msg) {
  srv_instance_t *inst = act_actor_state(self);
  srv_model_t *m = inst->model;
  device_bind(inst);
  switch (msg->kind) {
    case INSTANCE_EXECUTE: {
      /* Relaxed: read only for a log line (srv_model_abandon). */
      atomic_store_explicit(&inst->executing, inst->batch_count, memory_order_relaxed);
      for (uint32_t i = 0; i < inst->batch_count; i++) {
        srv_request_pending_end(inst->batch[i]);
        if (inst->batch[i]->state->trace != NULL)
          srv_trace_backend_inputs(inst->batch[i]);
      }
      TRITONSERVER_Error *err = m->backend->execute(inst, inst->batch, inst->batch_count);
      atomic_store_explicit(&inst->executing, 0, memory_order_relaxed);
      if (err != NULL) {
        SRV_VERBOSE(1, "model '%s' instance '%s': execute failed: %s", m->name,
                    inst->name, TRITONSERVER_ErrorMessage(err));
        batch_fail(inst, err);
        TRITONSERVER_ErrorDelete(err);
      }
      inst->batch_count = 0;
      /* With the rate limiter, its resources go back first; the limiter
       * then sends idle_msg (rate_limiter.md). A failed execute releases
       * too: no grant is ever kept. */
      if (inst->rl_ticket != NULL) {
        srv_rl_release(m->rl, inst->rl_ticket);
        return;
      }
      /* The scheduler's turn runs here, so the next batch needs no worker
       * (actors/inline.h); execute has returned, nothing here blocks. */
      act_send_inline(&m->actor, &inst->idle_msg);
      return;
    }
    case INSTANCE_STOP:
      if (inst->initialized && m->backend->instance_finalize != NULL) {
        TRITONSERVER_Error *err = m->backend->instance_finalize(inst);
        if (err != NULL) {
          SRV_ERROR("model '%s' instance '%s' failed to finalize: %s", m->name,
                    inst->name, TRITONSERVER_ErrorMessage(err));
          TRITONSERVER_ErrorDelete(err);
        }
      }
      inst->initialized = false;
      sem_post(&inst->finalized);
      return;
    default:
      SRV_FATAL("instance '%s': unexpected message kind %u", inst->name, msg->kind);
  }
}

/* Triton's policy name: the group's host_policy, else one per kind and
 * device. */
static char *policy_name(upb_StringView group_policy, TRITONSERVER_InstanceGroupKind kind,
                         int32_t device) {
  if (group_policy.size > 0) return srv_strndup(group_policy.data, group_policy.size);
  char name[32];
  if (kind == TRITONSERVER_INSTANCEGROUPKIND_GPU)
    snprintf(name, sizeof name, "gpu_%d", (int)device);
  else
    snprintf(name, sizeof name, "%s",
             kind == TRITONSERVER_INSTANCEGROUPKIND_MODEL ? "model" : "cpu");
  return srv_strdup(name);
}

static srv_instance_t *instance_new(srv_model_t *m, const char *name,
                                    TRITONSERVER_InstanceGroupKind kind, int32_t device,
                                    upb_StringView group_policy) {
  srv_instance_t *inst = calloc(1, sizeof *inst);
  if (inst == NULL) SRV_FATAL("out of memory");
  inst->model = m;
  inst->name = strdup(name);
  inst->kind = kind;
  inst->device_id = device;
  inst->host_policy = policy_name(group_policy, kind, device);
  if (inst->name == NULL) SRV_FATAL("out of memory");
  srv_batcher_room_init(m, inst);
  inst->execute_msg.kind = INSTANCE_EXECUTE;
  inst->idle_msg.kind = SRV_MODEL_INSTANCE_IDLE;
  inst->stop_msg.kind = INSTANCE_STOP;
  atomic_init(&inst->executing, 0);
  sem_init(&inst->finalized, 0, 0);
  return inst;
}

/* Initializes one instance with the backend, then starts its thread. */
static srv_status_t *instance_start_bound(srv_model_t *m, srv_instance_t *inst) {
  if (inst->kind == TRITONSERVER_INSTANCEGROUPKIND_GPU) {
    /* Initialize runs on the loader's thread: it sees the instance's device
     * current, as the backend would on the instance's own thread. */
    srv_status_t *st = srv_cuda_set_device(inst->device_id);
    if (st != NULL) return st;
    SRV_VERBOSE(1, "model '%s': instance '%s' on GPU %d", m->name, inst->name,
                (int)inst->device_id);
  }
  if (m->backend->instance_initialize != NULL) {
    TRITONSERVER_Error *err = m->backend->instance_initialize(inst);
    if (err != NULL) {
      srv_status_t *st = srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                                        "instance '%s' failed to initialize: %s",
                                        inst->name, TRITONSERVER_ErrorMessage(err));
      TRITONSERVER_ErrorDelete(err);
      return st;
    }
  }
  inst->initialized = true;
  char thread_name[16];
  snprintf(thread_name, sizeof thread_name, "inst-%.10s", m->name);
  int rc = act_actor_init_pinned(&inst->actor, m->server->runtime, instance_behaviour,
                                 inst, thread_name);
  if (rc != 0) {
    if (m->backend->instance_finalize != NULL) {
      TRITONSERVER_Error *err = m->backend->instance_finalize(inst);
      if (err != NULL) TRITONSERVER_ErrorDelete(err);
    }
    inst->initialized = false;
    return srv_status_new(GRPC_STATUS_RESOURCE_EXHAUSTED,
                          "cannot start a thread for instance '%s': %s", inst->name,
                          strerror(rc));
  }
  inst->started = true;
  inst->next_idle = m->idle; /* before the model actor starts: no race */
  m->idle = inst;
  m->idle_count++;
  m->started_count++;
  return NULL;
}

/* The instance's host policy (--host-policy: its CPUs, its NUMA node's
 * memory) holds on the loader's thread while the backend initializes the
 * instance, so what initialize allocates lands on the node, as in Triton;
 * the instance's thread, created meanwhile, inherits it (pthread_create
 * copies the affinity, clone the memory policy) from its first page on.
 * The loader's thread then gets its own back. A policy that cannot be
 * applied fails the load, as in Triton. */
static srv_status_t *instance_start(srv_model_t *m, srv_instance_t *inst) {
  const srv_options_t *opt = m->server->options;
  srv_host_policy_saved_t saved;
  srv_status_t *st = srv_host_policy_enter(opt->host_policies, opt->host_policy_count,
                                           inst->host_policy, &saved);
  if (st != NULL) {
    srv_status_t *named = srv_status_new(srv_status_code(st), "instance '%s': %s",
                                         inst->name, srv_status_message(st));
    srv_status_free(st);
    return named;
  }
  if (saved.cores > 0 || saved.node >= 0) {
    char memory[48] = "";
    if (saved.node >= 0)
      snprintf(memory, sizeof memory, ", memory on NUMA node %d", saved.node);
    SRV_VERBOSE(1, "model '%s' instance '%s': host policy '%s': %d CPU cores (0: all)%s",
                m->name, inst->name, inst->host_policy, saved.cores, memory);
  }
  st = instance_start_bound(m, inst);
  srv_host_policy_leave(&saved);
  return st;
}

static TRITONSERVER_InstanceGroupKind group_kind(const inference_ModelInstanceGroup *g) {
  switch (inference_ModelInstanceGroup_kind(g)) {
    case inference_ModelInstanceGroup_KIND_GPU:
      return TRITONSERVER_INSTANCEGROUPKIND_GPU;
    case inference_ModelInstanceGroup_KIND_MODEL:
      return TRITONSERVER_INSTANCEGROUPKIND_MODEL;
    default:
      return TRITONSERVER_INSTANCEGROUPKIND_CPU;
  }
}

srv_status_t *srv_instances_create(srv_model_t *m) {
  size_t groups;
  const inference_ModelInstanceGroup *const *g =
      inference_ModelConfig_instance_group(m->config, &groups);
  /* Summed in 64 bits and bounded here too, where the array is sized: the
   * backend's preferred group (srv_model_groups_prefer) sets a count after
   * the config's limits were checked. */
  uint64_t total = srv_config_instance_total(m->config);
  if (total > SRV_CONFIG_INSTANCES_MAX)
    return srv_status_new(GRPC_STATUS_INVALID_ARGUMENT,
                          "model '%s': its instance groups ask for %llu instances, "
                          "above the limit of %u per model version",
                          m->name, (unsigned long long)total, SRV_CONFIG_INSTANCES_MAX);
  m->instances = calloc(total ? total : 1, sizeof *m->instances);
  if (m->instances == NULL) SRV_FATAL("out of memory");
  for (size_t i = 0; i < groups; i++) {
    upb_StringView gname = inference_ModelInstanceGroup_name(g[i]);
    int32_t count = inference_ModelInstanceGroup_count(g[i]);
    TRITONSERVER_InstanceGroupKind kind = group_kind(g[i]);
    /* A GPU group has `count` instances on each of its GPUs (completion
     * listed them all when the config listed none); others one device, 0. */
    size_t devices = 0;
    const int32_t *gpus = kind == TRITONSERVER_INSTANCEGROUPKIND_GPU
                              ? inference_ModelInstanceGroup_gpus(g[i], &devices)
                              : NULL;
    if (devices == 0) devices = 1;
    for (int32_t k = 0; k < count; k++) {
      /* Triton's name: the group's and the index; the device is the
       * instance's own (its host policy "gpu_<id>"). */
      char name[SRV_CONFIG_NAME_MAX + 16];
      snprintf(name, sizeof name, "%.*s_%d", (int)gname.size, gname.data, (int)k);
      for (size_t d = 0; d < devices; d++) {
        srv_instance_t *inst =
            instance_new(m, name, kind, gpus != NULL ? gpus[d] : 0,
                         inference_ModelInstanceGroup_host_policy(g[i]));
        inst->rate_limiter = inference_ModelInstanceGroup_rate_limiter(g[i]);
        inst->index = m->instance_count;
        m->instances[m->instance_count++] = inst;
        srv_status_t *st = instance_start(m, inst);
        if (st != NULL) return st; /* the caller stops and frees what started */
      }
    }
  }
  return NULL;
}

void srv_instances_stop(srv_model_t *m) {
  for (uint32_t i = 0; i < m->instance_count; i++) {
    srv_instance_t *inst = m->instances[i];
    if (inst->started) act_send_stop(&inst->actor, &inst->stop_msg);
  }
}

void srv_instances_wait(srv_model_t *m) {
  for (uint32_t i = 0; i < m->instance_count; i++)
    if (m->instances[i]->started) sem_wait(&m->instances[i]->finalized);
  act_runtime_reap(m->server->runtime);
}

void srv_instances_free(srv_model_t *m) {
  for (uint32_t i = 0; i < m->instance_count; i++) {
    srv_rl_ticket_free(m->instances[i]);
    free(m->instances[i]->name);
    free(m->instances[i]->host_policy);
    free(m->instances[i]->batch);
    sem_destroy(&m->instances[i]->finalized);
    free(m->instances[i]);
  }
  free(m->instances);
  m->instances = NULL;
  m->instance_count = 0;
}

/* ---- TRITONBACKEND_ModelInstance* API ---- */

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceName(TRITONBACKEND_ModelInstance *instance,
                                                    const char **name) {
  *name = instance->name;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceKind(
    TRITONBACKEND_ModelInstance *instance, TRITONSERVER_InstanceGroupKind *kind) {
  *kind = instance->kind;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceDeviceId(
    TRITONBACKEND_ModelInstance *instance, int32_t *device_id) {
  *device_id = instance->device_id;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceHostPolicy(
    TRITONBACKEND_ModelInstance *instance, TRITONSERVER_Message **host_policy) {
  /* One policy per instance, with its --host-policy settings, as Triton. */
  const srv_options_t *opt = instance->model->server->options;
  char *json = srv_host_policy_json(opt->host_policies, opt->host_policy_count,
                                    instance->host_policy);
  TRITONSERVER_Error *err =
      TRITONSERVER_MessageNewFromSerializedJson(host_policy, json, strlen(json));
  free(json);
  return err;
}

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceIsPassive(
    TRITONBACKEND_ModelInstance *instance, bool *is_passive) {
  (void)instance;
  *is_passive = false;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceProfileCount(
    TRITONBACKEND_ModelInstance *instance, uint32_t *count) {
  (void)instance;
  *count = 0;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceProfileName(
    TRITONBACKEND_ModelInstance *instance, const uint32_t index,
    const char **profile_name) {
  (void)profile_name;
  return api_error_new(TRITONSERVER_ERROR_INVALID_ARG, "instance '%s' has no profile %u",
                       instance->name, index);
}

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceSecondaryDeviceCount(
    TRITONBACKEND_ModelInstance *instance, uint32_t *count) {
  (void)instance;
  *count = 0;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceSecondaryDeviceProperties(
    TRITONBACKEND_ModelInstance *instance, uint32_t index, const char **kind,
    int64_t *id) {
  (void)kind;
  (void)id;
  return api_error_new(TRITONSERVER_ERROR_INVALID_ARG,
                       "instance '%s' has no secondary device %u", instance->name, index);
}

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceModel(
    TRITONBACKEND_ModelInstance *instance, TRITONBACKEND_Model **model) {
  *model = instance->model;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceState(
    TRITONBACKEND_ModelInstance *instance, void **state) {
  *state = instance->state;
  return NULL;
}

TRITONSERVER_Error *TRITONBACKEND_ModelInstanceSetState(
    TRITONBACKEND_ModelInstance *instance, void *state) {
  instance->state = state;
  return NULL;
}
