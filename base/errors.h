/* errors.h - mapping of errno values to TFB_E* codes (internal; the
 * public half of the error table, tfb_strerror, is in tfboard.h). */
#ifndef TFB_BASE_ERRORS_H
#define TFB_BASE_ERRORS_H

/* Maps an errno value to the closest TFB_E* code (TFB_EIO when none fits).
 * Thread-safe. */
int tfb_err_from_errno(int e);

#endif
