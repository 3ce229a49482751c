#!/usr/bin/env bash
# memprof scenarios --memory all --plan-at both (issue 19, items 4-6): one table of the call
# orders A-E in static, dynamic and auto modes, each planning mode at prepare and at the first
# run, interleaved case by case. The plans made and reused, the arenas made and those freed
# unused are checked against counts derived here from the definition of each call order and
# policy (never copied from the program's output); the run after a shape change counts its
# new arena with --io copy exactly as with --io bind; text fits 80 columns; bad values exit 2.
# Usage: test_scenarios_modes.sh MEMPROF SHARED_DIR
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../util/need.sh"
mp=$1
py=/usr/bin/python3
mp_need python3 "$(basename "$0")" test -x "$py"

# zoo:mobilenet_v2_dynamic: signature [1,-1,-1,3], 224x224 in the file (F); S1 32x32, S2 48x48
m=zoo:mobilenet_v2_dynamic
w=1; r=2; T=$((1 + w + r)) # runs per case
expect 0 "$mp" scenarios $m --shape input=1,32,32,3 --shape input=1,48,48,3 -r $r -w $w \
  --memory all --plan-at both --format json -o "$tmp/s.json"
out=$("$py" - "$tmp/s.json" "$T" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1])); T = int(sys.argv[2])
bad = []
def need(c, what):
    if not c: bad.append(what)
need(j['format'] == 'memprof-scenarios' and j['version'] == 3, 'format/version')
need(j['mode'] == 'all' and j['plan_at'] == 'both', 'mode %s plan_at %s' % (j['mode'], j['plan_at']))
variants = [('static', 'prepare'), ('static', 'first-run'), ('dynamic', None),
            ('auto', 'prepare'), ('auto', 'first-run')]
rows = [(c['case'], c['mode'], c['plan_at']) for c in j['cases']]
need(rows == [(k, m, p) for k in 'ABCDE' for (m, p) in variants], 'rows: %s' % rows)
# What each call order must plan, from its definition. F is planned only at prepare; C and E
# change the shape once after prepare; D before every run, alternating S1 and S2. Static
# mode plans every time the arena must change; auto mode reuses the plan of shapes seen.
def expected(case, mode, plan):
    if mode == 'dynamic':
        return dict(plans_made=0, plans_reused=0, arenas_made=0, arenas_unused=0)
    first = plan == 'first-run'
    if case in 'AB':
        return dict(plans_made=1, plans_reused=0, arenas_made=1, arenas_unused=0)
    if case in 'CE':   # prepare: the old shapes' arena, freed before any run used it
        n = 1 if first else 2
        return dict(plans_made=n, plans_reused=0, arenas_made=n, arenas_unused=0 if first else 1)
    # D: an arena per run (the shape changes before each), plus F's at prepare
    arenas = T if first else T + 1
    if mode == 'static':
        return dict(plans_made=arenas, plans_reused=0, arenas_made=arenas,
                    arenas_unused=0 if first else 1)
    made = 2 if first else 3  # the distinct shapes planned: S1, S2 (and F)
    return dict(plans_made=made, plans_reused=arenas - made, arenas_made=arenas,
                arenas_unused=0 if first else 1)
for c in j['cases']:
    tag = '%s %s/%s' % (c['case'], c['mode'], c['plan_at'])
    for k, v in expected(c['case'], c['mode'], c['plan_at']).items():
        need(c[k] == v, '%s: %s %s, expected %s' % (tag, k, c[k], v))
    need(c['dup_bytes'] == 0 and c['flags'] == [], tag + ': flagged or duplicated')
    need(c['runs'] == T, '%s: %d runs' % (tag, c['runs']))
    need(isinstance(c['first_run_ns'], int) and c['first_run_ns'] > 0, tag + ': first_run_ns')
    if c['mode'] == 'dynamic':
        need(c['static_bytes'] == 0 and c['later_run_allocations_max'] > 0, tag + ': dynamic')
    else:
        need(c['static_bytes'] > 0, tag + ': no arena')
        # a later run allocates exactly when the call order changes shapes before it (D)
        need((c['later_run_allocations_max'] > 0) == (c['case'] == 'D'),
             '%s: later runs allocate %d' % (tag, c['later_run_allocations_max']))
# the arena planned at the first run is the runs' own: never more static bytes than at prepare
P = {(c['case'], c['mode'], c['plan_at']): c for c in j['cases']}
for k in 'ABCDE':
    for mode in ('static', 'auto'):
        need(P[(k, mode, 'first-run')]['static_bytes'] <= P[(k, mode, 'prepare')]['static_bytes'],
             '%s %s: first-run holds more static bytes' % (k, mode))
print('; '.join(bad))
EOF
)
[ -z "$out" ] || fail "scenarios --memory all --plan-at both: $out"

# the text: both tables with every row, within 80 columns
expect 0 "$mp" scenarios $m --shape input=1,32,32,3 --shape input=1,48,48,3 -r 1 -w 0 \
  --memory all --plan-at both
n=$(grep -cE '^[A-E] +(static|dynamic|auto) ' "$tmp/out")
[ "$n" -eq 50 ] || fail "text: $n rows, expected 2 tables x 25"
wide=$(awk 'length($0) > 80' "$tmp/out")
[ -z "$wide" ] || fail "text wider than 80 columns: $(echo "$wide" | head -2)"
grep -q '\.\.\.$' "$tmp/out" && fail "text has a line cut short"
has out "flagged: none"
# one mode alone: five rows per table
expect 0 "$mp" scenarios $m --shape input=1,32,32,3 -r 1 -w 0 --memory static
n=$(grep -cE '^[A-E] +static +prepare ' "$tmp/out")
[ "$n" -eq 10 ] || fail "--memory static: $n rows, expected 10"

# --io copy and --io bind count a shape change's new arena alike, in the run it serves
# (call order D, static mode: every run after the first changes the shape)
allocs() { grep -A1 '^Allocations per run' "$tmp/out" | tail -1; }
expect 0 "$mp" run $m --memory static --shape input=1,32,32,3 --shape input=1,48,48,3 \
  --shape-at each-run --runs 4 --io copy
copy=$(allocs)
expect 0 "$mp" run $m --memory static --shape input=1,32,32,3 --shape input=1,48,48,3 \
  --shape-at each-run --runs 4 --io bind
bind=$(allocs)
[ "$copy" = "$bind" ] || fail "D, static: --io copy counts '$copy', --io bind '$bind'"
echo "$copy" | grep -Eq 'allocations +[1-9][0-9]* +[1-9][0-9]*$' ||
  fail "D, static: a run after a shape change allocates nothing: '$copy'"

# bad values
expect 2 "$mp" scenarios $m --shape input=1,32,32,3 --plan-at later; has err "\-\-plan-at"
expect 2 "$mp" scenarios $m --shape input=1,32,32,3 --memory most; has err "\-\-memory"
expect 2 "$mp" run $m --plan-at never; has err "\-\-plan-at"
expect 2 "$mp" bench $m --plan-at never; has err "\-\-plan-at"
exit $((fails ? 1 : 0))
