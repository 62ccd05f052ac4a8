/* The table of command-line flags (options_flags.c): each flag's name,
 * kind, where its value goes in srv_options_t, its range and its help.
 * Private to options.c. */
#ifndef NEREID_SERVER_OPTIONS_FLAGS_H
#define NEREID_SERVER_OPTIONS_FLAGS_H

#include <stddef.h>

#include "server/options.h"

typedef enum {
  FLAG_STRING,
  FLAG_STRING_LIST, /* offset: the char ** list; its count follows it */
  FLAG_INT,
  FLAG_BOOL,
  FLAG_U64,    /* uint64_t in [min, UINT64_MAX] */
  FLAG_DOUBLE, /* double in [min, max] */
} flag_kind_t;

typedef struct {
  const char *name;
  flag_kind_t kind;
  size_t offset; /* of the value in srv_options_t */
  long min, max; /* FLAG_INT range */
  const char *help;
} flag_t;

/* Where a field's value goes. */
#define OPT(field) offsetof(srv_options_t, field)

extern const flag_t srv_option_flags[];
extern const size_t srv_option_flag_count;

#endif
