/* nereid: the executable is this line; the server lives in
 * libtritonserver.so, which backends link against as they do with Triton. */
int nereid_main(int argc, char **argv);

int main(int argc, char **argv) { return nereid_main(argc, argv); }
