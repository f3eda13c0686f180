# SPDX-License-Identifier: GPL-2.0-or-later
# metrics-check.awk - validate Prometheus text exposition format 0.0.4.
#
# Checks: metric and label names are valid, label values are quoted with
# only \\, \" and \n escapes, values parse as floats (or NaN/+Inf/-Inf),
# every sample belongs to a family declared by one HELP and one TYPE line
# before it, families are contiguous, counters end in _total, summaries
# carry quantile labels or _sum/_count.  Prints errors; exit 1 on any.
function fail(msg) { print "line " NR ": " msg ": " $0; bad = 1 }
function family_of(name) {
	if (name in type) return name
	sub(/_(sum|count|bucket)$/, "", name)
	return name
}
/^# HELP / {
	n = $3
	if (n !~ /^[a-zA-Z_:][a-zA-Z0-9_:]*$/) fail("bad HELP name")
	if (n in help) fail("second HELP for " n)
	help[n] = 1
	next
}
/^# TYPE / {
	n = $3; t = $4
	if (!(n in help)) fail("TYPE before HELP")
	if (n in type) fail("second TYPE for " n)
	if (t !~ /^(counter|gauge|summary|histogram|untyped)$/) fail("bad type " t)
	if (t == "counter" && n !~ /_total$/) fail("counter without _total")
	type[n] = t
	if (n in closed) fail("family " n " reopened")
	if (cur != "" && cur != n) closed[cur] = 1
	cur = n
	next
}
/^#/ { next }
/^$/ { next }
{
	line = $0
	if (!match(line, /^[a-zA-Z_:][a-zA-Z0-9_:]*/)) { fail("bad metric name"); next }
	name = substr(line, 1, RLENGTH)
	rest = substr(line, RLENGTH + 1)
	labels = ""
	if (substr(rest, 1, 1) == "{") {
		# label pairs name="value", value escapes \\ \" \n only
		if (!match(rest, /^\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\[\\"n])*"(,[a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\[\\"n])*")*)?\}/)) {
			fail("bad labels"); next
		}
		labels = substr(rest, 1, RLENGTH)
		rest = substr(rest, RLENGTH + 1)
	}
	if (rest !~ /^ (NaN|[+-]Inf|[-+]?[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?)( [0-9]+)?$/)
		fail("bad value")
	fam = family_of(name)
	if (!(fam in type)) fail("sample without TYPE (" fam ")")
	else if (fam != cur) fail("sample outside its family block")
	if (type[fam] == "summary" && name == fam && labels !~ /quantile="/)
		fail("summary sample without quantile")
	key = name labels
	if (key in seen) fail("duplicate series")
	seen[key] = 1
	samples++
}
END {
	if (!samples) { print "no samples"; bad = 1 }
	exit bad
}
