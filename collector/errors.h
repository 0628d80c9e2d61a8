/* errors.h - mapping of errno values to TFB_E* codes (internal). */
#ifndef TFB_ERRORS_H
#define TFB_ERRORS_H

/* Maps an errno value to the closest TFB_E* code (TFB_EIO when none fits).
 * Thread-safe. */
int tfb_err_from_errno(int e);

#endif
