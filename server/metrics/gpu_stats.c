/* GPU metrics from NVML (see gpu_stats.h). NVML is the driver's library:
 * it is dlopen'd so that a host without a driver still runs the server,
 * and only the entries below are resolved. */
#include "server/metrics/gpu_stats.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "server/common/log.h"

/* NVML's ABI, declared here so that the server builds without its header.
 * nvmlReturn_t is an int, 0 is success. */
typedef int nvml_ret_t;
typedef struct {
  unsigned gpu, memory; /* percent over the driver's last period */
} nvml_utilization_t;
typedef struct {
  unsigned long long total, free, used; /* bytes */
} nvml_memory_t;

struct srv_metrics_gpu_api {
  nvml_ret_t (*init)(void);
  nvml_ret_t (*shutdown)(void);
  nvml_ret_t (*count)(unsigned *);
  nvml_ret_t (*by_index)(unsigned, void **);
  nvml_ret_t (*uuid)(void *, char *, unsigned);
  nvml_ret_t (*utilization)(void *, nvml_utilization_t *);
  nvml_ret_t (*memory)(void *, nvml_memory_t *);
  nvml_ret_t (*power)(void *, unsigned *);            /* milliwatts */
  nvml_ret_t (*power_limit)(void *, unsigned *);      /* milliwatts */
  nvml_ret_t (*energy)(void *, unsigned long long *); /* millijoules */
};

/* Written by the first successful init only; read-only afterwards. The
 * endpoint is the one user, so there is no race on it. */
static srv_metrics_gpu_api_t api;

static bool resolve(void *dl) {
  struct {
    const char *name;
    void **slot;
  } want[] = {
      {"nvmlInit_v2", (void **)&api.init},
      {"nvmlShutdown", (void **)&api.shutdown},
      {"nvmlDeviceGetCount_v2", (void **)&api.count},
      {"nvmlDeviceGetHandleByIndex_v2", (void **)&api.by_index},
      {"nvmlDeviceGetUUID", (void **)&api.uuid},
      {"nvmlDeviceGetUtilizationRates", (void **)&api.utilization},
      {"nvmlDeviceGetMemoryInfo", (void **)&api.memory},
      {"nvmlDeviceGetPowerUsage", (void **)&api.power},
      {"nvmlDeviceGetPowerManagementLimit", (void **)&api.power_limit},
      {"nvmlDeviceGetTotalEnergyConsumption", (void **)&api.energy},
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    *want[i].slot = dlsym(dl, want[i].name);
    if (*want[i].slot == NULL) {
      SRV_VERBOSE(1, "GPU metrics off: NVML has no %s", want[i].name);
      return false;
    }
  }
  return true;
}

/* A UUID goes into a label value: anything but the characters a UUID is
 * made of is replaced, so a driver's odd bytes cannot break the page. */
static void uuid_clean(char *s) {
  for (; *s != '\0'; s++) {
    char c = *s;
    bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
              (c >= 'A' && c <= 'Z') || c == '-' || c == '_' || c == '.' || c == ':';
    if (!ok) *s = '_';
  }
}

bool srv_metrics_gpu_init(srv_metrics_gpu_t *g) {
  memset(g, 0, sizeof *g);
  void *dl = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (dl == NULL) {
    SRV_VERBOSE(1, "GPU metrics off: no NVML (%s)", dlerror());
    return false;
  }
  unsigned count = 0;
  if (!resolve(dl) || api.init() != 0) {
    dlclose(dl);
    return false;
  }
  if (api.count(&count) != 0 || count == 0) {
    SRV_VERBOSE(1, "GPU metrics off: NVML lists no GPU");
    api.shutdown();
    dlclose(dl);
    return false;
  }
  if (count > SRV_METRICS_GPU_MAX) count = SRV_METRICS_GPU_MAX;
  g->devs = calloc(count, sizeof *g->devs);
  if (g->devs == NULL) SRV_FATAL("out of memory");
  g->dl = dl;
  g->api = &api;
  for (unsigned i = 0; i < count; i++) {
    srv_metrics_gpu_dev_t *d = &g->devs[g->count];
    if (api.by_index(i, &d->handle) != 0 ||
        api.uuid(d->handle, d->uuid, sizeof d->uuid) != 0)
      continue; /* a device NVML cannot name is left out */
    d->uuid[sizeof d->uuid - 1] = '\0';
    uuid_clean(d->uuid);
    unsigned long long mj;
    if (api.energy(d->handle, &mj) == 0) {
      d->has_energy = true;
      d->energy_start_mj = d->energy_mj = mj;
    }
    g->count++;
  }
  srv_metrics_gpu_sample(g);
  SRV_VERBOSE(1, "GPU metrics on for %u GPU(s)", g->count);
  return true;
}

