/* errors.c - tfb_strerror() and errno mapping, from the one table in
 * tfboard.h (TFB_ERRNO_MAP). Both programs and objstore/ use it, so it
 * lives at the bottom of the house: objstore/ depends on base/ alone. */
#include "base/errors.h"

#include <errno.h>

#include "tfboard.h"

const char *tfb_strerror(int code)
{
    switch (code) {
    case 0:
        return "success";
#define TFB_ERR_STR_(name, c, msg) \
    case c:                        \
        return msg;
        TFB_ERRNO_MAP(TFB_ERR_STR_)
#undef TFB_ERR_STR_
    default:
        return "unknown error";
    }
}

int tfb_err_from_errno(int e)
{
    switch (e) {
    case ENOSPC:
    case EDQUOT:
    case EFBIG:
        return TFB_ENOSPC;
    case ENOENT:
    case ENOTDIR:
        return TFB_ENOENT;
    case EACCES:
    case EPERM:
    case EROFS:
        return TFB_EACCES;
    case EEXIST:
        return TFB_EEXIST;
    case ENOMEM:
        return TFB_ENOMEM;
    case EINVAL:
        return TFB_EINVAL;
    case EMFILE:
    case ENFILE:
        return TFB_EMFILE;
    default:
        return TFB_EIO;
    }
}
