# SPDX-License-Identifier: GPL-2.0-or-later
# bench/ rules.

# --- big-trace recorder (not run by make; writes where it is told) ---
EXTRA_DIST += bench/record-big-trace.sh
# --- end big-trace recorder ---
