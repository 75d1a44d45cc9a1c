#!/usr/bin/env bash
# Resident memory and idle CPU of a running lab, measured from /proc for every
# process `lab status` lists (control plane and member processes).
#   scripts/lab-footprint.sh [SECONDS]   (default 60: the CPU sampling window)
# Prints one line per process and the totals; CPU is the average share of one
# core over the window.
set -o errexit -o nounset -o pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
window="${1:-60}"
lab="_output/bin/lab"
[[ -x "${lab}" ]] || go build -o "${lab}" ./lab/cmd/lab
mapfile -t rows < <("${lab}" status 2>/dev/null | awk 'NR>1 && $2 ~ /^[0-9]+$/ {print $1" "$2}')
[[ ${#rows[@]} -gt 0 ]] || { echo "the lab is not up (make lab-up)" >&2; exit 1; }
hz="$(getconf CLK_TCK)"
ticks() { awk '{print $14+$15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
declare -A before
for r in "${rows[@]}"; do pid="${r##* }"; before[${pid}]="$(ticks "${pid}")"; done
sleep "${window}"
total_rss=0 total_ticks=0
printf '%-34s %8s %10s %8s\n' PROCESS PID RSS_MiB CPU_%
for r in "${rows[@]}"; do
  name="${r% *}" pid="${r##* }"
  rss="$(awk '/^VmRSS:/ {print $2}' "/proc/${pid}/status" 2>/dev/null || echo 0)"
  d=$(( $(ticks "${pid}") - ${before[${pid}]} ))
  total_rss=$((total_rss + rss)) total_ticks=$((total_ticks + d))
  awk -v n="${name}" -v p="${pid}" -v r="${rss}" -v d="${d}" -v hz="${hz}" -v w="${window}" \
    'BEGIN {printf "%-34s %8s %10.0f %8.1f\n", n, p, r/1024, 100*d/hz/w}'
done
awk -v r="${total_rss}" -v d="${total_ticks}" -v hz="${hz}" -v w="${window}" -v n="${#rows[@]}" \
  'BEGIN {printf "TOTAL %d processes: RSS %.0f MiB, idle CPU %.1f%% of one core over %ds\n", n, r/1024, 100*d/hz/w, w}'
