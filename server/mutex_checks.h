/* Process-wide settings of the nereid executable for the libraries under
 * gRPC (see mutex_checks.cc). */
#ifndef NEREID_SERVER_MUTEX_CHECKS_H
#define NEREID_SERVER_MUTEX_CHECKS_H

#ifdef __cplusplus
extern "C" {
#endif

/** Turns off abseil's mutex deadlock detection for the process. Called
 *  first thing in main, before any abseil mutex is taken. */
void srv_mutex_checks_off(void);

#ifdef __cplusplus
}
#endif

#endif
