/* LeakSanitizer suppressions, built into ASan builds only (selected by
 * Bazel). libh2o-evloop keeps per-thread recycling pools and the queues of
 * its multithread API for the life of the process, with no call that frees
 * them: they are reported at exit although nothing of ours leaks. Only
 * allocations made inside that library are suppressed. */
const char *__lsan_default_suppressions(void);

const char *__lsan_default_suppressions(void) { return "leak:libh2o-evloop.so\n"; }
