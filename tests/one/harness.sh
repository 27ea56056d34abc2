# shellcheck shell=sh
# OpenNebula's side of the kvm-sriov actions, as src/vmm_mad/exec/one_vmm_exec.rb
# and its SSH stream call them, against "hosts" that are mount namespaces:
# each has its own /run/vfagent (an agent on its simulated host at the default
# socket), its own /run/libvirt (a libvirtd whose test driver the agent's
# connection keeps alive), /var/tmp/one (the remotes: kvm-sriov, and stand-ins
# of the stock kvm actions in vmm/kvm) and /var/lib/one (the system datastore).
# "ssh HOST CMD…" joins its words as OpenSSH does and runs them with bash -c in
# that host's namespace, with a fresh environment.
#   ONE_DIR      the harness's directory (set by one_start)
#   top_srcdir, top_builddir as for every test
: "${top_srcdir:=.}" "${top_builddir:=.}"
. "$top_srcdir/tests/libvirtd-lib.sh"

one_can_run() {
	[ "$(id -u)" = 0 ] && command -v libvirtd >/dev/null && command -v virsh >/dev/null &&
		command -v flock >/dev/null &&
		command -v unshare >/dev/null && command -v nsenter >/dev/null &&
		command -v xmllint >/dev/null && command -v jq >/dev/null && command -v bash >/dev/null
}

