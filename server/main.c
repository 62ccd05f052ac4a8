/* nereid: the executable is this line; the server lives in
 * libtritonserver.so, which backends link against as they do with Triton. */
#include "server/mutex_checks.h"

int nereid_main(int argc, char **argv);

int main(int argc, char **argv) {
  srv_mutex_checks_off();
  return nereid_main(argc, argv);
}
