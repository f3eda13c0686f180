// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * priority.c - the event reader's scheduling priority (see priority.h).
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "daemon/live/priority.h"
#include "daemon/util.h"

/* Written once by the reader before it starts any thread or child. */
static volatile sig_atomic_t base_nice;
static volatile sig_atomic_t raised;

int priority_raise(int nice, char *err)
{
	int before;

	errno = 0;
	before = getpriority(PRIO_PROCESS, 0);	/* this thread (Linux) */
	if (before == -1 && errno) {
		err_set(err, "getpriority: %s", strerror(errno));
		return -errno;
	}
	if (before == nice)
		return 0;
	if (setpriority(PRIO_PROCESS, 0, nice)) {
		int e = errno;

		err_set(err, "cannot set nice %d (now %d): %s%s", nice, before, strerror(e),
			e == EPERM || e == EACCES ? " (raising the priority needs CAP_SYS_NICE)" : "");
		return -e;
	}
	if (!raised) {
		base_nice = before;
		raised = 1;
	}
	return 0;
}

void priority_restore_self(void)
{
	if (raised)
		setpriority(PRIO_PROCESS, 0, base_nice);
}
