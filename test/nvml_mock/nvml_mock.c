/* A stand-in for NVML (libnvidia-ml.so.1) with two mock GPUs of fixed
 * values, so that the server's GPU metrics (server/metrics/gpu_stats.c) run
 * in tests on machines without a driver. Tests put it first on
 * LD_LIBRARY_PATH as libnvidia-ml.so.1. $NEREID_MOCK_NVML_GPUS (0..2,
 * default 2) sets how many devices it lists. The energy counter grows by
 * 2 J per reading, so that a test sees it move. Only the functions the
 * server resolves exist. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

enum { OK = 0, ERR_INVALID_ARGUMENT = 2, ERR_INSUFFICIENT_SIZE = 7 };

typedef struct {
  unsigned gpu, memory;
} utilization_t;
typedef struct {
  unsigned long long total, free, used;
} memory_t;

typedef struct {
  const char *uuid;
  unsigned util;
  unsigned long long total, used;
  unsigned power_mw, limit_mw;
  _Atomic unsigned long long energy_mj;
} device_t;

static device_t devices[2] = {
    {"GPU-00000000-1111-2222-3333-444444444444", 42, 85899345920ull, 1073741824ull,
     123456, 700000, 5000000},
    {"GPU-55555555-6666-7777-8888-999999999999", 7, 17179869184ull, 2147483648ull, 50000,
     300000, 9000000},
};

static unsigned listed(void) {
  const char *s = getenv("NEREID_MOCK_NVML_GPUS");
  if (s == NULL) return 2;
  unsigned n = (unsigned)atoi(s);
  return n > 2 ? 2 : n;
}

static device_t *dev(void *h) {
  device_t *d = h;
  return d == &devices[0] || d == &devices[1] ? d : NULL;
}

EXPORT int nvmlInit_v2(void) { return OK; }
EXPORT int nvmlShutdown(void) { return OK; }

EXPORT int nvmlDeviceGetCount_v2(unsigned *n) {
  if (n == NULL) return ERR_INVALID_ARGUMENT;
  *n = listed();
  return OK;
}

EXPORT int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **h) {
  if (h == NULL || i >= listed()) return ERR_INVALID_ARGUMENT;
  *h = &devices[i];
  return OK;
}

EXPORT int nvmlDeviceGetUUID(void *h, char *out, unsigned len) {
  device_t *d = dev(h);
  if (d == NULL || out == NULL) return ERR_INVALID_ARGUMENT;
  if (strlen(d->uuid) + 1 > len) return ERR_INSUFFICIENT_SIZE;
  strcpy(out, d->uuid);
  return OK;
}

EXPORT int nvmlDeviceGetUtilizationRates(void *h, utilization_t *u) {
  device_t *d = dev(h);
  if (d == NULL || u == NULL) return ERR_INVALID_ARGUMENT;
  u->gpu = d->util;
  u->memory = d->util / 2;
  return OK;
}

EXPORT int nvmlDeviceGetMemoryInfo(void *h, memory_t *m) {
  device_t *d = dev(h);
  if (d == NULL || m == NULL) return ERR_INVALID_ARGUMENT;
  m->total = d->total;
  m->used = d->used;
  m->free = d->total - d->used;
  return OK;
}

EXPORT int nvmlDeviceGetPowerUsage(void *h, unsigned *mw) {
  device_t *d = dev(h);
  if (d == NULL || mw == NULL) return ERR_INVALID_ARGUMENT;
  *mw = d->power_mw;
  return OK;
}

EXPORT int nvmlDeviceGetPowerManagementLimit(void *h, unsigned *mw) {
  device_t *d = dev(h);
  if (d == NULL || mw == NULL) return ERR_INVALID_ARGUMENT;
  *mw = d->limit_mw;
  return OK;
}

EXPORT int nvmlDeviceGetTotalEnergyConsumption(void *h, unsigned long long *mj) {
  device_t *d = dev(h);
  if (d == NULL || mj == NULL) return ERR_INVALID_ARGUMENT;
  *mj = atomic_fetch_add(&d->energy_mj, 2000) + 2000;
  return OK;
}
