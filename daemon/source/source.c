// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * source.c - the calls through struct source_ops that every caller makes
 * the same way, with the meaning of an op a source leaves NULL (source.h).
 */
#include <stdint.h>
#include <string.h>

#include "daemon/source/source.h"

uint64_t source_watermark(const struct source *src)
{
	if (!src->ops || !src->ops->watermark)
		return UINT64_MAX;
	return src->ops->watermark(src->impl);
}

void source_drain(struct source *src, imb_event_fn fn, void *ctx)
{
	if (src->ops && src->ops->drain)
		src->ops->drain(src->impl, fn, ctx);
}

void source_info_get(struct source *src, struct source_info *info)
{
	memset(info, 0, sizeof(*info));
	if (src->ops)
		src->ops->info(src->impl, info);
}

void source_close(struct source *src)
{
	if (src->ops)
		src->ops->close(src->impl);
	memset(src, 0, sizeof(*src));
}
