// SPDX-License-Identifier: GPL-2.0-or-later
// app.js - the dashboard logic: loads history from /api/v1/timeseries,
// the latest tasks and findings, then follows /api/v1/stream (live mode)
// and redraws.  Works offline for `serve` (no stream, history only).
'use strict';

(function () {
	const MAX_POINTS = 3600;		// rows kept per chart
	const state = {
		cpus: [],			// CPU numbers seen, sorted
		cpuRows: new Map(),		// t (s) -> {cpu: [runnable, util]}
		capacity: 1024,
		jobs: [],			// job keys seen
		jobRows: new Map(),		// t (s) -> {key: unfairness}
		findings: new Map(),		// id -> finding
		tasks: [],
		updates: 0,
		seq: 0,
		zoom: null,
	};
	let cpuChart = null, jobChart = null;

	const $ = (id) => document.getElementById(id);
	const errors = [];
	function report(msg) {
		errors.push(String(msg));
		const el = $('errors');
		el.textContent = errors.join('\n');
		el.hidden = false;
	}
	window.addEventListener('error', (e) => report('error: ' + e.message));
	window.addEventListener('unhandledrejection', (e) => report('rejection: ' + e.reason));

	const sec = (ns) => Number(ns) / 1e9;

	async function getJSON(path) {
		const r = await fetch(path, { headers: { Accept: 'application/json' } });
		if (r.status === 503)
			return null;
		if (!r.ok)
			throw new Error(path + ': HTTP ' + r.status);
		return r.json();
	}

	function text(tag, value, cls) {
		const el = document.createElement(tag);
		el.textContent = value;
		if (cls)
			el.className = cls;
		return el;
	}

	function renderStatus(st) {
		const dl = $('status');
		dl.replaceChildren();
		const items = [['host', st.host], ['kernel', st.kernel], ['source', st.source],
			['mode', st.mode], ['window', (st.window_ns / 1e6) + ' ms'],
			['events', st.events], ['lost', st.lost_events]];
		// engine vs kernel PELT (live, where the stream carries the kernel's values)
		if (st.pelt && st.pelt.kernel_reference) {
			const e = (g) => g.samples ? g.median_abs_err + ' / ' + g.p95_abs_err : '-';
			items.push(['PELT util err cpu', e(st.pelt.signals.util_avg)],
				['PELT util err task', e(st.pelt.task_signals.util_avg)]);
		}
		for (const [k, v] of items) {
			const d = document.createElement('div');
			d.append(text('dt', k), text('dd', v === undefined || v === null ? '-' : String(v)));
			dl.append(d);
		}
	}

	function addCpu(cpu) {
		if (!state.cpus.includes(cpu)) {
			state.cpus.push(cpu);
			state.cpus.sort((a, b) => a - b);
		}
	}

	function cpuRow(t) {
		let r = state.cpuRows.get(t);
		if (!r) {
			r = {};
			state.cpuRows.set(t, r);
		}
		return r;
	}

	function trim(map) {
		if (map.size <= MAX_POINTS)
			return;
		const keys = Array.from(map.keys()).sort((a, b) => a - b);
		for (const k of keys.slice(0, map.size - MAX_POINTS))
			map.delete(k);
	}

	function addWindow(w) {
		const t = sec(w.t_end_ns);
		for (const c of w.cpus) {
			addCpu(c.cpu);
			cpuRow(t)[c.cpu] = [c.runnable_avg, c.util_avg];
			state.capacity = Math.max(state.capacity, c.capacity || 0) || 1024;
		}
		const jr = state.jobRows.get(t) || {};
		for (const j of w.jobs || []) {
			if (!state.jobs.includes(j.key))
				state.jobs.push(j.key);
			jr[j.key] = j.unfairness;
		}
		state.jobRows.set(t, jr);
		if (w.tasks)
			state.tasks = w.tasks;
		trim(state.cpuRows);
		trim(state.jobRows);
	}

	function cpuData() {
		const ts = Array.from(state.cpuRows.keys()).sort((a, b) => a - b);
		return ts.map((t) => {
			const r = state.cpuRows.get(t), row = [t];
			for (const cpu of state.cpus) {
				const v = r[cpu];
				row.push(v ? v[0] : null, v ? v[1] : null);
			}
			row.push(state.capacity);
			return row;
		});
	}

	function cpuLabels() {
		const l = ['t'];
		for (const cpu of state.cpus)
			l.push('cpu' + cpu + ' runnable_avg', 'cpu' + cpu + ' util_avg');
		l.push('capacity');
		return l;
	}

	function jobData() {
		const ts = Array.from(state.jobRows.keys()).sort((a, b) => a - b);
		return ts.map((t) => {
			const r = state.jobRows.get(t), row = [t];
			for (const k of state.jobs)
				row.push(k in r ? r[k] : null);
			return row;
		});
	}

	const palette = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#17becf',
		'#8c564b', '#e377c2'];

	function drawCpu() {
		const data = cpuData();
		const el = $('chart-cpu');
		el.dataset.cpus = String(state.cpus.length);
		el.dataset.series = String(state.cpus.length * 2);
		el.dataset.points = String(data.length);
		const legend = $('cpu-series');
		if (legend.children.length !== state.cpus.length) {
			legend.replaceChildren();
			state.cpus.forEach((cpu, i) => {
				const li = text('li', 'cpu' + cpu + ': solid runnable_avg, dashed util_avg');
				li.dataset.cpu = String(cpu);
				li.style.color = palette[i % palette.length];
				legend.append(li);
			});
		}
		if (!data.length)
			return;
		const series = {};
		state.cpus.forEach((cpu, i) => {
			const color = palette[i % palette.length];
			series['cpu' + cpu + ' runnable_avg'] = { color: color, strokeWidth: 2 };
			series['cpu' + cpu + ' util_avg'] = { color: color, strokePattern: [6, 3] };
		});
		series.capacity = { color: '#555', strokePattern: [2, 2], strokeWidth: 1 };
		const opts = { labels: cpuLabels(), series: series, ylabel: 'PELT units',
			xlabel: 'trace time (s)', legend: 'follow', labelsSeparateLines: true,
			includeZero: true, connectSeparatedPoints: false, animatedZooms: false };
		if (state.zoom)
			opts.dateWindow = state.zoom;
		if (!cpuChart)
			cpuChart = new Dygraph(el, data, opts);
		else
			cpuChart.updateOptions(Object.assign({ file: data }, opts));
	}

	function drawJobs() {
		const data = jobData();
		const el = $('chart-jobs');
		el.dataset.series = String(state.jobs.length);
		if (!data.length || !state.jobs.length)
			return;
		const opts = { labels: ['t'].concat(state.jobs), valueRange: [0, 1.05],
			ylabel: 'unfairness', xlabel: 'trace time (s)', legend: 'follow',
			labelsSeparateLines: true, colors: palette };
		if (state.zoom)
			opts.dateWindow = state.zoom;
		if (!jobChart)
			jobChart = new Dygraph(el, data, opts);
		else
			jobChart.updateOptions(Object.assign({ file: data }, opts));
	}

	function drawTasks() {
		const body = $('tasks').tBodies[0];
		body.replaceChildren();
		const max = Math.max(0.01, ...state.tasks.map((t) => Math.max(t.share, t.fair_share)));
		for (const t of state.tasks.slice(0, 20)) {
			const tr = document.createElement('tr');
			tr.append(text('td', t.pid, 'num'), text('td', t.comm), text('td', t.cpu, 'num'));
			const td = document.createElement('td');
			const bar = document.createElement('div');
			bar.className = 'bar';
			const s = document.createElement('div');
			s.className = 'share';
			s.style.width = (100 * t.share / max).toFixed(1) + '%';
			const f = document.createElement('div');
			f.className = 'fair';
			f.style.left = (100 * t.fair_share / max).toFixed(1) + '%';
			f.title = 'fair share ' + (100 * t.fair_share).toFixed(1) + '%';
			bar.append(s, f, text('span', (100 * t.share).toFixed(1) + '% / ' +
				(100 * t.fair_share).toFixed(1) + '%'));
			td.append(bar);
			tr.append(td);
			body.append(tr);
		}
	}

	function zoomTo(f) {
		const a = sec(f.t_start_ns), b = sec(f.t_end_ns);
		const pad = Math.max(1, (b - a) * 0.2);
		state.zoom = [a - pad, b + pad];
		$('chart-cpu').dataset.zoom = state.zoom.map((x) => x.toFixed(1)).join(',');
		drawCpu();
		drawJobs();
	}

	function drawFindings() {
		const body = $('findings').tBodies[0];
		body.replaceChildren();
		const list = Array.from(state.findings.values())
			.sort((x, y) => y.t_end_ns - x.t_end_ns).slice(0, 200);
		for (const f of list) {
			const tr = document.createElement('tr');
			tr.dataset.id = String(f.id);
			tr.append(text('td', sec(f.t_start_ns).toFixed(1) + '–' + sec(f.t_end_ns).toFixed(1), 'num'),
				text('td', f.kind), text('td', f.severity, 'sev-' + f.severity),
				text('td', f.subject),
				text('td', Number(f.value).toPrecision(3) + ' / ' + Number(f.threshold).toPrecision(3), 'num'),
				text('td', f.summary + (f.open ? ' (ongoing)' : '')));
			const ev = document.createElement('td');
			ev.append(text('pre', typeof f.evidence === 'string' ? f.evidence
				: JSON.stringify(f.evidence, null, 1)));
			tr.append(ev);
			tr.addEventListener('click', () => {
				for (const o of body.querySelectorAll('tr.selected'))
					o.classList.remove('selected');
				tr.classList.add('selected');
				zoomTo(f);
			});
			body.append(tr);
		}
	}

	function markUpdate(seq, t) {
		state.updates++;
		state.seq = seq || state.seq;
		const u = $('updates');
		u.dataset.updates = String(state.updates);
		u.dataset.seq = String(state.seq);
		u.textContent = 'window ending at ' + t.toFixed(1) + ' s; ' + state.updates +
			' live update(s)';
	}

	async function loadHistory() {
		const [util, runnable, unf] = await Promise.all([
			getJSON('/api/v1/timeseries?metric=util_avg'),
			getJSON('/api/v1/timeseries?metric=runnable_avg'),
			getJSON('/api/v1/timeseries?metric=unfairness'),
		]);
		for (const [res, idx] of [[runnable, 0], [util, 1]]) {
			for (const s of (res && res.series) || []) {
				addCpu(s.cpu);
				for (const [t, v] of s.points) {
					const r = cpuRow(sec(t));
					const pair = r[s.cpu] || [null, null];
					pair[idx] = v;
					r[s.cpu] = pair;
				}
			}
		}
		for (const s of (unf && unf.series) || []) {
			if (!state.jobs.includes(s.job))
				state.jobs.push(s.job);
			for (const [t, v] of s.points) {
				const key = sec(t);
				const r = state.jobRows.get(key) || {};
				r[s.job] = v;
				state.jobRows.set(key, r);
			}
		}
		trim(state.cpuRows);
		trim(state.jobRows);
	}

	async function loadLatest() {
		const [cpus, tasks, findings] = await Promise.all([
			getJSON('/api/v1/cpus'),
			getJSON('/api/v1/tasks?top=20&sort=run_ns'),
			getJSON('/api/v1/findings'),
		]);
		if (cpus)
			for (const c of cpus.cpus) {
				addCpu(c.cpu);
				state.capacity = Math.max(state.capacity, c.capacity || 0) || 1024;
			}
		if (tasks)
			state.tasks = tasks.tasks;
		for (const f of (findings && findings.findings) || [])
			state.findings.set(f.kind + ':' + f.id, f);
	}

	function follow() {
		const es = new EventSource('/api/v1/stream');
		const badge = $('live');
		es.addEventListener('open', () => {
			badge.textContent = 'live';
			badge.className = 'badge live';
		});
		es.addEventListener('error', () => {
			badge.textContent = 'reconnecting';
			badge.className = 'badge';
		});
		es.addEventListener('window', (e) => {
			const w = JSON.parse(e.data);
			addWindow(w);
			drawCpu();
			drawJobs();
			drawTasks();
			markUpdate(w.seq, sec(w.t_end_ns));
		});
		es.addEventListener('finding', (e) => {
			const f = JSON.parse(e.data);
			state.findings.set(f.kind + ':' + f.id, f);
			drawFindings();
		});
	}

	async function main() {
		$('unzoom').addEventListener('click', () => {
			state.zoom = null;
			delete $('chart-cpu').dataset.zoom;
			if (cpuChart)
				cpuChart.resetZoom();
			if (jobChart)
				jobChart.resetZoom();
		});
		const stage = (s) => { document.body.dataset.stage = s; };
		stage('status');
		const st = await getJSON('/api/v1/status');
		if (st)
			renderStatus(st);
		stage('history');
		await loadHistory();
		stage('latest');
		await loadLatest();
		stage('draw');
		drawCpu();
		drawJobs();
		drawTasks();
		drawFindings();
		if (st && st.mode === 'live') {
			follow();
			setInterval(async () => {
				const s = await getJSON('/api/v1/status');
				if (s)
					renderStatus(s);
			}, 5000);
		} else {
			$('live').textContent = 'offline (stored run)';
		}
		stage('ready');
	}

	main().catch((e) => report(e && e.stack ? e.stack : e));
})();
