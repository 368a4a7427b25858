# SPDX-License-Identifier: GPL-2.0
# Helpers of the *-fuzz.sh guest tests (sourced after lib.sh): genl-fuzz runs
# and what came back per command.
#
#   fuzz NAME OUT ARGS...      genl-fuzz ARGS, its output in OUT; passes
#                              NAME_sent_all when every request went out and
#                              logs the per-command lines and the time taken
#   fuzz_get "OUTS" CMD FIELD  FIELD of command CMD's line ("other" for the
#                              commands the family has not) summed over the
#                              files OUTS (a glob): sent, formed, ok, failed,
#                              silent, data or an errno name (EPERM)
#   check_fuzz_ge NAME "OUTS" CMD FIELD MIN    fuzz_get >= MIN
#   check_fuzz_eq NAME "OUTS" CMD FIELD VALUE  fuzz_get = VALUE
#   check_dmesg_clean NAME     no kernel splat in dmesg since the first insmod
#                              (what tests/vm/run.py fails a run for), said
#                              here to name the step

# what tests/vm/run.py calls a splat (SPLAT_RE)
FUZZ_SPLAT_RE='WARNING:|BUG:|Oops|general protection|lockdep|KASAN|Kernel panic|Call Trace'

# uptime in ms
_fuzz_ms() {
	awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime
}

fuzz() {
	local name=$1 out=$2 t0 rc
	shift 2
	t0=$(_fuzz_ms)
	genl-fuzz "$@" >"$out" 2>&1
	rc=$?
	log "$name: genl-fuzz $* in $(($(_fuzz_ms) - t0)) ms:"
	sed 's/^/    /' "$out"
	if [ $rc -eq 0 ]; then
		pass "${name}_sent_all"
	else
		fail "${name}_sent_all" "expected genl-fuzz to send every request (exit 0), saw exit $rc: $(tail -n 2 "$out" | tr '\n' ' ')"
	fi
}

fuzz_get() {
	# shellcheck disable=SC2086 # $1 is a glob
	awk -v c="$2" -v f="$3" '
		$1 == "cmd" && $2 == c {
			for (i = 3; i < NF; i++) {
				k = $i
				gsub(/[(,]/, "", k)
				if (k == f) {
					v = $(i + 1)
					gsub(/[),]/, "", v)
					n += v
					break
				}
			}
		}
		END { print n + 0 }' $1
}

check_fuzz_ge() {
	check_ge "$1" "$5" "$(fuzz_get "$2" "$3" "$4")"
}

check_fuzz_eq() {
	check_eq "$1" "$5" "$(fuzz_get "$2" "$3" "$4")"
}

check_dmesg_clean() {
	local bad
	# before the first insmod a splat is the bench's (a retried flake)
	bad=$(dmesg | sed -n '/mobio: first insmod/,$p' | grep -E "$FUZZ_SPLAT_RE" | head -n 3)
	if [ -z "$bad" ]; then
		pass "$1"
	else
		fail "$1" "expected no kernel splat in dmesg, saw: $(echo "$bad" | tr '\n' ' ')"
	fi
}
