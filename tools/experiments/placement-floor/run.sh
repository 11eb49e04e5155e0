#!/bin/bash
# run.sh BENCH_DIR - the placement forecasts of README.md on a bench-vm
# directory's witness traces (tools/bench-vm -o BENCH_DIR).
#
# Builds a scratch copy of this tree with forecast.patch (pathregen --hits
# --replan under PT_* switches) in /tmp/pt-floor and prints one line per
# (switches, trace): the summary line of pathregen --hits --replan.
set -eu
top=$(cd "$(dirname "$0")/../../.." && pwd)
dir=${1:?usage: run.sh BENCH_DIR}
src=/tmp/pt-floor
rm -rf "$src" "$src.build"
mkdir -p "$src"
git -C "$top" archive HEAD | tar -x -C "$src"
patch -s -d "$src" -p1 < "$top/tools/experiments/placement-floor/forecast.patch"
make -s -C "$src" -j2 O="$src.build" all >/dev/null
pr=$src.build/pathregen
for sw in "" PT_EXPLICIT=1 PT_KEYS_FIXED=1 PT_MERGE_ENTER=1 PT_FRAMED_FREE=1 \
	  "PT_EXPLICIT=1 PT_KEYS_FIXED=1" \
	  "PT_EXPLICIT=1 PT_KEYS_FIXED=1 PT_MERGE_ENTER=1 PT_FRAMED_FREE=1"; do
	for t in "witness heuristic --calls-framed" "witness-profiled profile --calls-framed" \
		 "witness-profiled profile --calls-quiet"; do
		set -- $t
		[ -s "$dir/$1.bin" ] || continue
		line=$(env $sw "$pr" "$dir/$1.bin" --hits --replan "$2" "$3" 2>/dev/null | tail -n 1)
		printf '%-60s %-17s %-14s %s\n' "${sw:-(as enable plans)}" "$1" "$3" \
			"$(echo "$line" | tr ' ' '\n' | grep -E '^(sites|hits_per_block|enter_per_block)=' | tr '\n' ' ')"
	done
done
for sw in "" PT_KEYS_FIXED=1; do
	for q in "" --calls-quiet; do
		[ -s "$dir/paths.bin" ] || break
		line=$(env $sw "$pr" "$dir/paths.bin" --hits --replan heuristic $q 2>/dev/null | tail -n 1)
		printf '%-60s %-17s %-14s %s\n' "${sw:-(as enable plans)}" paths "${q:--}" \
			"$(echo "$line" | tr ' ' '\n' | grep -E '^(sites|hits_per_block|enter_per_block)=' | tr '\n' ' ')"
	done
done
for sw in "" PT_OPEN_TREE=1; do
	[ -s "$dir/edges.bin" ] || break
	line=$(env $sw "$pr" "$dir/edges.bin" --hits --replan heuristic 2>/dev/null | tail -n 1)
	printf '%-60s %-17s %-14s %s\n' "${sw:-(as enable plans)}" edges - \
		"$(echo "$line" | tr ' ' '\n' | grep -E '^(sites|hits_per_block)=' | tr '\n' ' ')"
done
