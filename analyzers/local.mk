# SPDX-License-Identifier: GPL-2.0-or-later
# analyzers/ - the pure core, built as one static library.

noinst_LIBRARIES += analyzers/libimbcore.a
analyzers_libimbcore_a_SOURCES = \
	analyzers/event.h analyzers/event.c \
	analyzers/window.h analyzers/window.c
