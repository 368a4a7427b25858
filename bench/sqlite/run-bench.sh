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
			MOBIO_VM_APPEND="$(append 1 "$run" "$OPS" "$model")" \
				python3 tests/vm/run.py test --kver "$KVER" bench/sqlite/sqlite-bench.sh \
				>"$out/run-$run-$model.log" 2>&1 || rc=1
			tail -n 1 "$out/run-$run-$model.log"
			cp "build/vm/$KVER/sqlite-bench/events.txt" "$out/events-$run-$model.txt"
		done
	done
	python3 bench/sqlite/report.py --kver "$KVER" --cmd "$cmd" --events "$out"/events-*.txt \
		--csv "bench/sqlite/results/$(date +%Y%m%d)-$KVER.csv" \
		--md docs/results-sqlite.md --png docs/sqlite-bench.png --workdir "$out" || rc=1
	echo "bench-sqlite: VM logs in $out/; $(($(date +%s) - start)) s in all"
	;;
quick)
	OPS=${OPS:-300}
	out=build/bench-sqlite
	mkdir -p "$out"
	sed -e 's/^# vm-timeout: .*/# vm-timeout: 900/' bench/sqlite/sqlite-bench.sh \
		>"$out/sqlite-bench-quick.sh"
	MOBIO_VM_APPEND="$(append 1 1 "$OPS" flash)" \
		python3 tests/vm/run.py test --kver "$KVER" "$out/sqlite-bench-quick.sh" || rc=1
	python3 bench/sqlite/report.py --kver "$KVER" \
		--cmd "make bench-sqlite-quick KVER=$KVER" \
		--events "build/vm/$KVER/sqlite-bench-quick/events.txt" \
		--csv "$out/quick.csv" --workdir "$out" || rc=1
	;;
*)
	echo "usage: $0 full|quick" >&2
	exit 2
	;;
esac
exit $rc
