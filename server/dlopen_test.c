/* libtritonserver.so can be loaded with dlopen (a program that embeds the
 * server as a plugin, Python's ctypes): its initial-exec thread-locals put
 * its whole TLS block in glibc's static TLS surplus, which is small and
 * shared by every such library of the process (server/common/block_pool.md,
 * "Cost"). The block stays within TLS_BOUND, and a dlopen of the library
 * succeeds and serves the API. */
#include <dlfcn.h>
#include <elf.h>
#include <stdbool.h>

#include "test/unit/unit.h"

enum { TLS_BOUND = 1024 };

/* The library's path in the runfiles; false when the test has none. */
static bool lib_path(char *out, size_t cap) {
  const char *dir = getenv("TEST_SRCDIR"), *ws = getenv("TEST_WORKSPACE");
  if (dir == NULL || ws == NULL) return false;
  snprintf(out, cap, "%s/%s/server/libtritonserver.so", dir, ws);
  return true;
}

/* The memory size of the PT_TLS segment of an ELF file (0: none); false
 * when it cannot be read as a 64-bit ELF file. */
static bool tls_size(const char *path, unsigned long *size) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return false;
  Elf64_Ehdr eh;
  bool ok = fread(&eh, sizeof eh, 1, f) == 1 && memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 &&
            eh.e_ident[EI_CLASS] == ELFCLASS64;
  *size = 0;
  for (unsigned i = 0; ok && i < eh.e_phnum; i++) {
    Elf64_Phdr ph;
    ok = fseek(f, (long)(eh.e_phoff + (Elf64_Off)i * eh.e_phentsize), SEEK_SET) == 0 &&
         fread(&ph, sizeof ph, 1, f) == 1;
    if (ok && ph.p_type == PT_TLS) *size = ph.p_memsz;
  }
  fclose(f);
  return ok;
}

static void tls_block_is_small(void) {
  char lib[4096];
  unsigned long size = 0;
  REQUIRE(lib_path(lib, sizeof lib));
  REQUIRE(tls_size(lib, &size));
  printf("libtritonserver.so TLS block: %lu bytes (bound %d)\n", size, TLS_BOUND);
  CHECK(size <= TLS_BOUND);
}

typedef struct TRITONSERVER_Error err_t;
typedef struct TRITONSERVER_ServerOptions opts_t;
typedef err_t *(*options_new_fn)(opts_t **);
typedef err_t *(*options_delete_fn)(opts_t *);

static void dlopen_serves_the_api(void) {
  char lib[4096];
  REQUIRE(lib_path(lib, sizeof lib));
  void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) fprintf(stderr, "  dlopen: %s\n", dlerror());
  REQUIRE(h != NULL);
  options_new_fn options_new = (options_new_fn)dlsym(h, "TRITONSERVER_ServerOptionsNew");
  options_delete_fn options_delete =
      (options_delete_fn)dlsym(h, "TRITONSERVER_ServerOptionsDelete");
  REQUIRE(options_new != NULL && options_delete != NULL);
  opts_t *o = NULL;
  REQUIRE(options_new(&o) == NULL && o != NULL);
  CHECK(options_delete(o) == NULL);
  /* Not closed: the library's pools and threads live with the process. */
}

UNIT_MAIN("dlopen", UNIT_CASE(tls_block_is_small), UNIT_CASE(dlopen_serves_the_api))
