/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * Minimal TAP 13 producer for host tests: call tap_plan(n) first, then
 * tap_ok() once per test; tap_done() returns the exit status (non-zero if
 * any test failed or the count does not match the plan).
 */

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

static unsigned int tap_planned, tap_run, tap_failed;

static inline void tap_plan(unsigned int n)
{
        tap_planned = n;
        printf("TAP version 13\n1..%u\n", n);
}

static inline void tap_diag(const char *fmt, ...)
{
        va_list ap;

        printf("# ");
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        printf("\n");
}

static inline bool tap_ok(bool cond, const char *fmt, ...)
{
        va_list ap;

        ++tap_run;
        if (!cond)
                ++tap_failed;
        printf("%sok %u - ", cond ? "" : "not ", tap_run);
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        printf("\n");
        fflush(stdout);
        return cond;
}

static inline int tap_done(void)
{
        if (tap_run != tap_planned) {
                tap_diag("planned %u tests but ran %u", tap_planned, tap_run);
                return 1;
        }
        return tap_failed ? 1 : 0;
}
