#!/usr/bin/env bash
# kill-loop.sh: SIGKILL a run on a flaky provider at random moments, resume
# it, and check it ends as the uninterrupted run did (issue 22, point 14;
# docs/resume.md "Resume under faults").
#
#   scripts/kill-loop.sh [MISSION]
#
# Environment (all optional):
#   SWARM   the swarm binary (default: built from this checkout into a temp dir)
#   SCALE   the scale (default ss-250)
#   FAULTS  the share of calls that fail, 0..1 (default 0.30), split over the
#           mock's fault classes in the proportions of examples/mock/faults-20.yaml
#   KILLS   how many SIGKILLs (default 20)
#   MODE    trials: KILLS runs, each killed once at a random moment and then
#                   resumed to its end (default);
#           chain:  one run, killed KILLS times (the run, then each resume, at a
#                   random moment), then resumed to its end
#   SEED    the run's seed and the kill moments' seed (default 7)
#   LATENCY the mock's latency per call (default 5ms)
#   WORK    where the runs go (default: a temp dir, kept)
#
# It runs the mission once uninterrupted, then the kills, and prints one line
# per resume and the summary
#   N of KILLS resumes finished; sealed hash equal: yes/no
# A resume "finished" when it ended with the uninterrupted run's status (chain:
# or was still running when it was killed). Exit 0 when all did and every
# sealed hash is the uninterrupted run's, 1 otherwise.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
mission=${1:-$here/examples/missions/auth-migration.md}
scale=${SCALE:-ss-250}
faults=${FAULTS:-0.30}
kills=${KILLS:-20}
mode=${MODE:-trials}
seed=${SEED:-7}
latency=${LATENCY:-5ms}
work=${WORK:-$(mktemp -d "${TMPDIR:-/tmp}/kill-loop.XXXXXX")}
mkdir -p "$work"
RANDOM=$seed

if [[ -z ${SWARM:-} ]]; then
	SWARM=$work/swarm
	(cd "$here" && go build -o "$SWARM" ./cmd/swarm)
fi
case $mode in trials | chain) ;; *)
	echo "kill-loop.sh: MODE=$mode: want trials or chain" >&2
	exit 2
	;;
esac

# The fault file: FAULTS split as in faults-20.yaml (5/5/2/3/3/2 of 20).
awk -v f="$faults" 'BEGIN {
	if (f < 0 || f > 1) { print "kill-loop.sh: FAULTS=" f ": want 0..1" > "/dev/stderr"; exit 2 }
	printf "rate_limit: %.4f\nretry_after: 20ms\nserver_error: %.4f\ntimeout: %.4f\n", f*5/20, f*5/20, f*2/20
	printf "malformed_json: %.4f\nschema_invalid_json: %.4f\ntruncated: %.4f\n", f*3/20, f*3/20, f*2/20
}' >"$work/faults.yaml"
cat >"$work/config.yml" <<EOF
run:
  seed: $seed
providers:
  mock:
    options: {faults: $work/faults.yaml, latency: $latency}
EOF

field() { # field NAME FILE: a top-level string field of a JSON file
	sed -n "s/^  \"$1\": \"\\([^\"]*\\)\".*/\\1/p" "$2" 2>/dev/null | head -n 1
}
now_ms() { date +%s%3N; }

echo "kill-loop: $mission at $scale, ${faults} faults, $kills kills ($mode), seed $seed; runs in $work"

# The uninterrupted run: its sealed hash, status and wall time.
t0=$(now_ms)
"$SWARM" --config "$work/config.yml" run "$mission" --scale "$scale" --out "$work/full" -q >/dev/null 2>"$work/full.err" || true
wall=$(($(now_ms) - t0))
want_hash=$(field sealed_hash "$work/full/result.json")
want_status=$(field status "$work/full/result.json")
if [[ -z $want_hash ]]; then
	echo "the uninterrupted run sealed nothing (status ${want_status:-none}):" >&2
	cat "$work/full.err" >&2
	exit 1
fi
echo "uninterrupted: $want_status, sealed $want_hash, ${wall} ms"

# pause: a random moment within the uninterrupted run (5%..95% of its time).
pause() {
	local ms=$((wall * 5 / 100 + RANDOM % (wall * 90 / 100 + 1)))
	sleep "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
}

# killed PID: SIGKILL PID after a random pause; sets how to "killed" or,
# when it ended first, "exit N".
killed() {
	local pid=$1 rc=0
	pause
	if kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null; then
		wait "$pid" 2>/dev/null || true
		how=killed
		return
	fi
	wait "$pid" 2>/dev/null || rc=$?
	how="exit $rc"
}

ok=0 equal=yes
verdict() { # verdict N DIR RC: one resume's line; counts it
	local n=$1 dir=$2 rc=$3 st h
	st=$(field status "$dir/result.json")
	h=$(field sealed_hash "$dir/result.json")
	if [[ $st == "$want_status" ]]; then
		ok=$((ok + 1))
	fi
	if [[ $h != "$want_hash" ]]; then
		equal=no
	fi
	printf 'resume %2d: exit %s, status %s, sealed %s\n' "$n" "$rc" "${st:-none}" "${h:-none}"
}

if [[ $mode == trials ]]; then
	for ((i = 1; i <= kills; i++)); do
		dir=$work/trial-$i
		while :; do
			rm -rf "$dir"
			"$SWARM" --config "$work/config.yml" run "$mission" --scale "$scale" --out "$dir" -q >/dev/null 2>&1 &
			killed $!
			# Killed before the run wrote its manifest: nothing to resume, draw again.
			[[ -f $dir/run.json ]] && break
		done
		rc=0
		"$SWARM" --config "$work/config.yml" run --resume "$dir" -q >/dev/null 2>"$dir.resume.err" || rc=$?
		verdict "$i" "$dir" "$rc ($how)"
	done
else
	dir=$work/chain
	while :; do
		rm -rf "$dir"
		"$SWARM" --config "$work/config.yml" run "$mission" --scale "$scale" --out "$dir" -q >/dev/null 2>&1 &
		killed $!
		[[ -f $dir/run.json ]] && break
	done
	for ((i = 1; i <= kills; i++)); do
		"$SWARM" --config "$work/config.yml" run --resume "$dir" -q >/dev/null 2>"$work/resume-$i.err" &
		pid=$!
		if ((i < kills)); then
			killed "$pid"
		else
			rc=0
			wait "$pid" || rc=$?
			how="exit $rc"
		fi
		case $how in
		killed)
			ok=$((ok + 1))
			printf 'resume %2d: killed while running\n' "$i"
			;;
		"exit 0") # it finished before its kill; the rest are no-ops
			verdict "$i" "$dir" "0"
			if [[ $(field status "$dir/result.json") != "$want_status" ]]; then
				break
			fi
			;;
		*)
			verdict "$i" "$dir" "${how#exit }"
			;;
		esac
	done
	if [[ $(field sealed_hash "$dir/result.json") != "$want_hash" ]]; then
		equal=no
	fi
fi

echo "$ok of $kills resumes finished; sealed hash equal: $equal"
[[ $ok == "$kills" && $equal == yes ]]
