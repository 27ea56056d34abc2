#!/bin/sh
# make install into a DESTDIR: every file an operator needs lands where the
# configured paths say, the units name the installed binary and config, the
# config is installed only when absent, systemd-analyze accepts the units, and
# uninstall leaves an edited config alone.
# shellcheck disable=SC2154 # the directories are set by an eval from the build's Makefile
set -eu
. "${top_srcdir:-.}/tests/api-lib.sh"
# the configured directories, as configure wrote them (${prefix}/… expanded in order)
for v in prefix exec_prefix sysconfdir sbindir bindir datarootdir datadir mandir cnidir \
	systemdsystemunitdir sysusersdir tmpfilesdir; do
	eval "$v=\"$(sed -n "s/^$v = //p" "$b/Makefile" | head -n 1)\""
done
root=$tmp/root
make -s -C "$b" install DESTDIR="$root" >"$tmp/install.log" 2>&1 || fail "make install: $(tail -5 "$tmp/install.log")"

for f in "$sbindir/vfagentd" "$bindir/vfctl" \
	"$systemdsystemunitdir/vfagentd.service" "$systemdsystemunitdir/vfagentd.socket" \
	"$systemdsystemunitdir/vfagentd-cni.socket" "$sysusersdir/vfagent.conf" "$tmpfilesdir/vfagent.conf" \
	"$sysconfdir/vfagent/vfagent.json" "$mandir/man8/vfagentd.8" "$mandir/man1/vfctl.1" \
	"$mandir/man5/vfagent.json.5" "$datadir/bash-completion/completions/vfctl" \
	"$datadir/doc/vfagent/examples/vfagent.json" "$cnidir/vfagent" "$mandir/man8/vfagent-cni.8" \
	"$datadir/doc/vfagent/cni/vfagent.conflist" \
	"$datadir/doc/vfagent/cni/network-attachment-definition.yaml" \
	"$datadir/doc/vfagent/examples/opensm/vfagent-partitions.service" \
	"$datadir/doc/vfagent/examples/opensm/vfagent-opensm-pid.conf"; do
	[ -s "$root$f" ] || fail "not installed: $f"
done
[ -x "$root$sbindir/vfagentd" ] && [ -x "$root$bindir/vfctl" ] && [ -x "$root$cnidir/vfagent" ] ||
	fail "programs not executable"
# the CNI plugin where Debian's runtimes look with the default prefix /usr, and it runs
[ "$prefix" != /usr ] || [ "$cnidir" = /usr/lib/cni ] || fail "the CNI plugin goes to $cnidir, not /usr/lib/cni"
echo '{"cniVersion":"1.0.0"}' | CNI_COMMAND=VERSION "$root$cnidir/vfagent" | jq -e '.supportedVersions | index("1.1.0")' \
	>/dev/null || fail "the installed CNI plugin does not answer VERSION"
unit=$root$systemdsystemunitdir/vfagentd.service
grep -q "^ExecStart=$sbindir/vfagentd --config $sysconfdir/vfagent/vfagent.json " "$unit" ||
	fail "the unit does not run the installed binary with the installed config: $(grep ExecStart "$unit")"
grep -q '@[a-z]*dir@' "$unit" && fail "unsubstituted paths in the unit: $(grep '@[a-z]*dir@' "$unit")"
grep -q '^g vfagent ' "$root$sysusersdir/vfagent.conf" || fail "no socket group in sysusers.d"
grep -q '^SocketGroup=vfagent$' "$root$systemdsystemunitdir/vfagentd.socket" || fail "socket group"
# the installed programs run, with the installed library (libdir is under the DESTDIR root)
libdir=$(sed -n 's/^libdir = //p' "$b/Makefile" | head -n 1)
eval "libdir=\"$libdir\""
export LD_LIBRARY_PATH="$root$libdir"
"$root$sbindir/vfagentd" --version | grep -q '^vfagentd [0-9]' || fail "vfagentd --version"
"$root$bindir/vfctl" --version | grep -q '^vfctl [0-9]' || fail "vfctl --version"
"$root$sbindir/vfagentd" --help | grep -q "default $sysconfdir/vfagent/vfagent.json" ||
	fail "vfagentd's default config is not the installed one"

