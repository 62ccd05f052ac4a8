/* Command-line parsing: defaults, both "--flag value" and "--flag=value",
 * the sequence and shared-memory flags (perf_analyzer's names and
 * defaults), and errors that name the flag. */
#include <string.h>

#include "test/unit/unit.h"
#include "tools/perf/options.h"
#include "tools/perf/seq.h"

/* Parses a NULL-terminated list of arguments (after the program name). */
static int parse(perf_options_t *o, perf_err_t *err, const char *const *args) {
  char *argv[32] = {(char *)"nereid-perf"};
  int argc = 1;
  while (args[argc - 1] != NULL && argc < 31) {
    argv[argc] = (char *)args[argc - 1];
    argc++;
  }
  err->msg[0] = '\0';
  return perf_options_parse(o, argc, argv, err);
}

#define PARSE(o, err, ...) parse(o, err, (const char *const[]){__VA_ARGS__, NULL})

static void sequence_defaults_are_perf_analyzers(void) {
  perf_options_t o;
  perf_err_t err;
  REQUIRE(PARSE(&o, &err, "-m", "simple_dyna_sequence") == 0);
  CHECK_EQ_U64(o.seq_length, 20);
  CHECK_EQ_U64(o.seq_variation, 20);
  CHECK_EQ_U64(o.seq_id_start, 1);
  CHECK_EQ_U64(o.seq_id_end, 0);
  CHECK_EQ_U64(o.num_sequences, 4);
  CHECK(o.seq_flag == NULL);
  perf_options_free(&o);
}

static void sequence_flags_parse(void) {
  perf_options_t o;
  perf_err_t err;
  REQUIRE(PARSE(&o, &err, "-m", "m", "--sequence-length=7", "--sequence-id-range",
                "100:2100", "--sequence-length-variation", "0", "--num-of-sequences",
                "32", "--serial-sequences") == 0);
  CHECK_EQ_U64(o.seq_length, 7);
  CHECK_EQ_U64(o.seq_variation, 0);
  CHECK_EQ_U64(o.seq_id_start, 100);
  CHECK_EQ_U64(o.seq_id_end, 2100);
  CHECK_EQ_U64(o.num_sequences, 32);
  CHECK_STREQ(o.seq_flag, "--sequence-length"); /* the first one given */
  perf_options_free(&o);
  REQUIRE(PARSE(&o, &err, "-m", "m", "--sequence-id-range", "9223372036854775807") == 0);
  CHECK_EQ_U64(o.seq_id_start, PERF_SEQ_ID_MAX);
  CHECK_EQ_U64(o.seq_id_end, 0);
  CHECK_STREQ(o.seq_flag, "--sequence-id-range");
  perf_options_free(&o);
  REQUIRE(PARSE(&o, &err, "-m", "m", "--serial-sequences") == 0);
  CHECK_STREQ(o.seq_flag, "--serial-sequences");
  perf_options_free(&o);
}

