#!/bin/sh
# Records one run of real Batsim 4.2.1, Batkube's FIFO example deciding,
# into the folder NAME beside this script (see README.md). Run it from the
# repository's root after make build:
#
#   BATSIM=/path/to/batsim pkg/engine/testdata/batsim-4.2.1/record.sh \
#     NAME PLATFORM WORKLOAD [batkube-run options...]
#
# e.g. ... record.sh small_platform.test_delays.events \
#   ../shared/data/batsim-4.2.1/platforms/small_platform.xml \
#   ../shared/data/batsim-4.2.1/workloads/test_delays.json \
#   --events ../shared/data/batsim-4.2.1/events/test_events_4hosts.txt
set -eu
if [ $# -lt 3 ] || [ -z "${BATSIM:-}" ]; then
	echo "usage: BATSIM=/path/to/batsim $0 NAME PLATFORM WORKLOAD [batkube-run options...]" >&2
	exit 2
fi
name=$1 platform=$2 workload=$3
shift 3
here=$(dirname "$0")
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
bin/batkube-run --batsim "$BATSIM" -p "$platform" -w "$workload" -o "$out/run" \
	--scheduler-cmd 'bin/fifo --kubeconfig {kubeconfig}' "$@" >"$out/run.log" 2>&1 || {
	cat "$out/run.log" >&2
	exit 1
}
mkdir -p "$here/$name"
cp "$out/run/_jobs.csv" "$out/run/_schedule.csv" "$out/run/_machine_states.csv" "$here/$name/"
grep -o "Received '.*'" "$out/run/batsim.log" | sed "s/^Received '//; s/'\$//" >"$here/$name/replies.jsonl"
