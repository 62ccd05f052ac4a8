/* Model folders of the repository roots, version folders, and the tree
 * fingerprint that poll mode compares (see repo_scan.h). Blocking file
 * system reads; loader threads or the main thread. No shared state. */
#include "server/repository/repo_scan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/common/log.h"
#include "server/common/memory.h"

/* ---- listing ------------------------------------------------------------- */

typedef struct {
  char *name;
  size_t root; /* index of the root it was found in */
} found_t;

static int found_cmp(const void *a, const void *b) {
  const found_t *x = a, *y = b;
  int c = strcmp(x->name, y->name);
  if (c != 0) return c;
  return (x->root > y->root) - (x->root < y->root);
}

char *srv_repo_path_join(const char *dir, const char *name) {
  size_t n = strlen(dir) + strlen(name) + 2;
  char *p = malloc(n);
  if (p == NULL) SRV_FATAL("out of memory");
  snprintf(p, n, "%s/%s", dir, name);
  return p;
}

/* Appends root's model folders (followed links to folders count, as the
 * start-up scan always did) to *found. */
static void root_list(const char *root, size_t index, found_t **found, size_t *count,
                      size_t *cap) {
  DIR *d = opendir(root);
  if (d == NULL) {
    SRV_ERROR("cannot read model repository '%s': %s", root, strerror(errno));
    return;
  }
  struct dirent *ent;
  while ((ent = readdir(d)) != NULL) {
    if (ent->d_name[0] == '.') continue;
    struct stat sb;
    if (fstatat(dirfd(d), ent->d_name, &sb, 0) != 0 || !S_ISDIR(sb.st_mode)) continue;
    if (*count == *cap) {
      *cap = *cap ? 2 * *cap : 16;
      *found = realloc(*found, *cap * sizeof **found);
      if (*found == NULL) SRV_FATAL("out of memory");
    }
    (*found)[(*count)++] = (found_t){srv_strdup(ent->d_name), index};
  }
  closedir(d);
}

void srv_repo_scan(char *const *roots, size_t root_count, bool with_fingerprints,
                   srv_repo_listing_t *out) {
  *out = (srv_repo_listing_t){0};
  found_t *found = NULL;
  size_t count = 0, cap = 0;
  for (size_t i = 0; i < root_count; i++) root_list(roots[i], i, &found, &count, &cap);
  /* By name, then by root: the first of equal names is the first root's. */
  if (count > 1) qsort(found, count, sizeof *found, found_cmp);
  out->models = calloc(count + 1, sizeof *out->models);
  if (out->models == NULL) SRV_FATAL("out of memory");
  for (size_t i = 0; i < count; i++) {
    srv_repo_model_t *last = out->count > 0 ? &out->models[out->count - 1] : NULL;
    if (last != NULL && strcmp(last->name, found[i].name) == 0) {
      last->duplicate = true;
      free(found[i].name);
      continue;
    }
    srv_repo_model_t *m = &out->models[out->count++];
    m->name = found[i].name;
    m->dir = srv_repo_path_join(roots[found[i].root], m->name);
  }
  free(found);
  if (with_fingerprints)
    for (size_t i = 0; i < out->count; i++)
      out->models[i].fingerprint = srv_repo_fingerprint(out->models[i].dir);
}

int srv_repo_ns_cmp(const char *a, const char *b) {
  if (a == NULL || b == NULL) return (a != NULL) - (b != NULL);
  return strcmp(a, b);
}

static int model_ns_cmp(const void *a, const void *b) {
  const srv_repo_model_t *x = a, *y = b;
  int c = strcmp(x->name, y->name);
  return c != 0 ? c : srv_repo_ns_cmp(x->ns, y->ns);
}

