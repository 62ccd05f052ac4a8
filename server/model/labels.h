/* An output's classification labels (Triton's `label_filename`): one label
 * per line of a file in the model's folder, read at load. Loading thread. */
#ifndef NEREID_SERVER_MODEL_LABELS_H
#define NEREID_SERVER_MODEL_LABELS_H

#include <stdint.h>

#include "server/common/status.h"
#include "upb/upb.h"

/** The most bytes a labels file may hold. */
#define SRV_LABELS_BYTES_MAX (16u << 20)

/** Reads `<dir>/<file>` into *labels (in arena a, *count of them): the
 *  file must lie inside dir (no absolute path, no ".." component) and hold
 *  at most SRV_LABELS_BYTES_MAX bytes. Errors name model, output and file. */
srv_status_t *srv_labels_read(const char *model, const char *output, const char *dir,
                              upb_StringView file, upb_Arena *a, const char ***labels,
                              uint32_t *count);

#endif
