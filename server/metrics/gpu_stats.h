/* Per-GPU metrics as tritonserver reports them (nv_gpu_utilization,
 * nv_gpu_memory_total_bytes, nv_gpu_memory_used_bytes, nv_gpu_power_usage,
 * nv_gpu_power_limit, nv_energy_consumption; label gpu_uuid), read from
 * NVML. NVML is dlopen'd (libnvidia-ml.so.1), so the server builds and runs
 * without it: no library, a failed init or no device means no GPU metrics
 * and no error. One thread owns a srv_metrics_gpu_t: it samples and renders
 * (the metrics endpoint's loop thread). See metrics.md, "GPU metrics". */
#ifndef NEREID_SERVER_METRICS_GPU_STATS_H
#define NEREID_SERVER_METRICS_GPU_STATS_H

#include <stdbool.h>
#include <stdint.h>

#include "server/metrics/metrics_text.h"

/* More GPUs than this in one host are left out of the page (a bound on
 * what a hostile or broken driver may report). */
#define SRV_METRICS_GPU_MAX 64
#define SRV_METRICS_GPU_UUID_MAX 96 /* NVML_DEVICE_UUID_V2_BUFFER_SIZE */

typedef struct {
  void *handle; /* nvmlDevice_t */
  char uuid[SRV_METRICS_GPU_UUID_MAX];
  /* The last sample; a reading that failed keeps its previous value. */
  double utilization;           /* [0, 1] */
  uint64_t mem_total, mem_used; /* bytes */
  double power_w, limit_w;
  uint64_t energy_start_mj, energy_mj; /* the driver's total; at init, now */
  bool has_energy;
} srv_metrics_gpu_dev_t;

typedef struct srv_metrics_gpu_api srv_metrics_gpu_api_t; /* NVML's entries */

typedef struct {
  void *dl;
  const srv_metrics_gpu_api_t *api;
  unsigned count;
  srv_metrics_gpu_dev_t *devs;
} srv_metrics_gpu_t;

/** Loads NVML, initializes it, lists the devices with their UUIDs and
 *  takes a first sample. False (and *g empty, nothing to free) when NVML
 *  is absent or has no device; the reason is logged at verbose level. */
bool srv_metrics_gpu_init(srv_metrics_gpu_t *g);

/** Reads every device's current values. The owner thread only. */
void srv_metrics_gpu_sample(srv_metrics_gpu_t *g);

/** Appends the six families, one series per device (label gpu_uuid). */
void srv_metrics_gpu_render(const srv_metrics_gpu_t *g, srv_metrics_buf_t *b);

/** Shuts NVML down and unloads it. *g may be empty. */
void srv_metrics_gpu_free(srv_metrics_gpu_t *g);

#endif
