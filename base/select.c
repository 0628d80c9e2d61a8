/*
 * select.c - quickselect and the median (select.h).
 */
#include "base/select.h"

static void swap(double *a, double *b)
{
    double t = *a;
    *a = *b;
    *b = t;
}

double tfb_select_kth(double *v, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (hi > lo) {
        /* median of three: a sorted or reversed window stays O(n) */
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid] < v[lo])
            swap(&v[mid], &v[lo]);
        if (v[hi] < v[lo])
            swap(&v[hi], &v[lo]);
        if (v[hi] < v[mid])
            swap(&v[hi], &v[mid]);
        double pivot = v[mid];
        size_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot)
                i++;
            while (v[j] > pivot)
                j--;
            if (i <= j) {
                swap(&v[i], &v[j]);
                i++;
                if (j == 0)
                    break;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            break; /* v(j..i) all equal the pivot: k is among them */
    }
    return v[k];
}

double tfb_median(double *v, size_t n)
{
    double upper = tfb_select_kth(v, n, n / 2);
    if (n % 2)
        return upper;
    /* the lower middle is the largest of v[0..n/2) after the selection */
    double lower = v[0];
    for (size_t i = 1; i < n / 2; i++)
        if (v[i] > lower)
            lower = v[i];
    return (lower + upper) / 2;
}
