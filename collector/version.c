/* version.c - the library's version, as tfboard.h's TFB_VERSION_* say. */
#include "tfboard.h"

const char *tfb_version(void)
{
    return TFB_VERSION_STRING;
}

int tfb_version_number(void)
{
    return TFB_VERSION_NUMBER;
}
