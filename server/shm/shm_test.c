/* The region table (shm.h): register, status, acquire and unregister with
 * Triton's texts; an unregistered region stays mapped for the references
 * taken before; threads acquiring while another registers and unregisters
 * (TSan, ASan's leak check); and the SIGBUS guard: an object cut under a
 * mapping is absorbed, counted, and refused afterwards. */
#include "server/shm/shm.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "test/unit/unit.h"

/* A fresh POSIX shm object of `size` bytes: its key in key[64]. */
static int object_new(char key[64], size_t size) {
  static atomic_int n;
  snprintf(key, 64, "/nereid-shm-test-%d-%d", (int)getpid(), atomic_fetch_add(&n, 1));
  int fd = shm_open(key, O_RDWR | O_CREAT | O_EXCL, 0600);
  if (fd < 0 || ftruncate(fd, (off_t)size) != 0) abort();
  return fd;
}

static bool fails_with(srv_status_t *st, grpc_status_code code, const char *needle) {
  if (st == NULL) {
    fprintf(stderr, "  expected '%s', got OK\n", needle);
    return false;
  }
  bool ok = srv_status_code(st) == code && strstr(srv_status_message(st), needle) != NULL;
  if (!ok) fprintf(stderr, "  expected '%s', got '%s'\n", needle, srv_status_message(st));
  srv_status_free(st);
  return ok;
}

static void count_region(void *ctx, const srv_shm_info_t *info) {
  (void)info;
  (*(int *)ctx)++;
}

static int region_count(srv_shm_t *shm) {
  int n = 0;
  srv_status_t *st = srv_shm_status(shm, SRV_SHM_SYSTEM, "", 0, count_region, &n);
  if (st != NULL) srv_status_free(st);
  return n;
}

static void test_register_acquire_unregister(void) {
  srv_shm_t *shm = srv_shm_new(true);
  char key[64];
  int fd = object_new(key, 8192);
  char *mine = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  REQUIRE(mine != MAP_FAILED);
  memcpy(mine + 5000, "hello", 5);
  /* An offset that is not page-aligned. */
  REQUIRE(srv_shm_register_system(shm, "r", 1, key, strlen(key), 4990, 100) == NULL);
  CHECK(fails_with(srv_shm_register_system(shm, "r", 1, key, strlen(key), 0, 8),
                   GRPC_STATUS_ALREADY_EXISTS, "shared memory region 'r' already in manager"));
  srv_shm_ref_t ref;
  REQUIRE(srv_shm_acquire(shm, "r", 1, 10, 5, &ref) == NULL);
  CHECK(memcmp(ref.addr, "hello", 5) == 0);
  CHECK_EQ_U64(ref.memory_type, TRITONSERVER_MEMORY_CPU);
  CHECK(fails_with(srv_shm_acquire(shm, "r", 1, 100, 1, &(srv_shm_ref_t){0}),
                   GRPC_STATUS_INVALID_ARGUMENT,
                   "Invalid offset for shared memory region: 'r'"));
  CHECK(fails_with(srv_shm_acquire(shm, "r", 1, 50, 51, &(srv_shm_ref_t){0}),
                   GRPC_STATUS_INVALID_ARGUMENT,
                   "Invalid offset + byte size for shared memory region: 'r'"));
  CHECK(fails_with(srv_shm_acquire(shm, "r", 1, 50, UINT64_MAX, &(srv_shm_ref_t){0}),
                   GRPC_STATUS_INVALID_ARGUMENT, "Integer overflow detected"));
  CHECK(fails_with(srv_shm_acquire(shm, "q", 1, 0, 1, &(srv_shm_ref_t){0}),
                   GRPC_STATUS_NOT_FOUND, "Unable to find shared memory region: 'q'"));
  /* Unregistered with a reference out: gone from the table at once, still
   * mapped for the holder. */
  CHECK(srv_shm_unregister(shm, SRV_SHM_SYSTEM, "r", 1) == NULL);
  CHECK_EQ_U64(region_count(shm), 0);
  memcpy(mine + 5000, "world", 5);
  CHECK(memcmp(ref.addr, "world", 5) == 0);
  CHECK(!srv_shm_faulted(&ref));
  srv_shm_release(&ref);
  /* The name is free again. */
  CHECK(srv_shm_register_system(shm, "r", 1, key, strlen(key), 0, 8192) == NULL);
  CHECK(srv_shm_unregister(shm, SRV_SHM_SYSTEM, "", 0) == NULL);
  munmap(mine, 8192);
  close(fd);
  shm_unlink(key);
  srv_shm_free(shm);
}

