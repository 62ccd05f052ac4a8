/* Repository agents without a server: the chain built from a config (its
 * limits, a missing library in Triton's words, the order of actions, a
 * failing LOAD, a moved model) with the test agent of test/repoagents, and
 * the API's own answers to bad arguments. Folders live under $TEST_TMPDIR. */
#include "server/repository/repo_agent.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/config/model_config.h"
#include "test/unit/unit.h"
#include "triton/core/tritonrepoagent.h"

#define AGENTS "test/repoagents" /* runfiles: checksum/ and relocate/ */

static char tmp[4096];

static void setup(void) {
  const char *base = getenv("TEST_TMPDIR");
  snprintf(tmp, sizeof tmp, "%s/repo_agent_XXXXXX", base != NULL ? base : "/tmp");
  REQUIRE(mkdtemp(tmp) != NULL);
  setenv("TMPDIR", tmp, 1); /* where acquired locations go */
}

/* A path under this test's folder (made on first use), in a buffer the
 * next call reuses. */
static const char *tmp_path(const char *name) {
  static char path[4096 + 64];
  if (tmp[0] == '\0') setup();
  snprintf(path, sizeof path, "%s/%s", tmp, name);
  return path;
}

static inference_ModelConfig *config(upb_Arena *a, const char *agents) {
  char text[8192], err[512];
  snprintf(text, sizeof text, "name: \"m\"\nmodel_repository_agents { agents [ %s ] }\n",
           agents);
  inference_ModelConfig *c =
      cfg_model_config_parse(text, strlen(text), "t", a, err, sizeof err);
  if (c == NULL) fprintf(stderr, "%s\n", err);
  return c;
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "r");
  char *buf = calloc(1, 4096);
  if (f != NULL) {
    size_t n = fread(buf, 1, 4095, f);
    (void)n;
    fclose(f);
  }
  return buf;
}

static void file_write(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  REQUIRE(f != NULL);
  fputs(text, f);
  fclose(f);
}

static void no_agents_no_chain(void) {
  upb_Arena *a = upb_Arena_New();
  char text[] = "name: \"m\"\n", err[256];
  inference_ModelConfig *c =
      cfg_model_config_parse(text, strlen(text), "t", a, err, sizeof err);
  char *dir = strdup("/models/m");
  repo_agents_t *chain = (repo_agents_t *)1;
  CHECK(repo_agents_load(AGENTS, c, &dir, &chain) == NULL);
  CHECK(chain == NULL);
  CHECK_STREQ(dir, "/models/m");
  free(dir);
  upb_Arena_Free(a);
}

static void missing_and_bad_names_in_tritons_words(void) {
  upb_Arena *a = upb_Arena_New();
  const char *names[] = {"nosuch", "../checksum", ""};
  for (size_t i = 0; i < 3; i++) {
    char agents[256], want[512];
    snprintf(agents, sizeof agents, "{ name: \"%s\" }", names[i]);
    char *dir = strdup("/models/m");
    repo_agents_t *chain;
    srv_status_t *st = repo_agents_load(AGENTS, config(a, agents), &dir, &chain);
    REQUIRE(st != NULL);
    snprintf(
        want, sizeof want,
        "unable to find 'libtritonrepoagent_%s.so' for repo agent '%s', searched: %s",
        names[i], names[i], AGENTS);
    CHECK_STREQ(srv_status_message(st), want);
    CHECK(srv_status_code(st) == GRPC_STATUS_INVALID_ARGUMENT);
    CHECK(chain == NULL);
    srv_status_free(st);
    free(dir);
  }
  upb_Arena_Free(a);
}

static void too_many_agents(void) {
  upb_Arena *a = upb_Arena_New();
  char agents[8192] = "";
  for (int i = 0; i < 65; i++)
    strcat(agents, i ? ", { name: \"checksum\" }" : "{ name: \"checksum\" }");
  char *dir = strdup("/models/m");
  repo_agents_t *chain;
  srv_status_t *st = repo_agents_load(AGENTS, config(a, agents), &dir, &chain);
  REQUIRE(st != NULL);
  CHECK_STREQ(srv_status_message(st), "model_repository_agents: 65 agents, at most 64");
  srv_status_free(st);
  free(dir);
  upb_Arena_Free(a);
}

