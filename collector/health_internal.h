/*
 * health_internal.h - test hooks of the health module (gradient norms and
 * numerics). Not installed; the static library exposes them to tests.
 */
#ifndef TFB_HEALTH_INTERNAL_H
#define TFB_HEALTH_INTERNAL_H

/* Which code tfb_count_nonfinite* run, so tests can check that every path
 * gives the same answers on this machine: AUTO (the default) picks the
 * best one at run time (AVX2 when the CPU has it, else SSE2 on x86-64,
 * else portable C); SCALAR forces the portable C; SSE2 forces the SSE2
 * code (x86-64 only; elsewhere it means SCALAR). Atomic; tests call it
 * between measurements. */
enum { TFB_NUMERICS_AUTO = 0, TFB_NUMERICS_SCALAR = 1, TFB_NUMERICS_SSE2 = 2 };
void tfb_numerics_force_path(int path);

#endif
