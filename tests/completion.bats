#!/usr/bin/env bats
# vfctl's bash completion, through bash-completion's own machinery, against a
# real vfagentd on a simulated host reached with --socket.

top=${top_srcdir:-.}
b=${top_builddir:-.}

setup() {
	[ -r /usr/share/bash-completion/bash_completion ] || skip "bash-completion is not installed"
	dir=$(mktemp -d)
	"$b/agent/vfagentd" --simulate "$dir/sys" --listen "unix:$dir/s.sock" >"$dir/agent.log" 2>&1 &
	echo $! >"$dir/pid"
	for _ in $(seq 100); do
		curl -sf --unix-socket "$dir/s.sock" http://x/v1/health >/dev/null && break
		sleep 0.1
	done
	PATH="$b/agent/vfctl:$PATH"
	# shellcheck disable=SC1091 # Debian's, installed by the test dependencies
	source /usr/share/bash-completion/bash_completion
	# shellcheck source=contrib/bash-completion/vfctl
	source "$top/contrib/bash-completion/vfctl"
}

teardown() {
	[ -n "${dir:-}" ] || return 0
	kill "$(cat "$dir/pid")" 2>/dev/null || true
	rm -rf "$dir"
}

# What completing the last word of the command line offers, one per line.
offers() {
	COMP_WORDS=("$@")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMP_LINE="$*"
	COMP_POINT=${#COMP_LINE}
	COMPREPLY=()
	_vfctl
	printf '%s\n' "${COMPREPLY[@]}"
}

@test "bash knows the function" {
	run bash -c "source /usr/share/bash-completion/bash_completion; source $top/contrib/bash-completion/vfctl; complete -p vfctl"
	[ "$output" = "complete -F _vfctl vfctl" ]
}

@test "commands" {
	run offers vfctl al
	[ "$(sort <<<"$output")" = "$(printf 'alloc\nallocations')" ]
}

@test "numvfs offers PFs only, bind VFs only, through --socket" {
	run offers vfctl --socket "$dir/s.sock" numvfs ""
	[[ $output == *0000:3b:00.0* ]] && [[ $output != *0000:3b:00.1* ]] && [[ $output != *"(no"* ]]
	run offers vfctl --socket "$dir/s.sock" bind ""
	[[ $output == *0000:3b:00.1* ]] && [[ $output != *0000:3b:00.0* ]]
	run offers vfctl --socket "$dir/s.sock" bind 0000:3b:00.1 ""
	[[ $output == *vfio-pci* ]]
}

@test "alloc offers the pools; --state the states" {
	run offers vfctl --socket "$dir/s.sock" alloc ""
	[ "$(sort <<<"$output")" = "$(printf 'eth\nib')" ]
	run offers vfctl --state re
	[ "$(sort <<<"$output")" = "$(printf 'released\nreleasing\nreserved')" ]
}

@test "release and show offer allocation ids; show PCI addresses too" {
	id=$(curl -s --unix-socket "$dir/s.sock" -d '{"pool":"ib","owner":{"kind":"vm","name":"c"}}' \
		http://x/v1/allocations | sed 's/.*"id":"\([^"]*\)".*/\1/')
	run offers vfctl --socket "$dir/s.sock" release ""
	[ "$output" = "$id" ]
	run offers vfctl --socket "$dir/s.sock" show ""
	[[ $output == *"$id"* ]] && [[ $output == *0000:3b:00.0* ]] && [[ $output == *0000:3b:00.1* ]]
}

@test "without the agent nothing odd is offered" {
	run offers vfctl --socket "$dir/none.sock" release ""
	[ "$output" = "" ]
}
