# SPDX-License-Identifier: GPL-2.0-or-later
# doc/ rules.

# --- fleet monitoring examples (owner: store/http) ---
dist_doc_DATA += doc/grafana-dashboard.json doc/prometheus-alerts.yml

# --- the text event format (integrator) ---
dist_doc_DATA += doc/event-format.md
# --- end text event format ---
# --- end fleet monitoring examples ---

# --- man pages (integrator) ---
dist_man_MANS += doc/imbalanced.8 doc/imbalanced.conf.5
# --- end man pages ---
