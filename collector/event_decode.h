/* event_decode.h - decoding of one serialized Event (internal). */
#ifndef TFB_EVENT_DECODE_H
#define TFB_EVENT_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "tfboard.h"

/* Decodes the top level of an Event payload into *ev (views into p).
 * Returns 0, or TFB_ECORRUPT when p is not a well-formed Event. Pure. */
int tfb_event_decode(const uint8_t *p, size_t n, tfb_event *ev);

#endif
