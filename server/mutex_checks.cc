// Debian builds abseil without NDEBUG, so every absl::Mutex that gRPC takes
// (several per call) also maintains abseil's lock-order graph to detect
// deadlocks: about 1,700 instructions per ModelInfer (GraphCycles::GetId,
// the held-locks list through pthread_getspecific; docs/perf.md, issue 21).
// That is a debugging aid for abseil's users, not a server's job. Only the
// executable does this: a program that embeds libtritonserver.so keeps its
// own process-wide settings.
#include "server/mutex_checks.h"

#include "absl/synchronization/mutex.h"

void srv_mutex_checks_off(void) {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
}