void srv_repo_scan_ns(char *const *roots, size_t root_count, bool with_fingerprints,
                      srv_repo_listing_t *out) {
  *out = (srv_repo_listing_t){0};
  out->models = calloc(1, sizeof *out->models);
  if (out->models == NULL) SRV_FATAL("out of memory");
  for (size_t i = 0; i < root_count; i++) {
    srv_repo_listing_t one;
    srv_repo_scan(&roots[i], 1, with_fingerprints, &one);
    srv_repo_model_t *grown =
        realloc(out->models, (out->count + one.count + 1) * sizeof *grown);
    if (grown == NULL) SRV_FATAL("out of memory");
    out->models = grown;
    for (size_t j = 0; j < one.count; j++) {
      one.models[j].ns = srv_strdup(roots[i]);
      out->models[out->count++] = one.models[j];
    }
    free(one.models); /* the entries moved */
  }
  if (out->count > 1) qsort(out->models, out->count, sizeof *out->models, model_ns_cmp);
}

const srv_repo_model_t *srv_repo_listing_find_ns(const srv_repo_listing_t *l,
                                                 const char *ns, const char *name) {
  srv_repo_model_t key = {.name = (char *)name, .ns = (char *)ns};
  if (l->count == 0) return NULL;
  return bsearch(&key, l->models, l->count, sizeof *l->models, model_ns_cmp);
}

void srv_repo_listing_free(srv_repo_listing_t *l) {
  for (size_t i = 0; i < l->count; i++) {
    free(l->models[i].name);
    free(l->models[i].ns);
    free(l->models[i].dir);
  }
  free(l->models);
  *l = (srv_repo_listing_t){0};
}

static int model_key_cmp(const void *key, const void *elem) {
  return strcmp(key, ((const srv_repo_model_t *)elem)->name);
}

const srv_repo_model_t *srv_repo_listing_find(const srv_repo_listing_t *l,
                                              const char *name) {
  if (l->count == 0) return NULL;
  return bsearch(name, l->models, l->count, sizeof *l->models, model_key_cmp);
}

/* ---- fingerprint --------------------------------------------------------- */

/* FNV-1a over a byte stream that encodes the tree, then a final mix so that
 * nearby streams give far-apart digests. */
typedef struct {
  uint64_t h;
  size_t entries; /* read so far, toward SRV_REPO_FINGERPRINT_ENTRIES */
  bool truncated;
} fp_t;

static void fp_bytes(fp_t *f, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) f->h = (f->h ^ b[i]) * 1099511628211ull;
}

static void fp_u64(fp_t *f, uint64_t v) { fp_bytes(f, &v, sizeof v); }

/* Type, size, mtime and ctime (ns): what changes when a file is written,
 * truncated, replaced, renamed into place, or its folder changes. */
static void fp_stat(fp_t *f, const struct stat *sb) {
  fp_u64(f, (uint64_t)(sb->st_mode & S_IFMT));
  fp_u64(f, (uint64_t)sb->st_size);
  fp_u64(f, (uint64_t)sb->st_mtim.tv_sec);
  fp_u64(f, (uint64_t)sb->st_mtim.tv_nsec);
  fp_u64(f, (uint64_t)sb->st_ctim.tv_sec);
  fp_u64(f, (uint64_t)sb->st_ctim.tv_nsec);
}

static int name_cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in folder `fd` except "." and "..", sorted, within the
 * entry budget; *n is set. */
static char **dir_names(fp_t *f, DIR *d, size_t *n) {
  char **names = NULL;
  size_t cap = 0;
  *n = 0;
  struct dirent *ent;
  while ((ent = readdir(d)) != NULL) {
    if (strcmp(ent->d_name, ".") == 0 || strcmp(ent->d_name, "..") == 0) continue;
    if (f->entries >= SRV_REPO_FINGERPRINT_ENTRIES) {
      f->truncated = true;
      break;
    }
    f->entries++; /* counted when read, so names held stay within the budget */
    if (*n == cap) {
      cap = cap ? 2 * cap : 16;
      names = realloc(names, cap * sizeof *names);
      if (names == NULL) SRV_FATAL("out of memory");
    }
    names[(*n)++] = srv_strdup(ent->d_name);
  }
  if (*n > 1) qsort(names, *n, sizeof *names, name_cmp);
  return names;
}

