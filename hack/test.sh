#!/usr/bin/env bash
# make test: every Go test of the module, in a random order (-shuffle=on: a
# failing package prints its seed), with coverage per package
# (_output/cover.out, _output/cover-race.out). The packages whose tests start
# no control plane (hack/race-packages.sh) run under the race detector, in
# the background while the integration packages run: those mostly wait on
# their controllers, so the race build's CPU fits beside them instead of
# adding its minutes after them. The integration packages run
# TEST_PARALLEL at a time (default 6, on the 2 cores CI has): each mostly
# waits on its controllers' polls, so a package takes as long beside five
# others as beside one, and the run is as long as its longest package plus
# the builds (docs/development.md has the figures). -trimpath keeps the
# checkout's path out of the build cache's keys: a fresh clone elsewhere (as
# CI makes) reuses what an earlier one compiled.
set -uo pipefail
cd "$(dirname "$0")/.."
GO="${GO:-go}"
mkdir -p _output
race="$(bash hack/race-packages.sh)" || exit 1
rest="$($GO list ./... | grep -vxF -f <(printf '%s\n' "$race"))"
# shellcheck disable=SC2086 # package lists
$GO test -trimpath -race -count=1 -shuffle=on -timeout 20m -coverprofile=_output/cover-race.out $race >_output/test-race.log 2>&1 &
racepid=$!
# shellcheck disable=SC2086
$GO test -trimpath -p "${TEST_PARALLEL:-6}" -count=1 -shuffle=on -timeout 30m -coverprofile=_output/cover.out $rest
rc=$?
wait "$racepid"
racerc=$?
echo "== under the race detector (hack/race-packages.sh):"
cat _output/test-race.log
(( rc == 0 && racerc == 0 ))
