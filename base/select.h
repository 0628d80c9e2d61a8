/*
 * select.h - order statistics of a double array in O(n) expected time:
 * the one selection of tfboard (run status's median interval, the spike
 * detector's medians, the precursors' baselines, the Ranks percentiles).
 *
 * Hoare-style quickselect with a median-of-three pivot. The arrays are
 * small to medium (64 changes, 256 intervals, a rank's steps) and mostly
 * unsorted, where a selection beats a sort by the log factor.
 *
 * Both calls reorder v. NaN must not be in v (comparisons with NaN would
 * leave the partition undefined; callers keep finite values only).
 *
 * Ownership: base; nothing is kept. Thread-safety: any thread.
 * Internal to libtfboard and the server: not exported.
 */
#ifndef TFB_BASE_SELECT_H
#define TFB_BASE_SELECT_H

#include <stddef.h>

/* Puts the k-th smallest (0-based, k < n) at v[k], none larger before it
 * and none smaller after it; returns it. */
double tfb_select_kth(double *v, size_t n, size_t k);

/* The median of v[0..n) (n >= 1): the middle value, or the mean of the two
 * middle ones when n is even. */
double tfb_median(double *v, size_t n);

#endif
