#!/bin/bash
# Whole-process CPU time (user + system) of one or more commands on AD3's
# example graphs: for each file, the median over REPEATS runs of each
# command (process start, reading, solving and writing posteriors
# included), with its exit status. CPU time rather than wall time: the
# solvers are single-threaded, and on shared machines wall time measures
# the neighbours. Given several commands, each repetition runs them one
# after the other on the same file, so a busy spell of the machine weighs
# on all of them alike, and the last column is the second command's time
# over the first's (how many times faster the first is).
#
#   bench/time_cli.sh [REPEATS] [COMMAND...]
#
# A COMMAND is a string in which {} stands for the graph file; the default
# is concord's own CLI:
#   build/concord solve {} -o /dev/null
# Commands are started by build/cpu_time (bench/cpu_time.c; CPU_TIME
# overrides the path), so only the command's own process is counted, to the
# microsecond; a command is split into words at blanks (no quoting). DATA
# (default ../shared/data) locates the graphs.
set -euo pipefail
repeats=${1:-5}
shift || true
commands=("$@")
((${#commands[@]} > 0)) || commands=("build/concord solve {} -o /dev/null")
data=${DATA:-../shared/data}
timer=${CPU_TIME:-build/cpu_time}
files=(mln_large.fg coref.fg srl_fract_001.fg srl_fract_002.fg srl_fract_003.fg
       srl_fract_004.fg srl_fract_005.fg parsing_excerpt.fg parsing01.fg parsing02.fg
       sequence.fg sequence_budget.fg general_tree.fg general_tree_counts.fg)

median() { sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

header=$(printf '%-24s' graph)
for ((c = 0; c < ${#commands[@]}; ++c)); do header+=$(printf ' %10s %4s' "cmd$((c + 1)) s" exit); done
((${#commands[@]} < 2)) || header+=$(printf ' %9s' "cmd2/cmd1")
echo "$header"
for ((c = 0; c < ${#commands[@]}; ++c)); do echo "# cmd$((c + 1)): ${commands[c]}"; done
for file in "${files[@]}"; do
    path="$data/ad3/$file"
    declare -a times=() status=()
    for ((c = 0; c < ${#commands[@]}; ++c)); do times[c]=""; status[c]=0; done
    for ((r = 0; r < repeats; ++r)); do
        for ((c = 0; c < ${#commands[@]}; ++c)); do
            read -r -a words <<<"${commands[c]//\{\}/$path}"
            read -r cpu code < <("$timer" "${words[@]}")
            ((code == 0)) || status[c]=$code
            times[c]+="$cpu "
        done
    done
    line=$(printf '%-24s' "$file")
    medians=()
    for ((c = 0; c < ${#commands[@]}; ++c)); do
        medians[c]=$(tr ' ' '\n' <<<"${times[c]}" | grep . | median)
        line+=$(printf ' %10.4f %4d' "${medians[c]}" "${status[c]}")
    done
    ((${#commands[@]} < 2)) || line+=$(awk -v a="${medians[0]}" -v b="${medians[1]}" \
        'BEGIN {printf " %9.2f", (a > 0 ? b / a : 0)}')
    echo "$line"
done
