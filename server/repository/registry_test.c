/* The registry's lookups on names as clients send them: empty (a NULL
 * pointer from an empty upb view), holding a NUL, longer than any entry,
 * huge. Views here hold names only, no models. One thread. */
#include "server/repository/registry.h"

#include <stdlib.h>
#include <string.h>

#include "test/unit/unit.h"

static const char *const NAMES[] = {"simple", "simple_int8", "a", "identity", "b", "c"};
enum { NAME_COUNT = sizeof NAMES / sizeof NAMES[0] };

static srv_registry_t *registry_with_names(void) {
  srv_registry_entry_t entries[NAME_COUNT];
  memset(entries, 0, sizeof entries);
  for (size_t i = 0; i < NAME_COUNT; i++) {
    entries[i].name = (char *)NAMES[i];
    entries[i].state = SRV_MODEL_STATE_UNAVAILABLE;
  }
  srv_registry_t *r = srv_registry_new();
  srv_registry_publish(r, entries, NAME_COUNT);
  return r;
}

static void find_takes_any_bytes(void) {
  srv_registry_t *r = registry_with_names();
  const srv_registry_view_t *v = srv_registry_view_begin(r);
  for (size_t i = 0; i < NAME_COUNT; i++) {
    const srv_registry_entry_t *e = srv_registry_view_find(v, NAMES[i], strlen(NAMES[i]));
    REQUIRE(e != NULL);
    CHECK_STREQ(e->name, NAMES[i]);
  }
  CHECK(srv_registry_view_find(v, NULL, 0) == NULL);
  CHECK(srv_registry_view_find(v, "", 0) == NULL);
  /* A prefix, and a name that matches an entry up to a NUL it holds: the
   * entry is shorter than the bytes given, and is not read past its end. */
  CHECK(srv_registry_view_find(v, "simple", 3) == NULL);
  static const char with_nul[] = "simple\0_int8";
  CHECK(srv_registry_view_find(v, with_nul, sizeof with_nul - 1) == NULL);
  for (size_t i = 0; i < NAME_COUNT; i++) {
    char buf[64];
    size_t n = strlen(NAMES[i]);
    memcpy(buf, NAMES[i], n);
    memcpy(buf + n, "\0tail", 5);
    CHECK(srv_registry_view_find(v, buf, n + 5) == NULL);
  }
  srv_registry_view_end(r);
  srv_registry_free(r);
}

static void acquire_refuses_an_empty_name(void) {
  srv_registry_t *r = registry_with_names();
  for (int i = 0; i < 2; i++) {
    srv_model_t *m = (srv_model_t *)&m; /* must come back NULL */
    srv_status_t *st = srv_registry_acquire(r, i == 0 ? NULL : "", 0, -1, &m);
    CHECK(m == NULL);
    CHECK_EQ_U64(srv_status_code(st), GRPC_STATUS_INVALID_ARGUMENT);
    CHECK_STREQ(srv_status_message(st), "model name must not be empty");
    srv_status_free(st);
  }
  srv_model_t *m;
  srv_status_t *st = srv_registry_acquire(r, "simple", 6, -1, &m);
  CHECK(m == NULL); /* listed, but no version is ready */
  CHECK_EQ_U64(srv_status_code(st), GRPC_STATUS_UNAVAILABLE);
  srv_status_free(st);
  srv_registry_free(r);
}

/* Triton's texts for what is missing: the model, its latest version, a
 * version that failed to load, a version it never had. */
