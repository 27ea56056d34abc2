#!/bin/sh
# bench/http: wrk against vfagentd on TCP loopback (GET /v1/vfs/{pci} and
# GET /v1/vfs on 1,024 VFs) and, in the same run, against nginx serving the
# same bytes as static files. Prints req/s for both and the ratio, and the
# agent's RSS at 4,096 VFs, with libvirt and with "libvirt": false, next to the
# RSS of a process that only opens a libvirt connection. Needs wrk and nginx
# (apt-get install wrk nginx-light).
set -eu
b=${top_builddir:-$(dirname "$0")/..}
for t in wrk nginx curl; do command -v $t >/dev/null || { echo "bench/http: $t is missing"; exit 77; }; done
tmp=$(mktemp -d /tmp/vfagent-bench-http-XXXXXX)
agent=
cleanup() {
	[ -n "$agent" ] && kill "$agent" 2>/dev/null && wait "$agent" 2>/dev/null
	[ -f "$tmp/nginx.pid" ] && kill "$(cat "$tmp/nginx.pid")" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
DUR=${BENCH_SECONDS:-10}
token=bench-token-0123456789abcdef
printf '%s\n' "$token" >"$tmp/token"; chmod 600 "$tmp/token"
printf '{"pools":[{"name":"ib","selector":{"vendors":["15b3"]}}]}' >"$tmp/config.json"

start() { # $1 = number of PFs of 128 VFs
	rm -rf "$tmp/sys" "$tmp/state"
	"$b/bench/mkhost" "$tmp/sys" "$1"
	aport=$(port)
	"$b/agent/vfagentd" --sysfs-root "$tmp/sys" --config "$tmp/config.json" --state-dir "$tmp/state" \
		--listen "tcp:127.0.0.1:$aport" --token-file "$tmp/token" >"$tmp/agent.log" 2>&1 &
	agent=$!
	for _ in $(seq 100); do
		curl -sf -H "Authorization: Bearer $token" "http://127.0.0.1:$aport/v1/health" >/dev/null && return
		sleep 0.1
	done
	echo "bench/http: the agent did not start"; exit 1
}
stop() { kill "$agent"; wait "$agent" || true; agent=; }
# RSS, and its two parts: the agent's own memory, and the pages of the shared libraries it maps
rss_kb() { awk '/^VmRSS/ {r = $2} /^RssAnon/ {a = $2} /^RssFile/ {f = $2} END {print r " (anonymous " a ", file " f ")"}' "/proc/$agent/status"; }
# req/s, or nothing when any answer was not a 2xx (then the run is no measure of the bytes)
reqs() { awk '/Non-2xx/ {bad = 1} /Requests\/sec/ {rps = $2} END {if (!bad) print rps}'; }

start 8
vf=0000:10:00.1
mkdir -p "$tmp/www/v1/vfs"
curl -sf -H "Authorization: Bearer $token" "http://127.0.0.1:$aport/v1/vfs/$vf" >"$tmp/www/v1/vfs/$vf"
curl -sf -H "Authorization: Bearer $token" "http://127.0.0.1:$aport/v1/vfs" >"$tmp/www/v1/vfs/index.json"
nport=$(port)
cat >"$tmp/nginx.conf" <<NGINX
daemon on; worker_processes 2; pid $tmp/nginx.pid; error_log $tmp/nginx.err;
events { worker_connections 1024; }
http { access_log off; default_type application/json;
  server { listen 127.0.0.1:$nport; root $tmp/www; index index.json; } }
NGINX
# nginx's workers drop root: they must be able to read the files (a 403 page is not the same bytes)
chmod 755 "$tmp" "$tmp/www" "$tmp/www/v1" "$tmp/www/v1/vfs"
chmod 644 "$tmp/www/v1/vfs/"*
nginx -c "$tmp/nginx.conf" -p "$tmp"
sleep 0.5
for path in "/v1/vfs/$vf" "/v1/vfs/"; do
	curl -sf "http://127.0.0.1:$nport$path" | cmp -s - "$tmp/www${path%/}$( [ "$path" = /v1/vfs/ ] && echo /index.json)" ||
		{ echo "bench/http: nginx does not serve the agent's bytes for $path"; exit 1; }
done

echo "bench/http: wrk -t2 -c16 -d${DUR}s, agent (thread per connection) vs nginx, same bytes"
for path in "/v1/vfs/$vf" "/v1/vfs/"; do
	a=$(wrk -t2 -c16 -d"${DUR}s" -H "Authorization: Bearer $token" "http://127.0.0.1:$aport${path%/}" | reqs)
	n=$(wrk -t2 -c16 -d"${DUR}s" "http://127.0.0.1:$nport$path" | reqs)
	[ -n "$a" ] && [ -n "$n" ] || { echo "bench/http: non-2xx answers for $path"; exit 1; }
	size=$(wc -c <"$tmp/www${path%/}$( [ "$path" = /v1/vfs/ ] && echo /index.json)")
	printf '  GET %-22s %7s bytes  agent %9s req/s  nginx %9s req/s  ratio %s\n' "${path%/}" "$size" "$a" "$n" \
		"$(python3 -c "print(f'{$a/$n:.2f}')")"
done
printf '  agent RSS at 1,024 VFs after the runs: %s KiB\n' "$(rss_kb)"
stop
start 32
curl -sf -H "Authorization: Bearer $token" "http://127.0.0.1:$aport/v1/vfs" >/dev/null
printf '  agent RSS at 4,096 VFs after a full GET /v1/vfs: %s KiB\n' "$(rss_kb)"
stop
# a host without VMs: libvirt (loaded with the first connection) is never loaded
printf '{"pools":[{"name":"ib","selector":{"vendors":["15b3"]}}],"libvirt":false}' >"$tmp/config.json"
start 32
curl -sf -H "Authorization: Bearer $token" "http://127.0.0.1:$aport/v1/vfs" >/dev/null
printf '  the same, "libvirt": false (a host without VMs): %s KiB\n' "$(rss_kb)"
stop
# the floor on a host with VMs: a process that only holds a libvirt connection
printf '  a process that only opens a libvirt connection (test:///default): %s KiB\n' \
	"$("$b/bench/libvirt-rss" test:///default)"
