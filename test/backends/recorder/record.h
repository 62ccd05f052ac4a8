/* The recorder's output: one line per lifecycle event, appended to a file
 * with a single write(2) so lines from concurrent instances never mix. Any
 * thread. */
#ifndef NEREID_TEST_BACKENDS_RECORDER_RECORD_H
#define NEREID_TEST_BACKENDS_RECORDER_RECORD_H

/** The path a record_file value names: absolute values as they are;
 * relative ones under $NEREID_RECORD_DIR, else $TEST_TMPDIR, else the
 * current directory. Malloc'd (caller frees); NULL when value is NULL. */
char *rec_path_resolve(const char *value);

/** The calling thread's Linux thread id, the `tid=` of every line. */
long rec_tid(void);

/** Appends the formatted text plus '\n' to `path` (created if missing). A
 * NULL path records nothing. Failures go to the server log. */
void rec_append(const char *path, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