/* Hashes the entries of folder `fd` (closed here) at `depth`, depth-first
 * in name order. Each record carries its depth, so the sequence of records
 * determines every entry's path. */
static void fp_walk(fp_t *f, int fd, uint32_t depth) {
  DIR *d = fdopendir(fd);
  if (d == NULL) {
    close(fd);
    fp_u64(f, UINT64_MAX); /* unreadable folder: differs from an empty one */
    return;
  }
  size_t n;
  char **names = dir_names(f, d, &n);
  for (size_t i = 0; i < n; i++) {
    const char *name = names[i];
    fp_u64(f, depth);
    fp_bytes(f, name, strlen(name) + 1);
    struct stat sb;
    if (fstatat(dirfd(d), name, &sb, AT_SYMLINK_NOFOLLOW) != 0) {
      fp_u64(f, (uint64_t)errno); /* vanished meanwhile */
      continue;
    }
    fp_stat(f, &sb);
    if (S_ISLNK(sb.st_mode)) {
      char target[4096];
      ssize_t len = readlinkat(dirfd(d), name, target, sizeof target);
      if (len > 0) fp_bytes(f, target, (size_t)len);
    } else if (S_ISDIR(sb.st_mode) && depth < SRV_REPO_FINGERPRINT_DEPTH &&
               !f->truncated) {
      int sub = openat(dirfd(d), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub >= 0)
        fp_walk(f, sub, depth + 1);
      else
        fp_u64(f, UINT64_MAX);
    }
  }
  for (size_t i = 0; i < n; i++) free(names[i]);
  free(names);
  closedir(d);
}

uint64_t srv_repo_fingerprint(const char *dir) {
  /* The model folder itself may be a link (followed, as the scan does). */
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return 0;
  struct stat sb;
  if (fstat(fd, &sb) != 0) {
    close(fd);
    return 0;
  }
  fp_t f = {.h = 1469598103934665603ull};
  fp_stat(&f, &sb);
  fp_walk(&f, fd, 1);
  if (f.truncated)
    SRV_VERBOSE(1,
                "model folder '%s': more than %d entries; changes past them are not "
                "seen by polling",
                dir, SRV_REPO_FINGERPRINT_ENTRIES);
  /* splitmix64's finalizer */
  uint64_t h = f.h;
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
  h ^= h >> 31;
  return h != 0 ? h : 1; /* 0 means unreadable */
}

/* ---- versions ------------------------------------------------------------ */

static int version_cmp(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* A version number >= 0 written as the loader writes it back ("%lld"):
 * digits only, no sign, space or leading zero ("01" is not version 1, whose
 * folder the loader would look for as "1"), no overflow. */
static bool version_parse(const char *s, int64_t *out) {
  if (s[0] < '0' || s[0] > '9' || (s[0] == '0' && s[1] != '\0')) return false;
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (*end != '\0' || errno != 0) return false;
  *out = v;
  return true;
}

size_t srv_repo_versions(const char *dir, int64_t *out, size_t cap) {
  DIR *d = opendir(dir);
  if (d == NULL) return 0;
  int64_t *all = NULL;
  size_t n = 0, all_cap = 0;
  struct dirent *ent;
  while ((ent = readdir(d)) != NULL) {
    int64_t v;
    struct stat sb;
    if (!version_parse(ent->d_name, &v)) continue;
    if (fstatat(dirfd(d), ent->d_name, &sb, 0) != 0 || !S_ISDIR(sb.st_mode)) continue;
    if (n == all_cap) {
      all_cap = all_cap ? 2 * all_cap : 16;
      all = realloc(all, all_cap * sizeof *all);
      if (all == NULL) SRV_FATAL("out of memory");
    }
    all[n++] = v;
  }
  closedir(d);
  if (n > 1) qsort(all, n, sizeof *all, version_cmp);
  /* Over the cap, keep the highest: the default policy serves the latest. */
  size_t first = n > cap ? n - cap : 0;
  size_t kept = n - first;
  if (kept > 0) memcpy(out, all + first, kept * sizeof *out);
  free(all);
  return kept;
}
