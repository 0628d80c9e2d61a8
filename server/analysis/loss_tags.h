/*
 * loss_tags.h - which scalar tags are losses (--loss_tags: a POSIX
 * extended regex, case-insensitive, unanchored; default "loss"). Those
 * series are watched as they load (analysis/loss_watch.h): configuring
 * the tags installs the store's scalar observer (store/store.h) that
 * keeps a loss watch on each. The run status applies its blow-up rule to
 * them and the alerts plugin lists their spikes.
 *
 * A tag's answer is kept by tag name (a sweep's runs share their tags),
 * so a run with N scalar tags costs N table look-ups, not N regexec
 * calls.
 *
 * Thread-safety: tfb_loss_tag is thread-safe (one lock around the
 * table). tfb_loss_tags_configure is called before any store is created
 * (a series is observed or not from its creation); until it is, no
 * series is watched.
 */
#ifndef TFB_SERVER_LOSS_TAGS_H
#define TFB_SERVER_LOSS_TAGS_H

#include <stddef.h>

#define TFB_LOSS_REGEX_DEFAULT "loss"

/* Sets the regex (copied): NULL for the default, "" for none (no tag is
 * a loss: no spike or blow-up detection), forgets the kept answers and
 * installs the loss watch as the store's scalar observer.
 * Returns 0 or TFB_EINVAL (a regex that does not compile; the setting is
 * unchanged). */
int tfb_loss_tags_configure(const char *regex);

/* 1 when tag (len bytes, no NUL needed) is a loss, else 0. */
int tfb_loss_tag(const char *tag, size_t len);

/* Frees the kept answers (tests and shutdown). */
void tfb_loss_tags_forget(void);

#endif