static void test_status_and_kinds(void) {
  srv_shm_t *shm = srv_shm_new(true);
  char key[64];
  int fd = object_new(key, 4096);
  REQUIRE(srv_shm_register_system(shm, "b", 1, key, strlen(key), 0, 10) == NULL);
  REQUIRE(srv_shm_register_system(shm, "a", 1, key, strlen(key), 10, 20) == NULL);
  CHECK_EQ_U64(region_count(shm), 2);
  CHECK(fails_with(srv_shm_status(shm, SRV_SHM_SYSTEM, "c", 1, count_region, &(int){0}),
                   GRPC_STATUS_NOT_FOUND, "Unable to find system shared memory region: 'c'"));
  CHECK(fails_with(srv_shm_status(shm, SRV_SHM_CUDA, "a", 1, count_region, &(int){0}),
                   GRPC_STATUS_NOT_FOUND,
                   "The region named 'a' is registered as system shared memory, not CUDA "
                   "shared memory"));
  /* Unregistering CUDA regions leaves system ones. */
  CHECK(srv_shm_unregister(shm, SRV_SHM_CUDA, "", 0) == NULL);
  CHECK_EQ_U64(region_count(shm), 2);
  close(fd);
  shm_unlink(key);
  srv_shm_free(shm); /* unmaps what is left */
}

static void test_register_refusals(void) {
  srv_shm_t *shm = srv_shm_new(true);
  char key[64];
  int fd = object_new(key, 100);
  CHECK(fails_with(srv_shm_register_system(shm, "r", 1, key, strlen(key), 50, 51),
                   GRPC_STATUS_INVALID_ARGUMENT,
                   "failed to register shared memory region 'r': invalid args"));
  CHECK(fails_with(srv_shm_register_system(shm, "r", 1, "/nereid-none", 12, 0, 1),
                   GRPC_STATUS_INTERNAL, "Unable to open shared memory region: '/nereid-none'"));
  const char *bad[] = {"/../x", "/a/b", "/", "..", "/."};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    CHECK(fails_with(srv_shm_register_system(shm, "r", 1, bad[i], strlen(bad[i]), 0, 1),
                     GRPC_STATUS_INVALID_ARGUMENT, "is not the name of a POSIX"));
  CHECK(fails_with(srv_shm_register_system(shm, "r", 1, "x\0y", 3, 0, 1),
                   GRPC_STATUS_INVALID_ARGUMENT, "is not the name of a POSIX"));
  CHECK(fails_with(srv_shm_register_system(shm, "r\0", 2, key, strlen(key), 0, 1),
                   GRPC_STATUS_INVALID_ARGUMENT, "NUL"));
  CHECK(fails_with(srv_shm_register_cuda(shm, "c", 1, "0123456789", 10, 0, 8),
                   GRPC_STATUS_INVALID_ARGUMENT, "'raw_handle' must be a valid base64"));
  CHECK_EQ_U64(region_count(shm), 0);
  close(fd);
  shm_unlink(key);
  srv_shm_free(shm);
  /* Turned off: everything answers UNAVAILABLE. */
  shm = srv_shm_new(false);
  CHECK(fails_with(srv_shm_register_system(shm, "r", 1, key, strlen(key), 0, 1),
                   GRPC_STATUS_UNAVAILABLE, "--allow-client-shm=true"));
  CHECK(fails_with(srv_shm_acquire(shm, "r", 1, 0, 1, &(srv_shm_ref_t){0}),
                   GRPC_STATUS_UNAVAILABLE, "Client shared memory is disabled"));
  srv_shm_free(shm);
}