# The libvirtd a host runs: the test driver only; no TCP, no auth on its socket.
one_host_files() { # DIR
	mkdir -p "$1/sim" "$1/lib" "$1/etc" "$1/log" "$1/cache" "$1/one" \
		"$1/remotes/vmm/kvm-sriov" "$1/remotes/vmm/kvm"
	cat >"$1/libvirtd.conf" <<CONF
auth_unix_rw = "none"
auth_unix_ro = "none"
CONF
	cat >"$1/etc/qemu.conf" <<CONF
user = "root"
group = "root"
security_driver = "none"
CONF
	cat >"$1/vfagent.json" <<JSON
{"pools": [
  {"name": "ib", "selector": {"vendors": ["15b3"], "link_types": ["infiniband"]}},
  {"name": "eth", "selector": {"vendors": ["8086"]}, "grow": {"step": 2}}],
 "networks": [{"bridge": "sriov_ib0", "pool": "ib"}, {"bridge": "sriov_eth0", "pool": "eth"}],
 "guids": {"first": "02:c9:03:00:00:00:00:01", "count": 4096},
 ${ONE_MAC_PREFIX:+"opennebula_mac_prefix": "$ONE_MAC_PREFIX",}
 "libvirt": {"uri": "test+unix:///default"}}
JSON
	cp "$top_srcdir"/hooks/one/vmm/kvm-sriov/* "$1/remotes/vmm/kvm-sriov/"
	cp "$top_srcdir"/tests/one/kvm/* "$1/remotes/vmm/kvm/"
}

# A host: its namespace, its libvirtd and its agent, up and answering.
one_host_start() { # NAME
	d=$ONE_DIR/$1
	one_host_files "$d"
	one_mountpoints_take
	libvirtd_user_files "$d"
	# shellcheck disable=SC2016
	unshare -m --propagation private sh -c '
		d=$1 b=$2
		mount -t tmpfs tmpfs /run/vfagent && mount -t tmpfs tmpfs /run/libvirt &&
		mount --bind "$d/lib" /var/lib/libvirt && mount --bind "$d/etc" /etc/libvirt &&
		mount --bind "$d/log" /var/log/libvirt && mount --bind "$d/cache" /var/cache/libvirt &&
		mount --bind "$d/remotes" /var/tmp/one && mount --bind "$d/one" /var/lib/one || exit 1
		if [ -f "$d/passwd" ]; then # libvirtd_user_files made them
			mount --bind "$d/passwd" /etc/passwd && mount --bind "$d/group" /etc/group || exit 1
		fi
		libvirtd --config "$d/libvirtd.conf" --pid-file "$d/libvirtd.pid" >"$d/libvirtd.log" 2>&1 &
		i=0
		until virsh -q -c test+unix:///default uri >/dev/null 2>&1; do
			i=$((i + 1)); [ $i -lt 300 ] || exit 1; sleep 0.1
		done
		"$b/agent/vfagentd" --simulate "$d/sim" --config "$d/vfagent.json" >"$d/agent.log" 2>&1 &
		echo $! >"$d/agent.pid"
		exec sleep infinity' sh "$d" "$(cd "$top_builddir" && pwd)" &
	echo $! >"$d/pid"
	i=0
	until one_ssh "$1" 'curl -sf --unix-socket /run/vfagent/vfagent.sock http://x/v1/health' \
		>/dev/null 2>&1; do
		i=$((i + 1))
		if [ $i -gt 300 ]; then
			echo "host $1 did not start:" >&2
			cat "$d/libvirtd.log" "$d/agent.log" >&2 2>/dev/null
			return 1
		fi
		sleep 0.1
	done
}

# NAME: its agent sent SIGTERM and waited for until it has ended (a zombie: nothing reaps it)
one_agent_kill() {
	p=$(cat "$ONE_DIR/$1/agent.pid")
	kill "$p"
	for _ in $(seq 300); do
		case $(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | cut -d' ' -f1) in '' | Z) return 0 ;; esac
		sleep 0.1
	done
	echo "the agent of $1 did not end on SIGTERM" >&2
	return 1
}

one_host_stop() { # NAME
	d=$ONE_DIR/$1
	# (one gone already is no failure: under set -e a failed kill here ended the EXIT trap
	# early, and the other hosts ran on)
	for f in agent libvirtd; do
		[ -f "$d/$f.pid" ] && kill "$(cat "$d/$f.pid")" 2>/dev/null || :
	done
	sleep 0.2
	[ -f "$d/pid" ] && kill "$(cat "$d/pid")" 2>/dev/null || :
	return 0
}

# A test's opening: skip (77) where the harness cannot run, fail and step
# for its messages, the harness started and stopped at exit.
one_test_start() {
	one_can_run || { echo "SKIP: needs root, libvirtd, virsh, flock, unshare, nsenter, xmllint, jq"; exit 77; }
	# shellcheck disable=SC2317 # called by the test that sources this
	fail() { echo "FAIL: $*" >&2; exit 1; }
	# shellcheck disable=SC2317
	step() { echo "# $*"; }
	trap one_stop EXIT
	one_start
}

# The ssh that OpenNebula's driver and the actions use, in $ONE_DIR/bin.
one_start() {
	ONE_DIR=$(mktemp -d /tmp/vfagent-one.XXXXXX)
	mkdir "$ONE_DIR/bin"
	cat >"$ONE_DIR/bin/ssh" <<SSH
#!/bin/sh
# ssh HOST COMMAND…: OpenSSH joins the words with spaces; the remote user's
# shell runs the string (-c), in a fresh environment, stdin passed through.
host=\$1
shift
exec nsenter --mount="/proc/\$(cat "$ONE_DIR/\$host/pid")/ns/mnt" -- \\
	env -i PATH="$ONE_DIR/bin:/usr/sbin:/usr/bin:/sbin:/bin" HOME=/root \\
	bash -c "\$*"
SSH
	chmod +x "$ONE_DIR/bin/ssh"
}

one_stop() {
	[ -n "${ONE_DIR:-}" ] || return 0
	for h in "$ONE_DIR"/*/pid; do
		[ -f "$h" ] && one_host_stop "$(basename "$(dirname "$h")")"
	done
	sleep 0.2 # the hosts' mount namespaces go with their last process
	one_mountpoints_give_back
	rm -rf "$ONE_DIR"
}