void srv_metrics_gpu_sample(srv_metrics_gpu_t *g) {
  for (unsigned i = 0; i < g->count; i++) {
    srv_metrics_gpu_dev_t *d = &g->devs[i];
    nvml_utilization_t u;
    if (g->api->utilization(d->handle, &u) == 0)
      d->utilization = (u.gpu > 100 ? 100 : u.gpu) / 100.0;
    nvml_memory_t m;
    if (g->api->memory(d->handle, &m) == 0) {
      d->mem_total = m.total;
      d->mem_used = m.used;
    }
    unsigned mw;
    if (g->api->power(d->handle, &mw) == 0) d->power_w = mw / 1000.0;
    if (g->api->power_limit(d->handle, &mw) == 0) d->limit_w = mw / 1000.0;
    unsigned long long mj;
    /* A total below the start (a driver reload) keeps the counter where
     * it was: a counter never goes back. */
    if (d->has_energy && g->api->energy(d->handle, &mj) == 0 && mj >= d->energy_mj)
      d->energy_mj = mj;
  }
}

typedef enum { F_UTIL, F_MEM_TOTAL, F_MEM_USED, F_POWER, F_LIMIT, F_ENERGY } field_t;

static void family(const srv_metrics_gpu_t *g, srv_metrics_buf_t *b, const char *name,
                   const char *type, const char *help, field_t f) {
  srv_metrics_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
  for (unsigned i = 0; i < g->count; i++) {
    const srv_metrics_gpu_dev_t *d = &g->devs[i];
    srv_metrics_buf_printf(b, "%s{gpu_uuid=\"%s\"} ", name, d->uuid);
    switch (f) {
      case F_UTIL:
        srv_metrics_buf_printf(b, "%.15g\n", d->utilization);
        break;
      case F_MEM_TOTAL:
        srv_metrics_buf_printf(b, "%llu\n", (unsigned long long)d->mem_total);
        break;
      case F_MEM_USED:
        srv_metrics_buf_printf(b, "%llu\n", (unsigned long long)d->mem_used);
        break;
      case F_POWER:
        srv_metrics_buf_printf(b, "%.15g\n", d->power_w);
        break;
      case F_LIMIT:
        srv_metrics_buf_printf(b, "%.15g\n", d->limit_w);
        break;
      case F_ENERGY:
        srv_metrics_buf_printf(b, "%.15g\n",
                               (double)(d->energy_mj - d->energy_start_mj) / 1000.0);
        break;
    }
  }
}

/* tritonserver's names, types and HELP texts. */
void srv_metrics_gpu_render(const srv_metrics_gpu_t *g, srv_metrics_buf_t *b) {
  if (g->count == 0) return;
  family(g, b, "nv_gpu_utilization", "gauge", "GPU utilization rate [0.0 - 1.0)", F_UTIL);
  family(g, b, "nv_gpu_memory_total_bytes", "gauge", "GPU total memory, in bytes",
         F_MEM_TOTAL);
  family(g, b, "nv_gpu_memory_used_bytes", "gauge", "GPU used memory, in bytes",
         F_MEM_USED);
  family(g, b, "nv_gpu_power_usage", "gauge", "GPU power usage in watts", F_POWER);
  family(g, b, "nv_gpu_power_limit", "gauge", "GPU power management limit in watts",
         F_LIMIT);
  family(g, b, "nv_energy_consumption", "counter",
         "GPU energy consumption in joules since the Triton Server started", F_ENERGY);
}

void srv_metrics_gpu_free(srv_metrics_gpu_t *g) {
  if (g->dl != NULL) {
    g->api->shutdown();
    dlclose(g->dl);
  }
  free(g->devs);
  memset(g, 0, sizeof *g);
}