/* ---- concurrency: readers acquire while a writer flips the table ---- */

enum { READERS = 3, FLIPS = 2000 };

typedef struct {
  srv_shm_t *shm;
  char key[64];
  atomic_bool stop;
  atomic_long found;
} torture_t;

static void *reader(void *arg) {
  torture_t *t = arg;
  while (!atomic_load(&t->stop)) {
    srv_shm_ref_t ref;
    srv_status_t *st = srv_shm_acquire(t->shm, "flip", 4, 0, 64, &ref);
    if (st != NULL) {
      CHECK_EQ_U64(srv_status_code(st), GRPC_STATUS_NOT_FOUND);
      srv_status_free(st);
      continue;
    }
    CHECK_EQ_U64(((volatile unsigned char *)ref.addr)[63], 7);
    atomic_fetch_add(&t->found, 1);
    srv_shm_release(&ref);
  }
  return NULL;
}

static void test_acquire_while_flipping(void) {
  static torture_t t;
  t.shm = srv_shm_new(true);
  int fd = object_new(t.key, 4096);
  unsigned char seven = 7;
  REQUIRE(pwrite(fd, &seven, 1, 63) == 1);
  pthread_t th[READERS];
  for (int i = 0; i < READERS; i++) pthread_create(&th[i], NULL, reader, &t);
  for (int i = 0; i < FLIPS; i++) {
    CHECK(srv_shm_register_system(t.shm, "flip", 4, t.key, strlen(t.key), 0, 4096) == NULL);
    CHECK(srv_shm_unregister(t.shm, SRV_SHM_SYSTEM, "flip", 4) == NULL);
  }
  atomic_store(&t.stop, true);
  for (int i = 0; i < READERS; i++) pthread_join(th[i], NULL);
  fprintf(stderr, "  %ld acquires found the region in %d flips\n", atomic_load(&t.found),
          FLIPS);
  close(fd);
  shm_unlink(t.key);
  srv_shm_free(t.shm);
}

/* ---- the guard ---- */

static void test_shrunk_object(void) {
  srv_shm_t *shm = srv_shm_new(true);
  char key[64];
  int fd = object_new(key, 3 * 4096);
  REQUIRE(srv_shm_register_system(shm, "cut", 3, key, strlen(key), 0, 3 * 4096) == NULL);
  srv_shm_ref_t ref;
  REQUIRE(srv_shm_acquire(shm, "cut", 3, 0, 3 * 4096, &ref) == NULL);
  REQUIRE(ftruncate(fd, 4096) == 0);
  /* Past the new end: without the guard, SIGBUS. */
  volatile char *p = ref.addr;
  p[2 * 4096 + 1] = 'x';
  CHECK(p[2 * 4096 + 1] == 'x' || p[2 * 4096 + 1] == 0);
  CHECK(p[4096 + 5] == 0);
  CHECK(srv_shm_faulted(&ref));
  srv_shm_release(&ref);
  CHECK(fails_with(srv_shm_acquire(shm, "cut", 3, 0, 1, &(srv_shm_ref_t){0}),
                   GRPC_STATUS_INVALID_ARGUMENT, "is no longer usable"));
  close(fd);
  shm_unlink(key);
  srv_shm_free(shm);
}

UNIT_MAIN("shm", UNIT_CASE(test_register_acquire_unregister), UNIT_CASE(test_status_and_kinds),
          UNIT_CASE(test_register_refusals), UNIT_CASE(test_acquire_while_flipping),
          UNIT_CASE(test_shrunk_object))