# The mountpoints this machine lacks are made for the hosts' mounts, and removed by the last
# harness to stop: another one running beside this (make -j, a second checkout) mounts on
# them too, and an rmdir would take its mounts away (the kernel detaches them).
# $ONE_USERS: a file per harness running, named by its test's PID (one killed leaves its file:
# a dead PID does not count), and "made", the mountpoints made; all under a lock on /run (a
# directory that is always there: a lock file of our own would be left behind).
ONE_USERS=/run/vfagent-one-harness
one_mountpoints_take() {
	[ ! -e "$ONE_DIR/took" ] || return 0
	: >"$ONE_DIR/took"
	# shellcheck disable=SC2016
	flock /run sh -c 'mkdir -p "$1" && : >"$1/$2" || exit 1
		for m in /run/vfagent /run/libvirt /var/lib/libvirt /etc/libvirt /var/log/libvirt \
			/var/cache/libvirt /var/tmp/one /var/lib/one; do
			[ -d "$m" ] || { mkdir -p "$m" && echo "$m" >>"$1/made"; }
		done' sh "$ONE_USERS" $$
}
one_mountpoints_give_back() {
	[ -e "$ONE_DIR/took" ] || return 0
	# shellcheck disable=SC2016
	flock /run sh -c 'rm -f "$1/$2"
		for u in "$1"/*; do
			case ${u##*/} in made | "*") continue ;; esac
			if kill -0 "${u##*/}" 2>/dev/null; then exit 0; fi
			rm -f "$u"
		done
		[ ! -f "$1/made" ] || while read -r m; do rmdir "$m" 2>/dev/null; done <"$1/made"
		rm -rf "$1"' sh "$ONE_USERS" $$
}

one_ssh() { "$ONE_DIR/bin/ssh" "$@"; }

# one_action HOST ACTION VM_ID [PARAM…] < STDIN: as ExecDriver#do_action runs a
# step over its SSH stream: each parameter in single quotes, then VM_ID and
# HOST, fed by a here-document to the action in a remote bash -s.
one_action() {
	host=$1 act=$2 vmid=$3
	shift 3
	cmd=/var/tmp/one/vmm/kvm-sriov/$act
	for p; do cmd="$cmd '$p'"; done
	{
		printf "(cat << 'EOT' | %s)\n" "$cmd $vmid $host"
		cat
		printf '\nEOT\n'
	} | one_ssh "$host" bash -s
}

# deploy, as one_vmm_exec.rb does it: mkdir the VM's directory, vm.xml into
# it, then the action with the deployment file on stdin; the UUID on stdout.
one_deploy() { # HOST VM_ID DEPLOYMENT_XML VM_XML
	dir=/var/lib/one//datastores/0/$2
	one_ssh "$1" "/bin/mkdir -p '$dir'" </dev/null &&
		one_ssh "$1" "/bin/cat - >$dir/vm.xml" <"$4" &&
		one_action "$1" deploy "$2" "$dir/deployment.0" "$1" <"$3"
}

# The driver message of an action (VMM_DRIVER_ACTION_DATA) for VM_XML.
one_message() { # VM_XML DEPLOY_ID HOST [CHECKPOINT] [MIGR_HOST]
	printf '<VMM_DRIVER_ACTION_DATA><HOST>%s</HOST><MIGR_HOST>%s</MIGR_HOST><DEPLOY_ID>%s</DEPLOY_ID><CHECKPOINT_FILE>%s</CHECKPOINT_FILE><DATASTORE><TM_MAD>ssh</TM_MAD></DATASTORE>%s</VMM_DRIVER_ACTION_DATA>' \
		"$3" "${5:-}" "$2" "${4:-}" "$(cat "$1")"
}

# The agent of HOST: GET PATH, filtered by jq.
one_api() { # HOST PATH JQ
	one_ssh "$1" "curl -s --unix-socket /run/vfagent/vfagent.sock 'http://x$2'" </dev/null |
		jq -r "$3"
}

one_virsh() { # HOST ARGS (one string)
	one_ssh "$1" "virsh -q --connect test+unix:///default $2" </dev/null
}
