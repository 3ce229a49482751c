#!/bin/bash
# memprof split and memprof pipeline from the command line: the parts run as a chain, the
# copies per run from their definition (2 x models under copy, 0 under bind), the chain's
# trace saved with its models table and read back by memprof report, the JSON document,
# --connect and usage errors, an output feeding two models (fan-out: its copies per run and
# per edge, the trace's, all bound under bind, one reader copied), and both --help pages
# complete.
mp=$1
. "$(dirname "$0")/lib.sh"
cd "$tmp" || exit 1
py=python3
jget() { "$py" -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"; }

expect 0 "$mp" split zoo:mobilenet_v2 --at 20 --at 40 -o mn
for p in 1 2 3; do [ -s "mn-$p.tflite" ] || fail "split wrote no mn-$p.tflite"; done
expect 0 "$mp" inspect mn-2.tflite
# the three parts, copy: each model copies its inputs in and its outputs out
expect 0 "$mp" pipeline mn-1.tflite mn-2.tflite mn-3.tflite --runs 2 --json copy.json --trace chain.json
n_links=$(jget copy.json 'sum(1 for e in j["edges"] if e["from"].startswith("model") and e["to"].startswith("model"))')
[ "$(jget copy.json 'j["copies_per_run"]')" = $((2 + 2 * n_links)) ] || fail "copy: copies per run $(jget copy.json 'j["copies_per_run"]'), expected $((2 + 2 * n_links))"
[ "$(jget copy.json 'j["format"]')" = memprof-pipeline ] || fail "JSON format"
# bind: none, every edge bound
expect 0 "$mp" pipeline mn-1.tflite mn-2.tflite mn-3.tflite --io bind --share-arena --runs 2 --json bind.json
[ "$(jget bind.json 'j["copies_per_run"]')" = 0 ] || fail "bind: copies per run"
[ "$(jget bind.json 'all(e["bound"] for e in j["edges"])')" = True ] || fail "bind: an edge not bound"
[ "$(jget bind.json 'j["arena"]["chain_bytes"] <= j["arena"]["separate_bytes"]')" = True ] || fail "shared arena larger than separate"
# one edge copied on request: its two copies, the others none
expect 0 "$mp" pipeline mn-1.tflite mn-2.tflite mn-3.tflite --io bind --io 0=copy --json one.json
[ "$(jget one.json 'j["copies_per_run"]')" = 1 ] || fail "--io 0=copy: copies per run"
# fan-out: cut before 18 and 19, model 2 passes model 1's output 0 (block 5's residual input)
# through to model 3; --connect 1.0=3.0 feeds model 3 from model 1 directly, so model 1's
# output 0 feeds two models (and model 2's passed-through copy feeds nothing)
expect 0 "$mp" split zoo:mobilenet_v2 --at 18 --at 19 -o fan
expect 0 "$mp" pipeline fan-1.tflite fan-2.tflite fan-3.tflite --connect 1.0=3.0 --runs 2 --json fcopy.json
# copy: caller in 1; model 1 output 0 out once + into 2 readers = 3; 1.1->2.1 and 2.1->3.1
# out and in = 4; the chain's output out 1: 9 per run, the fanned output's copy out on edge 1
[ "$(jget fcopy.json 'j["copies_per_run"]')" = 9 ] || fail "fan-out copy: copies per run $(jget fcopy.json 'j["copies_per_run"]'), expected 9"
[ "$(jget fcopy.json '[e["copies_per_run"] for e in j["edges"]]')" = "[1, 2, 2, 1, 2, 1]" ] || fail "fan-out copy: per edge $(jget fcopy.json '[e["copies_per_run"] for e in j["edges"]]')"
# the trace's copy events (per model, in and out) are those copies: 9 x 2 runs
[ "$(jget fcopy.json 'sum(m["copies_in"] + m["copies_out"] for m in j["models"])')" = 18 ] || fail "fan-out copy: trace copies"
has out "once for its 2 readers"
expect 0 "$mp" pipeline fan-1.tflite fan-2.tflite fan-3.tflite --connect 1.0=3.0 --io bind --share-arena --runs 2 --json fbind.json
[ "$(jget fbind.json 'j["copies_per_run"]')" = 0 ] || fail "fan-out bind: copies per run"
[ "$(jget fbind.json 'all(e["bound"] for e in j["edges"])')" = True ] || fail "fan-out bind: an edge not bound"
[ "$(jget fbind.json 'j["arena"]["lower_bound_bytes"] <= j["arena"]["chain_bytes"]')" = True ] || fail "fan-out bind: arena below its lower bound"
# one reader copied on request (edge 3: 1.0->3.0), the other (edge 1) still bound
expect 0 "$mp" pipeline fan-1.tflite fan-2.tflite fan-3.tflite --connect 1.0=3.0 --io bind --io 3=copy --json fone.json
[ "$(jget fone.json '[e["copies_per_run"] for e in j["edges"]]')" = "[0, 0, 0, 1, 0, 0]" ] || fail "fan-out --io 3=copy: per edge"
[ "$(jget fone.json 'j["edges"][1]["bound"]')" = True ] || fail "fan-out --io 3=copy: edge 1 not bound"
# the chain's trace: one table of models, read by memprof report
[ "$(jget chain.json 'len(j["meta"]["models"])')" = 3 ] || fail "trace: models table"
expect 0 "$mp" report chain.json
# usage errors
expect 2 "$mp" pipeline mn-1.tflite
expect 2 "$mp" pipeline mn-1.tflite mn-2.tflite --connect 1.nosuch=2.0
has err "no output"
expect 2 "$mp" pipeline mn-1.tflite mn-2.tflite --io sideways
expect 2 "$mp" pipeline mn-1.tflite mn-2.tflite --connect 0.0=2.0
has err "models are numbered"
expect 2 "$mp" split zoo:mobilenet_v2 --at 0
expect 2 "$mp" split zoo:mobilenet_v2
for c in pipeline split; do
  expect 0 "$mp" $c --help
  for w in Usage Options "Exit codes" Examples; do has out "$w"; done
done
[ $fails -eq 0 ] && echo "test_pipeline: ok"
exit $((fails > 0))
