#!/bin/sh
# The man pages say what the programs do: every long option --help prints is
# in the program's man page and every one the page names is in --help; every
# vfctl command --help lists has its entry under COMMANDS, and no entry names
# a command vfctl lacks. Each page sits in the section of where its program
# is installed (vfctl in bin: 1; vfagentd in sbin: 8; the file format: 5).
set -eu
top=${top_srcdir:-.}
b=${top_builddir:-.}
fail() { echo "FAIL: $*"; exit 1; }

options() { grep -o -- '--[a-z][a-z-]*[a-z]' | sort -u; }
page_options() { sed 's/\\-/-/g' "$1" | options; }
compare() { # WHAT HELP_LIST PAGE_LIST PAGE
	missing=$(printf '%s\n' "$2" | grep -vxF -e "$3" || :)
	extra=$(printf '%s\n' "$3" | grep -vxF -e "$2" || :)
	[ -z "$missing" ] || fail "$4 lacks $1 that --help prints: $(printf "%s" "$missing" | tr "\n" " ")"
	[ -z "$extra" ] || fail "$4 names $1 --help does not: $(printf "%s" "$extra" | tr "\n" " ")"
}

# vfagentd.8 names nsenter's --net= in an example: only the agent's own options count
compare options "$("$b/agent/vfagentd" --help 2>&1 | options)" \
	"$(page_options "$top/contrib/vfagentd.8.in" | grep -vx -e --net)" contrib/vfagentd.8.in
compare options "$("$b/agent/vfctl/vfctl" --help | options)" \
	"$(page_options "$top/contrib/vfctl.1")" contrib/vfctl.1

help_commands=$("$b/agent/vfctl/vfctl" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z]*\) .*/\1/p' | sort -u)
page_commands=$(sed -n '/^\.SH COMMANDS/,/^\.SH /{/^\.TP/{n;s/^\.B \([a-z][a-z]*\).*/\1/p}}' \
	"$top/contrib/vfctl.1" | sort -u)
[ "$(echo "$help_commands" | wc -l)" -ge 10 ] || fail "vfctl --help: no command list read"
compare commands "$help_commands" "$page_commands" contrib/vfctl.1

section() { sed -n 's/^\.TH [^ ]* \([0-9]\) .*/\1/p' "$1"; }
[ "$(section "$top/contrib/vfctl.1")" = 1 ] || fail "vfctl.1 is not in section 1"
[ "$(section "$top/contrib/vfagentd.8.in")" = 8 ] || fail "vfagentd.8 is not in section 8"
[ "$(section "$top/contrib/vfagent-cni.8")" = 8 ] || fail "vfagent-cni.8 is not in section 8"
[ "$(section "$top/contrib/vfagent.json.5")" = 5 ] || fail "vfagent.json.5 is not in section 5"
[ "$(section "$top/contrib/vfagent-guide.7")" = 7 ] || fail "vfagent-guide.7 is not in section 7"
echo "manpages: options and commands as --help prints them, sections as installed"
