#!/bin/sh
# Every shell script of the tree is shellcheck clean: hooks, contrib, bench, tests and the
# lab, found by name and shebang, so a new script cannot be left out. .shellcheckrc says
# which checks are off for all, and why.
top=${top_srcdir:-.}
command -v shellcheck >/dev/null || { echo "shellcheck is not installed"; exit 1; }
cd "$top" || exit 1
scripts=$(find hooks contrib bench tests -name node_modules -prune -o -type f ! -name '*.[cho]' -print |
	while read -r f; do
		case $f in
		*.sh | *.bats | contrib/bash-completion/*) echo "$f" ;;
		*) head -c 64 "$f" 2>/dev/null | head -n 1 | grep -q '^#!.*sh' && echo "$f" ;;
		esac
	done | sort)
n=$(echo "$scripts" | wc -l)
[ "$n" -ge 30 ] || { echo "shellcheck: only $n scripts found: $scripts"; exit 1; }
# shellcheck disable=SC2086 # one argument per script name (no spaces in this tree's names)
shellcheck -x $scripts || exit 1
echo "shellcheck: $n scripts clean"
