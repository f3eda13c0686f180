# SPDX-License-Identifier: GPL-2.0-or-later
# doc/ rules.

# --- fleet monitoring examples ---
dist_doc_DATA += doc/grafana-dashboard.json doc/prometheus-alerts.yml
# --- end fleet monitoring examples ---

# --- the text event format, the stable interfaces, the PELT notes ---
dist_doc_DATA += doc/event-format.md doc/interfaces.md doc/pelt.md
# --- end notes ---

# --- man pages ---
dist_man_MANS += doc/imbalanced.8 doc/imbalanced.conf.5
# --- end man pages ---
