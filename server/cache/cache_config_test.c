/* The cache flags: Triton's forms, conflicts and texts, and what Nereid
 * refuses in its own words. */
#include <string.h>

#include "server/cache/cache_config.h"
#include "test/unit/unit.h"

static void expect(char **configs, size_t n, uint64_t byte_size, uint64_t want_size,
                   grpc_status_code code, const char *needle) {
  srv_cache_choice_t ch;
  srv_status_t *st = srv_cache_config_parse(configs, n, byte_size, &ch);
  if (needle == NULL) {
    CHECK(st == NULL);
    CHECK_EQ_U64(ch.local_size, want_size);
    CHECK(want_size == 0 ? ch.name == NULL : strcmp(ch.name, "local") == 0);
  } else {
    CHECK(st != NULL && srv_status_code(st) == code &&
          strstr(srv_status_message(st), needle) != NULL);
    if (st != NULL && strstr(srv_status_message(st), needle) == NULL)
      fprintf(stderr, "  message '%s' lacks '%s'\n", srv_status_message(st), needle);
  }
  srv_status_free(st);
  srv_cache_choice_free(&ch);
}

static void test_accepted(void) {
  expect(NULL, 0, 0, 0, 0, NULL);       /* no cache */
  expect(NULL, 0, 4096, 4096, 0, NULL); /* the deprecated flag */
  char *one[] = {"local,size=1048576"};
  expect(one, 1, 0, 1048576, 0, NULL);
  char *two[] = {"local,size=1", "local,size=2048"}; /* the last size wins */
  expect(two, 2, 0, 2048, 0, NULL);
}

/* Another name is a library: its settings as Triton's JSON of strings. */
static void test_library(void) {
  char *redis[] = {"redis,host=localhost", "redis,port=6379", "redis,host=db\"1\\",
                   "redis,url=a=b"};
  srv_cache_choice_t ch;
  srv_status_t *st = srv_cache_config_parse(redis, 4, 0, &ch);
  REQUIRE(st == NULL);
  CHECK_STREQ(ch.name, "redis");
  CHECK_STREQ(ch.config_json,
              "{\"port\":\"6379\",\"host\":\"db\\\"1\\\\\",\"url\":\"a=b\"}");
  srv_cache_choice_free(&ch);
  char *path[] = {"../x,size=1"};
  expect(path, 1, 0, 0, GRPC_STATUS_INVALID_ARGUMENT, "may not hold '/'");
}

static void test_refused(void) {
  const grpc_status_code BAD = GRPC_STATUS_INVALID_ARGUMENT;
  char *one[] = {"local,size=1048576"};
  expect(one, 1, 12345, 0, BAD,
         "Incompatible flags --response-cache-byte-size and --cache-config both "
         "provided. Please provide one or the other.");
  char *noname[] = {"size=1"};
  expect(noname, 1, 0, 0, BAD,
         "No cache specified. --cache-config option format is <cache "
         "name>,<setting>=<value>. Got size=1");
  char *lead[] = {",size=1"};
  expect(lead, 1, 0, 0, BAD, "No cache specified.");
  char *noeq[] = {"local,size"};
  expect(noeq, 1, 0, 0, BAD,
         "--cache-config option format is '<cache name>,<setting>=<value>'. Got "
         "local,size");
  char *empty[] = {"local,size="};
  expect(empty, 1, 0, 0, BAD, "option format is");
  char *mixed[] = {"local,size=8192", "redis,key=value"};
  expect(mixed, 2, 0, 0, BAD,
         "found multiple cache configurations, but only a single cache is currently "
         "supported");
  char *key[] = {"local,capacity=10"};
  expect(key, 1, 0, 0, BAD, "the local cache has no setting 'capacity'");
  char *zero[] = {"local,size=0"};
  expect(zero, 1, 0, 0, BAD, "size must be a byte count from 1");
  char *neg[] = {"local,size=-5"};
  expect(neg, 1, 0, 0, BAD, "got '-5'");
  char *big[] = {"local,size=18446744073709551616"};
  expect(big, 1, 0, 0, BAD, "got '18446744073709551616'");
  char *unit[] = {"local,size=1MB"};
  expect(unit, 1, 0, 0, BAD, "got '1MB'");
}

UNIT_MAIN("cache_config", UNIT_CASE(test_accepted), UNIT_CASE(test_library),
          UNIT_CASE(test_refused))