static void missing_versions_in_tritons_words(void) {
  srv_version_failure_t failed = {.version = 3, .reason = "broken"};
  srv_registry_entry_t e = {.name = "m",
                            .state = SRV_MODEL_STATE_UNAVAILABLE,
                            .reason = "broken",
                            .failures = &failed,
                            .failure_count = 1};
  srv_registry_t *r = srv_registry_new();
  srv_registry_publish(r, &e, 1);
  static const struct {
    const char *name;
    int64_t version;
    const char *text;
  } cases[] = {
      {"x", -1, "Request for unknown model: 'x' is not found"},
      {"m", -1, "Request for unknown model: 'm' has no available versions: broken"},
      {"m", 3, "Request for unknown model: 'm' version 3 is not at ready state"},
      {"m", 5, "Request for unknown model: 'm' version 5 is not found"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    srv_model_t *m;
    srv_status_t *st =
        srv_registry_acquire(r, cases[i].name, strlen(cases[i].name), cases[i].version, &m);
    CHECK(m == NULL);
    REQUIRE(st != NULL);
    CHECK_EQ_U64(srv_status_code(st), GRPC_STATUS_UNAVAILABLE);
    CHECK_STREQ(srv_status_message(st), cases[i].text);
    srv_status_free(st);
  }
  srv_registry_free(r);
}

/* With namespaces: one name in two roots. A lookup by name alone is
 * ambiguous (Triton's text) while both count; an unloaded one does not
 * count; each is found by (namespace, name). */
static void shared_names_need_a_namespace(void) {
  srv_registry_entry_t e[] = {
      {.name = "m", .ns = "/b", .state = SRV_MODEL_STATE_UNAVAILABLE, .reason = "in b"},
      {.name = "z", .ns = "/a", .state = SRV_MODEL_STATE_UNAVAILABLE, .reason = "z"},
      {.name = "m", .ns = "/a", .state = SRV_MODEL_STATE_UNAVAILABLE, .reason = "in a"},
  };
  srv_registry_t *r = srv_registry_new();
  srv_registry_publish(r, e, 3);
  const srv_registry_view_t *v = srv_registry_view_begin(r);
  CHECK_STREQ(srv_registry_view_at(v, 0)->ns, "/a"); /* name, then namespace */
  CHECK_STREQ(srv_registry_view_at(v, 1)->ns, "/b");
  CHECK_STREQ(srv_registry_view_find_ns(v, "/b", "m")->reason, "in b");
  CHECK_STREQ(srv_registry_view_find_ns(v, "/a", "m")->reason, "in a");
  CHECK(srv_registry_view_find_ns(v, "/b", "z") == NULL);
  CHECK(srv_registry_view_find_ns(v, NULL, "m") == NULL);
  srv_registry_view_end(r);
  srv_model_t *m;
  srv_status_t *st = srv_registry_acquire(r, "m", 1, -1, &m);
  CHECK(m == NULL && st != NULL && srv_status_code(st) == GRPC_STATUS_INVALID_ARGUMENT);
  CHECK_STREQ(st ? srv_status_message(st) : "",
              "There are 2 identifiers of model 'm' in global map, model namespace must "
              "be provided to resolve ambiguity.");
  srv_status_free(st);
  bool ready = true; /* ModelReady: not ready, no error; a bad version is one */
  CHECK(srv_registry_ready(r, "m", 1, "", 0, &ready) == NULL && !ready);
  st = srv_registry_ready(r, "m", 1, "x", 1, &ready);
  CHECK(st != NULL && strstr(srv_status_message(st), "stol") != NULL);
  srv_status_free(st);
  st = srv_registry_acquire(r, "z", 1, -1, &m); /* alone in its name */
  CHECK(st != NULL && strstr(srv_status_message(st), "'z' has no available versions"));
  srv_status_free(st);
  st = srv_registry_acquire_ns(r, "/b", "m", -1, &m);
  CHECK(st != NULL && strstr(srv_status_message(st), "versions: in b") != NULL);
  srv_status_free(st);
  /* Unloaded in /a: the name means /b's model alone. */
  e[2].reason = SRV_MODEL_REASON_UNLOADED;
  srv_registry_publish(r, e, 3);
  st = srv_registry_acquire(r, "m", 1, -1, &m);
  CHECK(st != NULL && strstr(srv_status_message(st), "versions: in b") != NULL);
  srv_status_free(st);
  srv_registry_free(r);
}

/* The entry a lookup of `name` ends at, by the reason its text ends with. */
static void expect_reason(srv_registry_t *r, const char *name, const char *reason) {
  srv_model_t *m;
  srv_status_t *st = srv_registry_acquire(r, name, strlen(name), -1, &m);
  REQUIRE(st != NULL);
  const char *text = srv_status_message(st);
  size_t n = strlen(text), k = strlen(reason);
  CHECK_STREQ(n >= k ? text + n - k : text, reason); /* the text ends with it */
  srv_status_free(st);
}

/* A thread's lookups go through a memo of its last one: it must follow
 * every publish (entries move, views shrink, a new view may take a
 * reclaimed one's address) and other registries. */
static void lookups_follow_publishes(void) {
  srv_registry_entry_t e[] = {
      {.name = "a", .state = SRV_MODEL_STATE_UNAVAILABLE, .reason = "a1"},
      {.name = "b", .state = SRV_MODEL_STATE_UNAVAILABLE, .reason = "b1"},
      {.name = "c", .state = SRV_MODEL_STATE_UNAVAILABLE, .reason = "c1"},
  };
  srv_registry_t *r = srv_registry_new(), *other = srv_registry_new();
  srv_registry_publish(r, e, 3);
  expect_reason(r, "a", "a1");
  expect_reason(r, "a", "a1");
  expect_reason(r, "c", "c1"); /* the last entry: a smaller view comes next */
  expect_reason(r, "b", "b1");
  expect_reason(r, "c", "c1");
  e[0].reason = "a2";
  srv_registry_publish(r, e, 1); /* "c" gone, the view shorter */
  srv_registry_reclaim(r);
  expect_reason(r, "c", "'c' is not found");
  expect_reason(r, "a", "a2");
  srv_registry_entry_t moved[] = {
      {.name = "0", .state = SRV_MODEL_STATE_UNAVAILABLE, .reason = "zero"},
      {.name = "a", .state = SRV_MODEL_STATE_UNAVAILABLE, .reason = "a3"},
  };
  srv_registry_publish(r, moved, 2); /* "a" one entry further */
  expect_reason(r, "a", "a3");
  expect_reason(r, "0", "zero");
  srv_registry_publish(other, e, 2);
  expect_reason(other, "a", "a2");
  expect_reason(r, "a", "a3");
  expect_reason(other, "b", "b1");
  for (int i = 0; i < 8; i++) { /* views freed and made again */
    e[1].reason = i % 2 ? "b1" : "b2";
    srv_registry_publish(other, e, 2);
    while (!srv_registry_reclaim(other)) {
    }
    expect_reason(other, "b", e[1].reason);
  }
  srv_registry_free(other);
  srv_registry_free(r);
}

UNIT_MAIN("registry", UNIT_CASE(find_takes_any_bytes),
          UNIT_CASE(acquire_refuses_an_empty_name),
          UNIT_CASE(missing_versions_in_tritons_words),
          UNIT_CASE(shared_names_need_a_namespace), UNIT_CASE(lookups_follow_publishes))
