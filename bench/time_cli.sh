#!/bin/bash
# Whole-process CPU time (user + system) of a command on AD3's example
# graphs: for each file, the median over REPEATS runs (process start,
# reading, solving and writing posteriors included), with the command's
# exit status. CPU time rather than wall time: both solvers are
# single-threaded, and on shared machines wall time measures the neighbours.
# The command is started by build/cpu_time (bench/cpu_time.c; CPU_TIME
# overrides the path), so only its own process is counted, to the
# microsecond; the command is split into words at blanks (no quoting).
#
#   bench/time_cli.sh [REPEATS] [COMMAND]
#
# COMMAND is a shell command in which {} stands for the graph file; the
# default is concord's own CLI:
#   build/concord solve {} -o /dev/null
# Any other solver that reads .fg files can be timed the same way, for a
# side-by-side comparison in one session. DATA (default ../shared/data)
# locates the graphs.
set -euo pipefail
repeats=${1:-5}
command=${2:-"build/concord solve {} -o /dev/null"}
data=${DATA:-../shared/data}
files=(mln_large.fg coref.fg srl_fract_001.fg srl_fract_002.fg srl_fract_003.fg
       srl_fract_004.fg srl_fract_005.fg parsing_excerpt.fg parsing01.fg parsing02.fg
       sequence.fg sequence_budget.fg general_tree.fg general_tree_counts.fg)

timer=${CPU_TIME:-build/cpu_time}
printf '%-24s %12s %s\n' graph "median CPU s" exit
for file in "${files[@]}"; do
    path="$data/ad3/$file"
    run=${command//\{\}/$path}
    times=()
    status=0
    for ((r = 0; r < repeats; ++r)); do
        read -r -a words <<<"$run"
        read -r cpu code < <("$timer" "${words[@]}")
        ((code == 0)) || status=$code
        times+=("$cpu")
    done
    median=$(printf '%s\n' "${times[@]}" | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}')
    printf '%-24s %12.4f %d\n' "$file" "$median" "$status"
done