# systemd accepts the units as installed; only ExecStart is pointed into the DESTDIR
# root, where the binary is (verify checks that it exists and is executable)
if command -v systemd-analyze >/dev/null; then
	mkdir -p "$tmp/units"
	sed "s|^ExecStart=|ExecStart=$root|; s|^ExecReload=$sbindir|ExecReload=$root$sbindir|" "$unit" \
		>"$tmp/units/vfagentd.service"
	cp "$root$systemdsystemunitdir/vfagentd.socket" "$root$systemdsystemunitdir/vfagentd-cni.socket" "$tmp/units/"
	systemd-analyze verify --man=no "$tmp/units/vfagentd.socket" "$tmp/units/vfagentd-cni.socket" \
		"$tmp/units/vfagentd.service" \
		>"$tmp/verify" 2>&1 || fail "systemd-analyze verify: $(cat "$tmp/verify")"
	grep -q . "$tmp/verify" && fail "systemd-analyze verify complains: $(cat "$tmp/verify")"
	# the hardening's score (lower is safer): at most 3.0, as the unit's comments account for
	if systemd-analyze security --offline=true "$tmp/units/vfagentd.service" >"$tmp/security" 2>&1; then
		score=$(sed -n 's/.*Overall exposure level for vfagentd.service: \([0-9.]*\).*/\1/p' "$tmp/security")
		[ -n "$score" ] || fail "systemd-analyze security: $(tail -n 3 "$tmp/security")"
		awk -v s="$score" 'BEGIN { exit !(s <= 3.0) }' || fail "systemd-analyze security: $score > 3.0"
	fi
	for p in /run/netns /run/libvirt; do
		grep -q "^ReadWritePaths=.*$p" "$unit" && fail "the unit needs $p to exist (ReadWritePaths)"
	done
fi

# an edited config survives a reinstall and an uninstall; the example is removed with the rest
printf '{"pools": []}\n' >"$root$sysconfdir/vfagent/vfagent.json"
make -s -C "$b" install DESTDIR="$root" >/dev/null 2>&1 || fail "second make install"
grep -q '"pools": \[\]' "$root$sysconfdir/vfagent/vfagent.json" || fail "reinstall overwrote the config"
make -s -C "$b" uninstall DESTDIR="$root" >/dev/null 2>&1 || fail "make uninstall"
[ -e "$root$sysconfdir/vfagent/vfagent.json" ] || fail "uninstall removed an edited config"
[ -e "$root$sbindir/vfagentd" ] && fail "uninstall left vfagentd"
grep -q '@sysconfdir@\|SYSCONFDIR' "$root$mandir/man8/vfagentd.8" 2>/dev/null && fail "uninstall left vfagentd.8"

# a fresh install and its uninstall: nothing of ours is left, no file, no directory of ours
root2=$tmp/root2
make -s -C "$b" install DESTDIR="$root2" >/dev/null 2>&1 || fail "make install into an empty root"
grep -q "$sysconfdir/vfagent/vfagent.json" "$root2$mandir/man8/vfagentd.8" ||
	fail "vfagentd(8) does not name the configured config path"
grep -q 'SYSCONFDIR\|@sysconfdir@' "$root2$mandir/man8/vfagentd.8" && fail "vfagentd(8) has a placeholder"
make -s -C "$b" uninstall DESTDIR="$root2" >/dev/null 2>&1 || fail "make uninstall of a fresh install"
# (a directory that leads to a configured one is not ours: distcheck's prefix is under vfagent-X.Y.Z/)
left=$(find "$root2" -type f -o -type l -o -type d -name '*vfagent*' | while read -r p; do
	case "$prefix/ $sysconfdir/" in *"${p#"$root2"}/"*) ;; *) echo "$p" ;; esac
done)
[ -z "$left" ] || fail "uninstall left: $left"
echo "install: all checks passed (prefix $prefix, sysconfdir $sysconfdir)"
