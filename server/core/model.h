/* A loaded model version (TRITONBACKEND_Model) and its instances
 * (TRITONBACKEND_ModelInstance). The model's actor is its scheduler: it
 * alone touches the queue and the idle list. Each instance is a pinned
 * actor that runs the backend's execute on its own thread. Everything else
 * is set while loading and read-only while the model serves. */
#ifndef NEREID_SERVER_CORE_MODEL_H
#define NEREID_SERVER_CORE_MODEL_H

#include <semaphore.h>
#include <stdbool.h>

#include "actors/actor.h"
#include "model_config.upb.h"
#include "server/core/backend.h"
#include "server/core/request.h"
#include "server/core/stats.h"
#include "server/status.h"

typedef struct TRITONBACKEND_ModelInstance srv_instance_t;

/* Message kinds of the model actor. */
enum {
  SRV_MODEL_REQUEST = 0x200, /* a TRITONBACKEND_Request to schedule */
  SRV_MODEL_INSTANCE_IDLE,   /* an instance finished its batch */
  SRV_MODEL_STOP,
};

/* An input or output as the config declares it. */
typedef struct {
  const char *name;
  TRITONSERVER_DataType datatype;
  const int64_t *dims; /* without the batch dimension */
  uint32_t dims_count;
  bool optional;
} srv_tensor_spec_t;

struct TRITONBACKEND_Model {
  char *name;
  int64_t version;
  char version_string[24]; /* as the protocol spells it, made once at load */
  char *dir;               /* <repository>/<model> */
  char *version_dir;       /* <repository>/<model>/<version> */
  upb_Arena *arena;        /* holds config and everything derived from it */
  inference_ModelConfig *config;
  char *config_json;
  bool config_settable;  /* during TRITONBACKEND_ModelInitialize only */
  bool groups_defaulted; /* the config named no instance group */
  size_t config_json_len;
  int32_t max_batch_size;
  bool decoupled;
  srv_tensor_spec_t *inputs, *outputs;
  uint32_t input_count, output_count;
  const char **output_names; /* default requested outputs */
  TRITONBACKEND_Backend *backend;
  void *state; /* the backend's */
  struct srv_server *server;
  srv_instance_t **instances;
  uint32_t instance_count;
  srv_stats_t stats;
  act_actor_t actor; /* the scheduler */
  act_msg_t stop_msg;
  /* Scheduler state: the model actor only. */
  TRITONBACKEND_Request *queue_head, *queue_tail;
  srv_instance_t *idle;
};

struct TRITONBACKEND_ModelInstance {
  act_actor_t actor; /* pinned: its thread runs the backend */
  srv_model_t *model;
  char *name;
  TRITONSERVER_InstanceGroupKind kind;
  int32_t device_id;
  void *state; /* the backend's */
  bool initialized;
  bool started;              /* its thread runs */
  sem_t finalized;           /* posted by the stop handler, after finalize */
  srv_instance_t *next_idle; /* the model actor's idle list */
  act_msg_t execute_msg;     /* model actor -> instance: run `batch` */
  TRITONBACKEND_Request **batch;
  uint32_t batch_count;
  act_msg_t idle_msg; /* instance -> model actor */
  act_msg_t stop_msg;
};

/** Loads version `version` of the model in `dir` (named `name`): reads and
 *  completes its config, acquires its backend, initializes the model and
 *  its instances, and starts its actors. On error everything acquired is
 *  released and the status says why. A loading thread outside the runtime. */
srv_status_t *srv_model_load(struct srv_server *srv, const char *dir, const char *name,
                             int64_t version, srv_model_t **out);

/** Stops the model's actors; the model is unusable afterwards. The caller
 *  ensures no request is in flight. Main thread. */
void srv_model_stop(srv_model_t *m);

/** Finalizes the backend's model state and frees the model. After
 *  srv_model_stop and the runtime's quiesce. Main thread. */
void srv_model_free(srv_model_t *m);

/** Sends a request to the model's scheduler. Any thread. */
void srv_model_enqueue(srv_model_t *m, TRITONBACKEND_Request *request);

/* Instances (instance.c). */
srv_status_t *srv_instances_create(srv_model_t *m);
void srv_instances_stop(srv_model_t *m);
/** Waits until every started instance has finalized. Outside the runtime. */
void srv_instances_wait(srv_model_t *m);
void srv_instances_free(srv_model_t *m);

/* The scheduler's behaviour (scheduler.c). */
void srv_scheduler_behaviour(act_actor_t *self, act_msg_t *msg);

#endif
