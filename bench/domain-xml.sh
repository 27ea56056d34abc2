#!/bin/sh
# bench/domain-xml: POST /v1/domain-xml of an OpenNebula deployment file with
# two InfiniBand NICs and one Ethernet NIC (three VFs claimed, two dummy NICs
# added, the XML rewritten) against the same claims made with POST
# /v1/allocations (two IB VFs, one Ethernet VF: two requests), on the
# simulated host, pair by pair in the same run; each timed by curl
# (time_total), everything released between rounds (not timed). Then, with
# valgrind, the same pairs counted in instructions: the agent under
# callgrind, its instrumentation on only around each request (all of its
# threads: the claims' committer too), which a loaded machine does not move
# as it moves wall time (BENCH_CALLGRIND=0 skips it; BENCH_CG_ROUNDS pairs,
# 10 by default). Needs curl and jq.
set -eu
b=${top_builddir:-$(dirname "$0")/..}
src=${top_srcdir:-$(dirname "$0")/..}
N=${BENCH_ROUNDS:-30}
for t in curl jq; do command -v $t >/dev/null || { echo "bench/domain-xml: $t is missing"; exit 77; }; done
tmp=$(mktemp -d /tmp/vfagent-bench-dxml-XXXXXX)
sim=$(sh "$(dirname "$0")/sim-dir.sh" dxml) # the simulated sysfs: see sim-dir.sh
agent=
cleanup() {
	[ -n "$agent" ] && kill "$agent" 2>/dev/null && wait "$agent" 2>/dev/null
	[ -n "${BENCH_KEEP:-}" ] || rm -rf "$tmp" "$sim"
}
trap cleanup EXIT
median() { sort -n "$1" | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
api() { curl -sf --unix-socket "$tmp/s" "$@"; }

# start_agent [WRAPPER...]: the agent on a new simulated host and ledger, under WRAPPER
start_agent() {
	[ -n "$agent" ] && kill "$agent" 2>/dev/null && wait "$agent" 2>/dev/null
	agent=
	rm -rf "${sim:?}"/* "$tmp/state" "$tmp/s"
	"$@" "$b/agent/vfagentd" --simulate "$sim/sys" --state-dir "$tmp/state" \
		--listen "unix:$tmp/s" >"$tmp/agent.log" 2>&1 &
	agent=$!
	for _ in $(seq 600); do api http://x/v1/health >/dev/null 2>&1 && break; sleep 0.1; done
	api http://x/v1/health >/dev/null || { echo "bench/domain-xml: the agent did not start"; exit 1; }
}
start_agent

release_all() {
	for id in $(api http://x/v1/allocations | jq -r '.allocations[].id'); do
		api -X DELETE -o /dev/null "http://x/v1/allocations/$id"
	done
}
domain_xml() {
	api -X POST -H 'Content-Type: application/xml' --data-binary "@$src/tests/one/two-ib-one-eth.xml" \
		-o "$tmp/out.xml" -w '%{time_total}\n' 'http://x/v1/domain-xml?vlan=02:00:c0:a8:02:2a=120'
	[ "$(grep -c '<hostdev\|<interface type=.hostdev' "$tmp/out.xml")" = 3 ] ||
		{ echo "bench/domain-xml: the rewrite has not three VFs" >&2; exit 1; }
}
claims() {
	api -X POST -d '{"pool":"ib","count":2,"owner":{"kind":"vm","name":"bench"}}' -o /dev/null \
		-w '%{time_total}\n' http://x/v1/allocations \
		--next --unix-socket "$tmp/s" -sf -X POST -o /dev/null -w '%{time_total}\n' \
		-d '{"pool":"eth","count":1,"owner":{"kind":"vm","name":"bench"}}' http://x/v1/allocations |
		awk '{s += $1} END {print s}'
}
for _ in $(seq "$N"); do
	domain_xml >>"$tmp/dxml"
	release_all
	claims >>"$tmp/claims"
	release_all
done
d=$(median "$tmp/dxml") c=$(median "$tmp/claims")
echo "bench/domain-xml: $N rounds, medians, curl time_total (ms)"
awk -v d="$d" -v c="$c" 'BEGIN {printf "  domain-xml (3 VFs, 2 dummies)  %7.2f\n  two claims (3 VFs)             %7.2f\n  ratio %.2f\n", d * 1000, c * 1000, d / c}'

# counted: KIND CMD... runs CMD with callgrind's instrumentation on, then
# dumps the count (the dump zeroes it) and adds its instructions to $tmp/KIND.ir
counted() {
	kind=$1
	shift
	callgrind_control -i on "$agent" >/dev/null 2>&1
	"$@" >/dev/null
	callgrind_control -i off "$agent" >/dev/null 2>&1
	callgrind_control -d "$kind" "$agent" >/dev/null 2>&1
}
command -v valgrind >/dev/null && command -v callgrind_control >/dev/null ||
	{ echo "bench/domain-xml: no valgrind: instructions not counted"; exit 0; }
[ "${BENCH_CALLGRIND:-1}" != 0 ] || exit 0
M=${BENCH_CG_ROUNDS:-10}
start_agent "$b/libtool" --mode=execute valgrind -q --tool=callgrind --instr-atstart=no \
	--callgrind-out-file="$tmp/cg.out.%p"
release_all # the first round's instrumentation is no different from the others'
for _ in $(seq "$M"); do
	counted dxml domain_xml
	release_all
	counted claims claims
	release_all
done
# each dump names its trigger ("dump dxml") and its instructions (totals): medians
for f in "$tmp/cg.out.$agent".*; do
	awk '/^desc: Trigger: dump / {k = $NF} /^totals:/ {print $2 >>(dir "/" k ".ir")}' dir="$tmp" "$f"
done
d=$(median "$tmp/dxml.ir") c=$(median "$tmp/claims.ir")
echo "bench/domain-xml: $M rounds under callgrind, medians, instructions per request (M), all threads"
awk -v d="$d" -v c="$c" 'BEGIN {printf "  domain-xml (3 VFs, 2 dummies)  %7.3f\n  two claims (3 VFs)             %7.3f\n  ratio %.2f\n", d / 1e6, c / 1e6, d / c}'
