# SPDX-License-Identifier: GPL-2.0-or-later
# analyzers/ - the pure core, built as one static library.

noinst_LIBRARIES += analyzers/libimbcore.a
analyzers_libimbcore_a_SOURCES = \
	analyzers/event.h analyzers/event.c \
	analyzers/window.h analyzers/window.c

# --- PELT engine (kernel-exact integer PELT) ---
analyzers_libimbcore_a_SOURCES += analyzers/pelt.h analyzers/pelt.c \
	analyzers/pelt_expect.h analyzers/pelt_expect.c
# --- end PELT engine ---

# --- model, pipeline and the analyzer table ---
analyzers_libimbcore_a_SOURCES += \
	analyzers/model.h analyzers/model_internal.h analyzers/model_tables.c \
	analyzers/model_groups.c analyzers/model_lineage.c analyzers/model_eevdf.c analyzers/model_drift.c analyzers/model_events.c analyzers/model_kernel.c \
	analyzers/analyzer.h analyzers/analyzers_table.h analyzers/analyzers_table.c \
	analyzers/pipeline.h analyzers/pipeline.c
# --- end model and pipeline ---

# --- analyzers: overload, fairness, vruntime, migration, numa, lost ---
analyzers_libimbcore_a_SOURCES += \
	analyzers/finding_util.h \
	analyzers/overload.c analyzers/wake_ring.h analyzers/fairness.h analyzers/fairness.c analyzers/vruntime.c \
	analyzers/migration.c analyzers/numa.c analyzers/lost.c
# --- end analyzers ---

# --- text event format ---
analyzers_libimbcore_a_SOURCES += analyzers/event_text.h analyzers/event_text.c
# --- end text event format ---