static void actions_in_order(void) {
  upb_Arena *a = upb_Arena_New();
  char model[4200];
  snprintf(model, sizeof model, "%s", tmp_path("plain"));
  REQUIRE(mkdir(model, 0700) == 0);
  char rec[4200], agents[8192], path[4200];
  snprintf(rec, sizeof rec, "%s", tmp_path("plain.log"));
  snprintf(path, sizeof path, "%s/data", model);
  file_write(path, "ok");
  snprintf(agents, sizeof agents,
           "{ name: \"relocate\" parameters { key: \"record\" value: \"%s\" } },"
           "{ name: \"checksum\" parameters [ { key: \"record\" value: \"%s\" },"
           "  { key: \"expect:data\" value: \"ok\" } ] }",
           rec, rec);
  char *dir = strdup(model);
  repo_agents_t *chain;
  srv_status_t *st = repo_agents_load(AGENTS, config(a, agents), &dir, &chain);
  CHECK(st == NULL);
  REQUIRE(chain != NULL);
  CHECK_STREQ(dir, model); /* nobody moved it */
  repo_agents_loaded(chain, true);
  repo_agents_free(chain);
  char want[8192];
  snprintf(want, sizeof want,
           "relocate LOAD %s\nchecksum LOAD %s\nchecksum LOAD_COMPLETE %s\n"
           "relocate LOAD_COMPLETE %s\nrelocate UNLOAD %s\nchecksum UNLOAD %s\n"
           "checksum UNLOAD_COMPLETE %s\nrelocate UNLOAD_COMPLETE %s\n",
           model, model, model, model, model, model, model, model);
  char *got = slurp(rec);
  CHECK_STREQ(got, want);
  free(got);
  free(dir);
  upb_Arena_Free(a);
}

static void failing_load_and_moved_model(void) {
  upb_Arena *a = upb_Arena_New();
  char model[4200];
  snprintf(model, sizeof model, "%s", tmp_path("moved"));
  REQUIRE(mkdir(model, 0700) == 0);
  char rec[4200], agents[8192];
  snprintf(rec, sizeof rec, "%s", tmp_path("moved.log"));
  /* relocate moves it; checksum then reads the copy, and refuses it. */
  snprintf(agents, sizeof agents,
           "{ name: \"relocate\" parameters [ { key: \"record\" value: \"%s\" },"
           "  { key: \"relocate\" value: \"x\" } ] },"
           "{ name: \"checksum\" parameters [ { key: \"record\" value: \"%s\" },"
           "  { key: \"expect:relocated\" value: \"y\" } ] }",
           rec, rec);
  /* The agent after the move reads the copy's config.pbtxt (the test
   * agent wants one that names agents). */
  char cfg[4300], text[8400];
  snprintf(cfg, sizeof cfg, "%s/config.pbtxt", model);
  snprintf(text, sizeof text, "name: \"m\"\nmodel_repository_agents { agents [ %s ] }\n",
           agents);
  file_write(cfg, text);
  char *dir = strdup(model);
  repo_agents_t *chain;
  srv_status_t *st = repo_agents_load(AGENTS, config(a, agents), &dir, &chain);
  REQUIRE(st != NULL);
  CHECK_STREQ(srv_status_message(st), "checksum mismatch for 'relocated'");
  srv_status_free(st);
  CHECK(chain == NULL);
  char *got = slurp(rec);
  CHECK(strncmp(got, "relocate LOAD ", 14) == 0);
  char *second = strchr(got, '\n') + 1;
  CHECK(strstr(second, "checksum LOAD ") == second);
  CHECK(strstr(second, "nereid-model-") != NULL); /* the copy */
  CHECK(strstr(got, "checksum LOAD_FAIL") != NULL &&
        strstr(got, "relocate LOAD_FAIL") != NULL);
  CHECK(strstr(got, "UNLOAD") == NULL);
  /* The copy went with the chain. */
  char copy[4200] = "";
  CHECK(sscanf(second, "checksum LOAD %4199s", copy) == 1);
  struct stat sb;
  CHECK(copy[0] != '\0' && stat(copy, &sb) != 0);
  free(got);
  free(dir);
  upb_Arena_Free(a);
}

static void api_arguments(void) {
  uint32_t major = 9, minor = 9;
  CHECK(TRITONREPOAGENT_ApiVersion(&major, &minor) == NULL);
  CHECK_EQ_U64(major, TRITONREPOAGENT_API_VERSION_MAJOR);
  CHECK_EQ_U64(minor, TRITONREPOAGENT_API_VERSION_MINOR);
  TRITONSERVER_Error *e = TRITONREPOAGENT_ApiVersion(NULL, &minor);
  REQUIRE(e != NULL);
  CHECK(TRITONSERVER_ErrorCode(e) == TRITONSERVER_ERROR_INVALID_ARG);
  TRITONSERVER_ErrorDelete(e);
  const char *loc;
  TRITONREPOAGENT_ArtifactType t;
  e = TRITONREPOAGENT_ModelRepositoryLocation(NULL, NULL, &t, &loc);
  REQUIRE(e != NULL);
  TRITONSERVER_ErrorDelete(e);
  void *state;
  e = TRITONREPOAGENT_State(NULL, &state);
  REQUIRE(e != NULL);
  TRITONSERVER_ErrorDelete(e);
}

UNIT_MAIN("repo_agent", UNIT_CASE(no_agents_no_chain),
          UNIT_CASE(missing_and_bad_names_in_tritons_words), UNIT_CASE(too_many_agents),
          UNIT_CASE(actions_in_order), UNIT_CASE(failing_load_and_moved_model),
          UNIT_CASE(api_arguments))
