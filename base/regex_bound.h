/*
 * regex_bound.h - the one way the server compiles a user's regular
 * expression (POSIX extended, regcomp): refused before regcomp when it
 * would be costly to compile or to match.
 *
 * Why: glibc's regcomp compiles a counted repetition X{m,n} as n copies
 * of X (X+ as two), so counts multiply through nesting: the 26 bytes
 * ((.{1,100}){1,100}){1,100} became a million copies, 1.1 GB and 5 to 18 s
 * of one request, and (.{1,32767}) about 8 GB (each optional copy's
 * epsilon closure holds the copies after it: memory grows with the square
 * of a run of optional copies). Pattern length alone is no cost: the web
 * UI sends a run selection as one alternation of up to 16 KiB of names,
 * which compiles in milliseconds.
 *
 * Refused (TFB_EINVAL, with the reason):
 *   - more than TFB_REGEX_MAX_COPIES pattern elements added by counted
 *     repetition (X{m,n} adds n - 1 copies of X's elements, X{m,} adds m,
 *     X+ adds one; nested counts multiply). 1000 keeps a pattern's
 *     compilation under about 10 MB and 0.1 s on glibc (.{1,1001}, the
 *     worst shape: each optional copy's closure holds those after it),
 *     and every realistic run filter (run_[0-9]{1,3}, (a|b){2}) far
 *     below it;
 *   - groups nested more than TFB_REGEX_MAX_DEPTH deep: glibc's parser
 *     recurses once per level on the calling thread's stack (an HTTP pool
 *     thread's; 16,000 levels overflowed an 8 MB stack), and no filter
 *     needs more than a few;
 *   - back-references (\1 to \9): not POSIX ERE, and glibc's matcher
 *     takes exponential time on some of them.
 * The bounds are documented in server/API.md ("Regular expressions").
 *
 * Pure; thread-safe. Internal to the server: not exported.
 */
#ifndef TFB_BASE_REGEX_BOUND_H
#define TFB_BASE_REGEX_BOUND_H

#include <regex.h>
#include <stddef.h>

#define TFB_REGEX_MAX_COPIES 1000
#define TFB_REGEX_MAX_DEPTH 64

/* 0 when pattern is within the bounds above; else TFB_EINVAL with a
 * one-line reason in err (err may be NULL). Does not compile it. */
int tfb_regex_check(const char *pattern, char *err, size_t err_len);

/* tfb_regex_check, then regcomp(re, pattern, cflags). 0 (free re with
 * regfree), or TFB_EINVAL with the reason (the bound, or regerror's
 * message) in err (may be NULL); re is then not to be freed. */
int tfb_regex_compile(regex_t *re, const char *pattern, int cflags,
                      char *err, size_t err_len);

#endif
