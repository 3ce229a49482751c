#!/bin/bash
# memprof split and memprof pipeline from the command line: the parts run as a chain, the
# copies per run from their definition (2 x models under copy, 0 under bind), the chain's
# trace saved with its models table and read back by memprof report, the JSON document,
# --connect and usage errors, and both --help pages complete.
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
# the chain's trace: one table of models, read by memprof report
[ "$(jget chain.json 'len(j["meta"]["models"])')" = 3 ] || fail "trace: models table"
expect 0 "$mp" report chain.json
# usage errors
expect 2 "$mp" pipeline mn-1.tflite
expect 2 "$mp" pipeline mn-1.tflite mn-2.tflite --connect 1.nosuch=2.0
has err "no output"
expect 2 "$mp" pipeline mn-1.tflite mn-2.tflite --io sideways
expect 2 "$mp" split zoo:mobilenet_v2 --at 0
expect 2 "$mp" split zoo:mobilenet_v2
for c in pipeline split; do
  expect 0 "$mp" $c --help
  for w in Usage Options "Exit codes" Examples; do has out "$w"; done
done
[ $fails -eq 0 ] && echo "test_pipeline: ok"
exit $((fails > 0))
