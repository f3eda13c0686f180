# SPDX-License-Identifier: GPL-2.0-or-later
# doc/ rules.

# --- fleet monitoring examples (owner: store/http) ---
dist_doc_DATA += doc/grafana-dashboard.json doc/prometheus-alerts.yml
# --- end fleet monitoring examples ---
