#!/bin/bash
# memprof split and memprof pipeline from the command line: the parts run as a chain, the
# copies per run from their definition (2 x models under copy, 0 under bind), the chain's
# trace saved with its models table and read back by memprof report, the JSON document,
# --connect and usage errors, an output feeding two models (fan-out: its copies per run and
# per edge, the trace's, all bound under bind, one reader copied), a tensor passed through a
# middle part to the last, a later model's input fed by the caller (a chain input: --fill,
# --input and --shape K.NAME, the default values, --chain-input, the outputs by hand, copies
# and bindings, the JSON valid) and its refusals, and both --help pages complete.
mp=$1
. "$(dirname "$0")/lib.sh"
gen=$(dirname "$mp")/gen_model
cd "$tmp" || exit 1
py=python3
jget() { "$py" -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"; }
# f32 FILE: the float32 values of a raw file, as Python prints them
f32() { "$py" -c "import struct,sys; d=open(sys.argv[1],'rb').read(); print(' '.join(str(v) for v in struct.unpack('<%df' % (len(d) // 4), d)))" "$1"; }

expect 0 "$mp" split zoo:mobilenet_v2 --at 20 --at 40 -o mn
for p in 1 2 3; do [ -s "mn-$p.tflite" ] || fail "split wrote no mn-$p.tflite"; done
expect 0 "$mp" inspect mn-2.tflite
# the three parts, copy: each model copies its inputs in and its outputs out
expect 0 "$mp" pipeline mn-1.tflite mn-2.tflite mn-3.tflite --runs 2 --json copy.json --trace chain.json
# the chain's trace says which tensors shared a slot in place (the residual ADDs), in the
# chain's numbering: each names a tensor of its own model holding a PLAN event, and the
# report lists them as shared
expect 0 "$mp" report chain.json --format json -o chain-report.json
"$py" - chain.json chain-report.json <<'PY' || fail "in-place tensors of the chain's trace"
import json, sys
t = json.load(open(sys.argv[1])); r = json.load(open(sys.argv[2]))
meta = t["meta"]; models = meta["models"]
shared = [(i, x["shares"]) for i, x in enumerate(meta["tensors"]) if "shares" in x]
assert shared, "no tensor in place"
model_of = lambda i: next(k for k, m in enumerate(models) if m["first_tensor"] <= i < m["first_tensor"] + m["n_tensors"])
planned = {e[4] for e in t["events"] if e[0] == 3}
for i, root in shared:
    assert model_of(i) == model_of(root) and root in planned and i not in planned, (i, root)
lives = {l["tensor"]: l for l in r["lifetimes"]}
for i, root in shared:
    assert lives[i]["in_place"] and lives[i]["offset"] == lives[root]["offset"], i
PY
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
# without --connect, model 2 passes model 1's output 0 through to model 3 (an output that
# is also its model's input): copy, every boundary out and in (1 + 2 x 4 + 1 = 10 per run);
# bind, only that passed-through output copied out of model 2 (1 per run)
expect 0 "$mp" pipeline fan-1.tflite fan-2.tflite fan-3.tflite --runs 2 --json fpass.json
[ "$(jget fpass.json 'j["copies_per_run"]')" = 10 ] || fail "passed through, copy: copies per run $(jget fpass.json 'j["copies_per_run"]')"
expect 0 "$mp" pipeline fan-1.tflite fan-2.tflite fan-3.tflite --io bind --share-arena --runs 2 --json fpassb.json
[ "$(jget fpassb.json '[e["why"] for e in j["edges"] if not e["bound"]]')" = "['passthrough']" ] || fail "passed through, bind: $(jget fpassb.json '[e["why"] for e in j["edges"]]')"
[ "$(jget fpassb.json 'j["copies_per_run"]')" = 1 ] || fail "passed through, bind: copies per run"

# chain inputs: model 1 x -> y = x + 1, model 2 (a, b) -> p = a * b, [1,4] floats (gen_model);
# by position y feeds a, and b, fed by no output, is the caller's: chain input 1, '2.b'
"$gen" plus1 4 plus1.tflite && "$gen" mul 4 mul.tflite || fail "gen_model plus1 / mul"
for io in copy bind; do
  # p = (2 + 1) * 3
  expect 0 "$mp" pipeline plus1.tflite mul.tflite --fill x=2 --fill 2.b=3 --io $io --runs 3 --output-dir "o-$io" --json "ci-$io.json"
  has out "inputs   0 'x' of model 1, 1 'b' of model 2 (the caller's)"
  has out "1   caller input 1 -> model 2 input 1 'b'"
  [ "$(f32 "o-$io/output_0.bin")" = "9.0 9.0 9.0 9.0" ] || fail "chain input, $io: outputs $(f32 "o-$io/output_0.bin")"
  valid "ci-$io.json"
  [ "$(jget "ci-$io.json" '[(i["input"], i["model"], i["model_input"], i["name"]) for i in j["inputs"]]')" = "[(0, 1, 0, 'x'), (1, 2, 1, 'b')]" ] || fail "chain input, $io: JSON inputs"
done
# copy: x in, b in (copied into model 2, counted as model 1's x is), y out and in, p out: 5
# copies of 16 bytes per run; the trace's copies per model: model 1 x in, y out; model 2 y
# and b in, p out (3 runs)
[ "$(jget ci-copy.json '[e["copies_per_run"] for e in j["edges"]]')" = "[1, 1, 2, 1]" ] || fail "chain input, copy: per edge $(jget ci-copy.json '[e["copies_per_run"] for e in j["edges"]]')"
[ "$(jget ci-copy.json 'j["copy_bytes_per_run"]')" = 80 ] || fail "chain input, copy: bytes per run"
[ "$(jget ci-copy.json '[(m["copies_in"], m["copies_out"]) for m in j["models"]]')" = "[(3, 3), (6, 3)]" ] || fail "chain input, copy: trace copies $(jget ci-copy.json '[(m["copies_in"], m["copies_out"]) for m in j["models"]]')"
[ "$(jget ci-copy.json 'j["edges"][1]["reason"]')" = "copy asked: copied into model 2" ] || fail "chain input, copy: reason"
# bind: b bound to the caller's buffer like x; nothing copied
[ "$(jget ci-bind.json 'j["copies_per_run"]')" = 0 ] || fail "chain input, bind: copies per run"
[ "$(jget ci-bind.json 'all(e["bound"] for e in j["edges"])')" = True ] || fail "chain input, bind: an edge not bound"
# --input 2.b=FILE (1 2 3 4), by index too (2.1), with the shared arena: p = 1.5 b
"$py" -c "import struct; open('b.bin','wb').write(struct.pack('<4f', 1, 2, 3, 4))"
expect 0 "$mp" pipeline plus1.tflite mul.tflite --fill 0=0.5 --input 2.1=b.bin --io bind --share-arena --output-dir o-file
[ "$(f32 o-file/output_0.bin)" = "1.5 3.0 4.5 6.0" ] || fail "chain input from a file: $(f32 o-file/output_0.bin)"
# without --input or --fill, b gets what memprof run mul.tflite gives it (the reference
# formula): with x = 0 (y = 1), p is b; run with a = 1 gives the same p
expect 0 "$mp" run mul.tflite --fill a=1 --output-dir o-run
expect 0 "$mp" pipeline plus1.tflite mul.tflite --fill x=0 --output-dir o-ref
cmp -s o-run/output_0.bin o-ref/output_0.bin || fail "chain input's default values differ from memprof run's: $(f32 o-ref/output_0.bin) vs $(f32 o-run/output_0.bin)"
# --shape K.NAME: x and b [2,4]; p = (1 + 1) * 3 over 8 values
expect 0 "$mp" pipeline plus1.tflite mul.tflite --shape x=2,4 --shape 2.b=2,4 --fill x=1 --fill 2.b=3 --output-dir o-shape
[ "$(f32 o-shape/output_0.bin)" = "6.0 6.0 6.0 6.0 6.0 6.0 6.0 6.0" ] || fail "chain input --shape: $(f32 o-shape/output_0.bin)"
[ "$(jget o-shape/outputs.json 'j["outputs"][0]["shape"]')" = "[2, 4]" ] || fail "chain input --shape: output shape"
# --chain-input 2.a: a too is the caller's (model 1's y then feeds nothing): p = 5 * 2
expect 0 "$mp" pipeline plus1.tflite mul.tflite --chain-input 2.a --fill 2.a=5 --fill 2.b=2 --io bind --output-dir o-ci --json ci-a.json
[ "$(f32 o-ci/output_0.bin)" = "10.0 10.0 10.0 10.0" ] || fail "--chain-input: $(f32 o-ci/output_0.bin)"
[ "$(jget ci-a.json '[i["name"] for i in j["inputs"]]')" = "['x', 'a', 'b']" ] || fail "--chain-input: JSON inputs"
valid ci-a.json
# refusals: one line, exit 2, no file written
refuse() { # refuse MESSAGE ARGS...
  local msg=$1; shift
  rm -rf r.json r-out
  expect 2 "$mp" pipeline plus1.tflite mul.tflite "$@" --json r.json --output-dir r-out
  has err "$msg"
  [ -e r.json ] && fail "refused ($*), yet r.json written"
  [ -e r-out ] && fail "refused ($*), yet r-out written"
}
refuse "--fill '3.b=1': models are numbered 1..2" --fill 3.b=1
refuse "--fill '0.b=1': models are numbered 1..2" --fill 0.b=1
refuse "model 2 (mul.tflite) has no input 'zz' (inputs: a b)" --fill 2.zz=1
refuse "--fill '2.a=1': model 2 input 'a' is fed by model 1 output 'y', not by the caller" --fill 2.a=1
refuse "--shape '2.a=1,4': model 2 input 'a' is fed by model 1 output 'y'" --shape 2.a=1,4
refuse "--input '2.a=b.bin': model 2 input 'a' is fed by model 1 output 'y'" --input 2.a=b.bin
refuse "--chain-input '2.a': model 2 input 'a' is fed by model 1 output 'y'; it cannot also be a chain input" --connect 1.0=2.a --chain-input 2.a
refuse "--chain-input '3.a': models are numbered 1..2" --chain-input 3.a
refuse "--chain-input takes K.INPUT" --chain-input 2
refuse "model 2 (mul.tflite) has no input 'q'" --chain-input 2.q
refuse "input 'b' is given both --input and --fill" --input 2.b=b.bin --fill 2.b=1
refuse "--fill 'b=3': model 1 has no input 'b'; model 2's chain input is named 2.b" --fill b=3

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
