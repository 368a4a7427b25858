#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Host side of the SQLite benchmark: boots the VM (tests/vm/run.py) with
# bench/sqlite/sqlite-bench.sh, once per run and device model, then turns the
# guests' notes into the CSV, the markdown table and the chart
# (bench/sqlite/report.py). make bench-sqlite / bench-sqlite-quick call it.
#
#   bench/sqlite/run-bench.sh full    RUNS runs of OPS operations per case, on
#                                     each model of MODELS (MODEL:N: N runs of
#                                     that one); one boot per (run, model), so
#                                     that the machine-wide VM lock is never
#                                     held for hours; writes
#                                     bench/sqlite/results/<date>-<kver>.csv,
#                                     docs/results-sqlite.md, docs/sqlite-bench.png
#   bench/sqlite/run-bench.sh quick   one boot, one run of OPS (300) operations
#                                     per case, flash-like model; prints the
#                                     table, writes build/bench-sqlite/ only
#
# Environment: KVER (required), RUNS (10), OPS (1000), MODELS
# (virtio,flash,flash-w0:3),
# MODES (all), WRITE_MS (1), FLUSH_MS (5), MOBIO_VM_APPEND (more).
set -u
cd "$(dirname "$0")/../.." || exit 1

what=${1:-full}
: "${KVER:?KVER must name the guest kernel}"
RUNS=${RUNS:-10}
MODELS=${MODELS:-virtio,flash,flash-w0:3}
MODES=${MODES:-}
WRITE_MS=${WRITE_MS:-1}
FLUSH_MS=${FLUSH_MS:-5}
EXTRA=${MOBIO_VM_APPEND:-}

# vmrun OUT_EVENTS SCRIPT APPEND: one boot; retried (twice) when it did not
# finish with every CSV row, e.g. when the run was killed from outside
vmrun() {
	local events=$1 script=$2 app=$3 name try rows
	name=$(basename "$script" .sh)
	for try in 1 2 3; do
		MOBIO_VM_APPEND="$app" python3 tests/vm/run.py test --kver "$KVER" "$script" \
			>"$events.log" 2>&1
		cp "build/vm/$KVER/$name/events.txt" "$events" 2>/dev/null || : >"$events"
		rows=$(grep -c 'MOBIO NOTE CSV,' "$events")
		grep -q 'MOBIO FINISH' "$events" && [ "$rows" -gt 0 ] &&
			! grep -q '^FAIL' "$events.log" && return 0
		echo "bench-sqlite: $name: $rows rows, no clean finish (try $try): $(tail -n 1 "$events.log")"
	done
	return 1
}

append() { # RUNS FIRST OPS MODELS
	echo "sqlbench.runs=$1 sqlbench.first=$2 sqlbench.ops=$3 sqlbench.models=$4" \
		"sqlbench.write_ms=$WRITE_MS sqlbench.flush_ms=$FLUSH_MS" \
		"${MODES:+sqlbench.modes=$MODES} $EXTRA"
}

rc=0
case $what in
full)
	OPS=${OPS:-1000}
	out=build/bench-sqlite/full-$KVER
	rm -rf "$out"
	mkdir -p "$out"
	cmd="make bench-sqlite KVER=$KVER SQLBENCH_RUNS=$RUNS SQLBENCH_OPS=$OPS SQLBENCH_MODELS=$MODELS SQLBENCH_WRITE_MS=$WRITE_MS SQLBENCH_FLUSH_MS=$FLUSH_MS${MODES:+ SQLBENCH_MODES=$MODES}"
	echo "bench-sqlite: $cmd"
	echo "bench-sqlite: kernel $KVER; models $MODELS (MODEL:N = N runs); $RUNS runs x 6 cases x $OPS transactions"
	start=$(date +%s)
	for run in $(seq 1 "$RUNS"); do
		for m in ${MODELS//,/ }; do
			model=${m%%:*}
			[ "$model" != "$m" ] && [ "$run" -gt "${m#*:}" ] && continue
			echo "bench-sqlite: run $run/$RUNS, model $model ($(($(date +%s) - start)) s so far)"
			vmrun "$out/events-$run-$model.txt" bench/sqlite/sqlite-bench.sh \
				"$(append 1 "$run" "$OPS" "$model")" || rc=1
			tail -n 1 "$out/events-$run-$model.txt.log"
		done
	done
	python3 bench/sqlite/report.py --kver "$KVER" --cmd "$cmd" --events "$out"/events-*.txt \
		--csv "bench/sqlite/results/$(date +%Y%m%d)-$KVER.csv" \
		--md docs/results-sqlite.md --png docs/sqlite-bench.png --workdir "$out" \
		--notes bench/sqlite/notes.md || rc=1
	echo "bench-sqlite: VM logs in $out/; $(($(date +%s) - start)) s in all"
	;;
quick)
	OPS=${OPS:-300}
	out=build/bench-sqlite
	mkdir -p "$out"
	echo "bench-sqlite: short form on kernel $KVER: flash-like model (ext4 on dm-delay," \
		"write ${WRITE_MS} ms, flush ${FLUSH_MS} ms), $OPS transactions per case and mode," \
		"one VM boot (about 3 minutes on 2 cores)"
	sed -e 's/^# vm-timeout: .*/# vm-timeout: 900/' bench/sqlite/sqlite-bench.sh \
		>"$out/sqlite-bench-quick.sh"
	vmrun "$out/quick-events.txt" "$out/sqlite-bench-quick.sh" "$(append 1 1 "$OPS" flash)" || rc=1
	grep -E '^(PASS|FAIL) ' "$out/quick-events.txt.log"
	python3 bench/sqlite/report.py --kver "$KVER" \
		--cmd "make bench-sqlite-quick KVER=$KVER" \
		--events "$out/quick-events.txt" \
		--csv "$out/quick.csv" --workdir "$out" || rc=1
	;;
*)
	echo "usage: $0 full|quick" >&2
	exit 2
	;;
esac
exit $rc
