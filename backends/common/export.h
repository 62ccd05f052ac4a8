/* How a backend exports its TRITONBACKEND_* entry points. Backends build with
 * -fvisibility=hidden, and tritonbackend.h leaves TRITONBACKEND_ISPEC empty
 * on ELF (as Triton does), so each entry-point definition carries
 * BK_EXPORT. exports.lds then keeps everything else local, including the
 * C++ runtime's weak symbols. Compile-time only; no threads involved. */
#ifndef NEREID_BACKENDS_COMMON_EXPORT_H
#define NEREID_BACKENDS_COMMON_EXPORT_H

#define BK_EXPORT __attribute__((visibility("default")))

#endif