static void bad_sequence_flags_are_named(void) {
  static const struct {
    const char *flag, *value, *msg;
  } cases[] = {
      {"--sequence-length", "0", "--sequence-length: '0' is not a whole number >= 1"},
      {"--sequence-length-variation", "101",
       "--sequence-length-variation: 101 is above 100 (percent)"},
      {"--num-of-sequences", "-3", "--num-of-sequences: '-3' is not a whole number >= 1"},
      {"--sequence-id-range", "0",
       "--sequence-id-range: '0' is not START[:END] (whole numbers from 1 to "
       "9223372036854775807)"},
      {"--sequence-id-range", "5:",
       "--sequence-id-range: '5:' is not START[:END] "
       "(whole numbers from 1 to 9223372036854775807)"},
      {"--sequence-id-range", "1:2:3",
       "--sequence-id-range: '1:2:3' is not START[:END] "
       "(whole numbers from 1 to 9223372036854775807)"},
      {"--sequence-id-range", "9223372036854775808",
       "--sequence-id-range: '9223372036854775808' is not START[:END] (whole numbers "
       "from 1 to 9223372036854775807)"},
      {"--sequence-id-range", "10:10",
       "--sequence-id-range: END 10 is not above START 10 (END is excluded)"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    perf_options_t o;
    perf_err_t err;
    CHECK(PARSE(&o, &err, "-m", "m", cases[i].flag, cases[i].value) == -1);
    CHECK_STREQ(err.msg, cases[i].msg);
    perf_options_free(&o);
  }
  perf_options_t o;
  perf_err_t err;
  CHECK(PARSE(&o, &err, "-m", "m", "--serial-sequences=1") == -1);
  CHECK_STREQ(err.msg, "--serial-sequences takes no value");
  perf_options_free(&o);
}

static void other_flags_keep_working(void) {
  perf_options_t o;
  perf_err_t err;
  REQUIRE(PARSE(&o, &err, "-m", "simple", "--mode=stream", "--concurrency-range", "2:8:3",
                "-p", "500") == 0);
  CHECK(o.mode == PERF_STREAM);
  CHECK_EQ_U64(o.conc_start, 2);
  CHECK_EQ_U64(o.conc_end, 8);
  CHECK_EQ_U64(o.conc_step, 3);
  CHECK_EQ_U64(o.interval_ms, 500);
  perf_options_free(&o);
  CHECK(PARSE(&o, &err, "--sequence-length", "4") == -1);
  CHECK_STREQ(err.msg, "-m MODEL is required (see --help)");
  perf_options_free(&o);
}

static void shared_memory_flags(void) {
  perf_options_t o;
  perf_err_t err;
  REQUIRE(PARSE(&o, &err, "-m", "m") == 0);
  CHECK(o.shared_memory == PERF_SHM_NONE); /* perf_analyzer's defaults */
  CHECK_EQ_U64(o.output_shm_size, 102400);
  perf_options_free(&o);
  REQUIRE(PARSE(&o, &err, "-m", "m", "--shared-memory", "system",
                "--output-shared-memory-size=4194304") == 0);
  CHECK(o.shared_memory == PERF_SHM_SYSTEM);
  CHECK_STREQ(perf_shm_mode_name(o.shared_memory), "system");
  CHECK_EQ_U64(o.output_shm_size, 4194304);
  perf_options_free(&o);
  REQUIRE(PARSE(&o, &err, "-m", "m", "--shared-memory=system", "--shared-memory",
                "none") == 0);
  CHECK(o.shared_memory == PERF_SHM_NONE);
  perf_options_free(&o);
  static const struct {
    const char *flag, *value, *msg;
  } cases[] = {
      {"--shared-memory", "cuda",
       "--shared-memory cuda: nereid-perf has no CUDA client support (use none or "
       "system, or Triton's perf_analyzer for CUDA regions)"},
      {"--shared-memory", "posix",
       "--shared-memory: 'posix' is not none, system or cuda"},
      {"--output-shared-memory-size", "0",
       "--output-shared-memory-size: '0' is not a byte count from 1 to 2^40"},
      {"--output-shared-memory-size", "-5",
       "--output-shared-memory-size: '-5' is not a byte count from 1 to 2^40"},
      {"--output-shared-memory-size", "1k",
       "--output-shared-memory-size: '1k' is not a byte count from 1 to 2^40"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    CHECK(PARSE(&o, &err, "-m", "m", cases[i].flag, cases[i].value) == -1);
    CHECK_STREQ(err.msg, cases[i].msg);
    perf_options_free(&o);
  }
}

UNIT_MAIN("options", UNIT_CASE(sequence_defaults_are_perf_analyzers),
          UNIT_CASE(sequence_flags_parse), UNIT_CASE(bad_sequence_flags_are_named),
          UNIT_CASE(other_flags_keep_working), UNIT_CASE(shared_memory_flags))
