// SPDX-License-Identifier: MIT
/*
 * The README's example: where did the 25 ms of an operation go?  The
 * snapshots' times are CLOCK_MONOTONIC nanoseconds.  It builds as a 64-bit
 * or a 32-bit program alike (add -m32 or -mx32):
 *
 *   gcc -O2 -Wall -isystem linux/usr/include -I linux/tools/lib/coarse_stat \
 *       -o slowop examples/slowop.c
 */
#include <stdio.h>
#include <unistd.h>
#include "coarse_stat.h"	/* tools/lib/coarse_stat/coarse_stat.h */

int main(void)
{
	struct csf_snap a, b;
	char line[CSF_DIFF_BUFSZ];

	if (csf_thread_snap(&a)) {
		perror("coarse_stat");
		return 1;
	}
	usleep(25000);			/* the operation */
	csf_thread_snap(&b);
	csf_format_diff(line, sizeof(line), &a, &b);
	puts(line);
	return 0;
}
