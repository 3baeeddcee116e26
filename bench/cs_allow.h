/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Since v5 nobody may register by default (kernel.coarse_stat_thread = 0)
 * and the hooks' static key stays off until the administrator first allows
 * registrations.  The bench programs, run as root in their guests, allow
 * them right before their first registration, so that a state with no
 * registration (keyoff) keeps the key off.  Harmless on v3/v4 kernels (2,
 * their default, or no such file).
 */
#ifndef CS_ALLOW_H
#define CS_ALLOW_H

#include <fcntl.h>
#include <unistd.h>

static inline void cs_allow_registrations(void)
{
	int fd = open("/proc/sys/kernel/coarse_stat_thread", O_RDWR | O_CLOEXEC);
	char c = 0;

	if (fd < 0)
		return;
	if (read(fd, &c, 1) == 1 && c == '0' && lseek(fd, 0, SEEK_SET) == 0 &&
	    write(fd, "2", 1) != 1)
		c = 0;
	close(fd);
}

#endif /* CS_ALLOW_H */
