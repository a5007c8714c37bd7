#!/usr/bin/env bash
# A Kubernetes scheduler in bash and kubectl, as the classic bashScheduler:
# list the pending pods that name this scheduler, pick for each the first
# node (in name order) with room for its cpu and memory requests, and post
# a Binding. Then tell Batkube it is idle and wait for the next change (the
# idle signal, POST /batkube/v1/idle), so that simulated time moves on the
# moment it is done.
#
#   bin/batkube-run -p PLATFORM -w WORKLOAD --scheduler-cmd examples/schedulers/shell/scheduler.sh \
#       --server-arg=--settle=signal
#
# Environment: KUBECONFIG (set by batkube-run), KUBECTL (default: bin/kubectl
# of this repository if built, else kubectl on PATH), SCHEDULER_NAME
# (default default-scheduler). Requests are read from each pod's first
# container; nodes marked unschedulable are skipped.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
default_kubectl="$here/../../../bin/kubectl"
[ -x "$default_kubectl" ] || default_kubectl=kubectl
KUBECTL=${KUBECTL:-$default_kubectl}
name=${SCHEDULER_NAME:-default-scheduler}

k() { "$KUBECTL" "$@"; }

# tabulate: one awk pass over the listing below that prints, with cpu in
# millicores and memory in bytes,
#   N|node|cpu|memory            a schedulable node's allocatable,
#   B|node|cpu|memory            a live pod bound to it (its requests),
#   P|created|ns|pod|cpu|memory  a pending pod of this scheduler.
tabulate() {
  awk -F'|' -v OFS='|' -v name="$name" '
    function milli(q) { if (q == "") return 0; if (q ~ /m$/) { sub(/m$/, "", q); return int(q) } return int(q * 1000 + 0.5) }
    function bytes(q,    n, i, l, suf, mul) {
      if (q == "") return 0
      n = split("Ki Mi Gi Ti Pi Ei k M G T P E", suf, " ")
      split("1024 1048576 1073741824 1099511627776 1125899906842624 1152921504606846976 1e3 1e6 1e9 1e12 1e15 1e18", mul, " ")
      for (i = 1; i <= n; i++) {
        l = length(suf[i])
        if (substr(q, length(q) - l + 1) == suf[i] && (l == 2 || substr(q, length(q) - 1, 1) ~ /[0-9.]/))
          return sprintf("%.0f", substr(q, 1, length(q) - l) * mul[i])
      }
      return sprintf("%.0f", q)
    }
    # kind|name|unschedulable|alloc cpu|alloc memory|created|ns|schedulerName|nodeName|deleting|req cpu|req memory|phase
    $1 == "Node" && $3 != "true" { print "N", $2, milli($4), bytes($5) }
    $1 == "Pod" && $13 != "Succeeded" && $13 != "Failed" {
      if ($9 != "") print "B", $9, milli($11), bytes($12)
      else if ($8 == name && $10 == "") print "P", $6, $7, $2, milli($11), bytes($12)
    }'
}

# seen: every change of pods and nodes up to this resourceVersion is in
# the lists below. It is the one the server's last idle answer gave (the
# lists are read after it); kubectl's own lists print none, since it
# gathers their items into a List of its own.
seen=0
while true; do
  # One list of nodes and pods (one kubectl start-up), tabulated.
  table=$(k get nodes,pods --all-namespaces -o jsonpath='{range .items[*]}{.kind}|{.metadata.name}|{.spec.unschedulable}|{.status.allocatable.cpu}|{.status.allocatable.memory}|{.metadata.creationTimestamp}|{.metadata.namespace}|{.spec.schedulerName}|{.spec.nodeName}|{.metadata.deletionTimestamp}|{.spec.containers[0].resources.requests.cpu}|{.spec.containers[0].resources.requests.memory}|{.status.phase}{"\n"}{end}' | tabulate)

  # Free room per schedulable node, in name order (node2 before node10).
  declare -A cpu=() mem=()
  order=()
  while IFS='|' read -r _ node c m; do
    cpu[$node]=$c; mem[$node]=$m; order+=("$node")
  done < <(grep '^N|' <<<"$table" | sort -t'|' -k2,2V || true)
  while IFS='|' read -r _ node c m; do
    if [ -n "${cpu[$node]+x}" ]; then
      cpu[$node]=$(( cpu[$node] - c )); mem[$node]=$(( mem[$node] - m ))
    fi
  done < <(grep '^B|' <<<"$table" || true)

  # First come, first served: creation instant, then name.
  while IFS='|' read -r _ _ ns pod c m; do
    for node in "${order[@]}"; do
      if (( cpu[$node] >= c && mem[$node] >= m )); then
        printf '{"apiVersion":"v1","kind":"Binding","metadata":{"name":"%s"},"target":{"apiVersion":"v1","kind":"Node","name":"%s"}}' "$pod" "$node" |
          k create --raw "/api/v1/namespaces/$ns/pods/$pod/binding" -f - >/dev/null
        cpu[$node]=$(( cpu[$node] - c )); mem[$node]=$(( mem[$node] - m ))
        break
      fi
    done
  done < <(grep '^P|' <<<"$table" | sort -t'|' -k2,2 -k4,4V || true)
  unset cpu mem

  # Idle, having seen everything up to $seen: the answer comes at once if
  # something newer happened (our own bindings included), else when the
  # next change comes, or when the simulation ends.
  answer=$(printf '{"scheduler":"shell","resourceVersion":"%s","wait":true}' "$seen" |
    k create --raw /batkube/v1/idle -f -) || exit 0 # the server is gone: the run is over
  case $answer in *'"ended":true'*) exit 0 ;; esac
  seen=$(sed -n 's/.*"resourceVersion": *"\([0-9]*\)".*/\1/p' <<<"$answer")
  [ -n "$seen" ] || { echo "shell scheduler: no resourceVersion in the idle answer: $answer" >&2; exit 1; }
done
