/* The model folders of the repository roots, their version folders, and a
 * fingerprint of a folder's tree that poll mode compares between scans.
 * Everything here blocks on the file system: loader threads, or the main
 * thread at start-up. Nothing is shared, so calls may run concurrently. */
#ifndef NEREID_SERVER_REPOSITORY_REPO_SCAN_H
#define NEREID_SERVER_REPOSITORY_REPO_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** Deepest folder level below a model folder that the fingerprint visits
 *  (the model folder is level 0); deeper entries are not seen. */
#define SRV_REPO_FINGERPRINT_DEPTH 16
/** Most entries the fingerprint reads in one model folder's tree; past that
 *  it stops reading, so a huge tree costs bounded time and memory (changes
 *  past the cap are not seen; logged at verbose level 1). */
#define SRV_REPO_FINGERPRINT_ENTRIES 100000

/** One model folder. */
typedef struct {
  char *name;           /**< the folder's name, = the model's name */
  char *ns;             /**< its root, from srv_repo_scan_ns; else NULL */
  char *dir;            /**< <root>/<name>, in the first root holding it */
  uint64_t fingerprint; /**< srv_repo_fingerprint(dir), or 0 when not asked */
  bool duplicate;       /**< the name is in more than one root */
} srv_repo_model_t;

/** The model folders of all roots, sorted by name, names unique. Owned by
 *  whoever filled it; free with srv_repo_listing_free. */
typedef struct {
  srv_repo_model_t *models;
  size_t count;
} srv_repo_listing_t;

/** Lists every model folder (a subdirectory, or a link to one, whose name
 *  does not start with '.') of every root into *out, sorted by name. A name
 *  found in several roots appears once with duplicate = true and dir = the
 *  first root's. An unreadable root is logged and skipped. With
 *  with_fingerprints, each model's fingerprint is computed. Blocks. */
void srv_repo_scan(char *const *roots, size_t root_count, bool with_fingerprints,
                   srv_repo_listing_t *out);

/** srv_repo_scan for model namespaces: each root's folders, with ns = the
 *  root, sorted by name then ns; a name in several roots is listed once
 *  per root and is no duplicate. Blocks. */
void srv_repo_scan_ns(char *const *roots, size_t root_count, bool with_fingerprints,
                      srv_repo_listing_t *out);

/** Orders namespaces: NULL (none) first, then by bytes. */
int srv_repo_ns_cmp(const char *a, const char *b);

/** The entry of `ns` (NULL: none) and `name`, or NULL (binary search). */
const srv_repo_model_t *srv_repo_listing_find_ns(const srv_repo_listing_t *l,
                                                 const char *ns, const char *name);

/** "<dir>/<name>", malloc'ed (the caller frees it). Any thread. */
char *srv_repo_path_join(const char *dir, const char *name);

/** Frees what a listing holds and zeroes it. */
void srv_repo_listing_free(srv_repo_listing_t *l);

/** The model named `name`, or NULL (binary search). */
const srv_repo_model_t *srv_repo_listing_find(const srv_repo_listing_t *l,
                                              const char *name);

/** A 64-bit digest of a model folder's tree that changes when any file or
 *  folder below it is added, removed, renamed, resized or modified. It
 *  covers dir's own type, size, mtime and ctime (ns), then every entry
 *  below it depth-first in name order: its depth and name (which together
 *  give its path relative to dir), type, size, mtime and ctime (ns).
 *  Symbolic links are hashed as links (with their target string), never
 *  followed, except that dir itself may be a link. Entries are visited
 *  SRV_REPO_FINGERPRINT_DEPTH levels deep and at most
 *  SRV_REPO_FINGERPRINT_ENTRIES of them are read. 0 when dir cannot be read
 *  (never 0 otherwise). This is what poll mode compares between scans, as
 *  Triton's poll compares modification times. Blocks. */
uint64_t srv_repo_fingerprint(const char *dir);

/** The version folders of a model folder: subdirectories (or links to
 *  them) whose names are decimal integers >= 0 written without sign or
 *  leading zero ("0", "7", "12"; not "07", "+7", "-1"), ascending, into out;
 *  returns the count. Past `cap` versions, the highest `cap` are kept (the
 *  default policy serves the latest). Blocks. */
size_t srv_repo_versions(const char *dir, int64_t *out, size_t cap);

#endif
