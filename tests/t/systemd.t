#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# systemd.t - the service unit passes `systemd-analyze verify` (with
# ExecStart pointing at the built binary, since verify checks that the
# command exists), and the shipped configuration file is what the daemon
# reads.  TAP output.
set -u
IMB=${IMBALANCED:-./imbalanced}
B=${top_builddir:-.}
. "${top_srcdir:-.}/tests/helpers/tap-lib.sh"
if ! command -v systemd-analyze >/dev/null; then echo "1..0 # SKIP systemd-analyze not installed"; exit 0; fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
unit="$B/daemon/imbalanced.service"
[ -f "$unit" ]
ok $? "the unit is generated"
sed "s|^ExecStart=[^ ]*|ExecStart=$(cd "$(dirname "$IMB")" && pwd)/$(basename "$IMB")|" "$unit" >"$T/imbalanced.service"
systemd-analyze verify --man=no "$T/imbalanced.service" >"$T/verify.out" 2>&1
rc=$?
sed 's/^/# /' "$T/verify.out"
# --man=no: the man pages are installed by make install, not in the build;
# verify warns about units of the host it cannot see; an error in ours fails
[ $rc = 0 ] && ! grep -q 'imbalanced.service:' "$T/verify.out"
ok $? "systemd-analyze verify passes"
for k in Type=notify WatchdogSec= ExecReload= StateDirectory=imbalanced ProtectSystem=strict \
	ProtectHome=yes PrivateTmp=yes 'CapabilityBoundingSet=CAP_BPF CAP_PERFMON' MemoryMax= \
	Restart=on-failure; do
	grep -q "^$k" "$unit"
	ok $? "the unit sets $k"
done
# the bounding set withholds CAP_SYS_ADMIN: a privileged ExecStartPre
# mounts tracefs for the fallback when nothing else has
grep -q "^ExecStartPre=+.*mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing" "$unit"
ok $? "the unit mounts tracefs with full privileges (ExecStartPre=+) when it is not mounted"
"$IMB" config --config "$B/doc/imbalanced.conf" >"$T/effective.conf" &&
	"$IMB" config --defaults | cmp -s - "$T/effective.conf"
ok $? "the shipped imbalanced.conf parses and holds the defaults"
echo "1..$n"
exit $fail
