// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * event.c - names of event kinds and small helpers on struct imb_event.
 */
#include <string.h>

#include "event.h"

static const char *const kind_names[IMB_EV__COUNT] = {
	[IMB_EV_NONE] = "none",
	[IMB_EV_SWITCH] = "switch",
	[IMB_EV_WAKEUP] = "wakeup",
	[IMB_EV_WAKEUP_NEW] = "wakeup_new",
	[IMB_EV_WAKING] = "waking",
	[IMB_EV_MIGRATE] = "migrate",
	[IMB_EV_FORK] = "fork",
	[IMB_EV_EXIT] = "exit",
	[IMB_EV_RUNTIME] = "runtime",
	[IMB_EV_PELT_CFS] = "pelt_cfs",
	[IMB_EV_PELT_SE] = "pelt_se",
	[IMB_EV_NUMA_MOVE] = "numa_move",
	[IMB_EV_NUMA_SWAP] = "numa_swap",
	[IMB_EV_NUMA_STICK] = "numa_stick",
	[IMB_EV_VRUNTIME] = "vruntime",
	[IMB_EV_LOST] = "lost",
};

const char *imb_ev_kind_name(unsigned int kind)
{
	if (kind >= IMB_EV__COUNT)
		return "?";
	return kind_names[kind];
}

unsigned int imb_ev_kind_parse(const char *name, size_t len)
{
	for (unsigned int k = 1; k < IMB_EV__COUNT; k++) {
		if (strlen(kind_names[k]) == len && !memcmp(kind_names[k], name, len))
			return k;
	}
	return IMB_EV_NONE;
}

void imb_comm_copy(char dst[IMB_COMM_LEN], const char *src, size_t len)
{
	size_t n = 0;

	if (len > IMB_COMM_LEN - 1)
		len = IMB_COMM_LEN - 1;
	while (n < len && src[n])
		n++;
	memcpy(dst, src, n);
	memset(dst + n, 0, IMB_COMM_LEN - n);
}
