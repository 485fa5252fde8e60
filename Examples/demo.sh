#!/usr/bin/env bash
# `make demo`: the tour of Reef's command line, on the Realm-style contacts sample.
set -euo pipefail
reef="$1"
here="$(cd "$(dirname "$0")" && pwd)"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }

step "reef convert Examples/data/contacts.json --to bson -o contacts.bson"
"$reef" convert "$here/data/contacts.json" --to bson -o "$out/contacts.bson"
ls -l "$out/contacts.bson" | awk '{print $5 " bytes of BSON"}'

step "reef validate contacts.bson"
"$reef" validate "$out/contacts.bson"

step "reef dump contacts.bson                      # relaxed Extended JSON, one document per line"
"$reef" dump "$out/contacts.bson"

step "reef dump contacts.bson --format canonical --pretty   # (first document)"
"$reef" dump "$out/contacts.bson" --format canonical --pretty | sed -n '1,/^}/p'

step "reef convert contacts.bson --to canonical -o contacts.jsonl.gz && reef convert contacts.jsonl.gz --to bson"
"$reef" convert "$out/contacts.bson" --to canonical -o "$out/contacts.jsonl.gz"
"$reef" convert "$out/contacts.jsonl.gz" --to bson -o "$out/again.bson"
cmp "$out/contacts.bson" "$out/again.bson" && echo "round trip through gzipped canonical Extended JSON: identical bytes"
echo "(relaxed Extended JSON is for people: it prints int64 5000 as 5000, which reads back as an int32)"

step "reef query contacts.bson --filter '{\"address.city\": \"Springfield\"}' --format relaxed   # a MongoDB filter"
"$reef" query "$out/contacts.bson" --filter '{"address.city": "Springfield"}' --format relaxed

step "reef query contacts.bson --where 'ANY addresses.city BEGINSWITH[c] \$0' --arg '\"new\"' --project '{\"name\": 1}'   # a Realm predicate"
"$reef" query "$out/contacts.bson" --where 'ANY addresses.city BEGINSWITH[c] $0' --arg '"new"' --project '{"name": 1}' --format relaxed

step "reef query contacts.bson --sort '{\"name\": 1}' --project '{\"_id\": 0, \"name\": 1, \"type\": 1}'   # sorted, projected"
"$reef" query "$out/contacts.bson" --sort '{"name": 1}' --project '{"_id": 0, "name": 1, "type": 1}' --format relaxed

step "reef query contacts.bson --where 'employees > 1000' --count"
"$reef" query "$out/contacts.bson" --where 'employees > 1000' --count

step "a predicate that does not compile: the error names the column (exit 1)"
status=0
"$reef" query "$out/contacts.bson" --where 'name BEGINSWITH' || status=$?
echo "(exit code $status)"

step "a damaged file: the documents before the damage are printed, then the error (exit 1)"
head -c "$(( $(stat -c %s "$out/contacts.bson") - 7 ))" "$out/contacts.bson" > "$out/damaged.bson"
status=0
"$reef" dump "$out/damaged.bson" --format relaxed > "$out/partial.jsonl" 2> "$out/error.txt" || status=$?
cut -c1-80 "$out/partial.jsonl"
cat "$out/error.txt"
echo "(exit code $status)"

step "bad Extended JSON: the error names the line, the column and the key path (exit 1)"
status=0
printf '{"name": "ok"}\n{"name": "bad", "address": {"city": [1, 2,, 3]}}\n' \
  | "$reef" convert - --to bson -o "$out/bad.bson" || status=$?
echo "(exit code $status)"

step "reef import Examples/data/contacts.json --store app.reef --collection contacts   # into a store"
"$reef" import "$here/data/contacts.json" --store "$out/app.reef" --collection contacts

step "reef query --store app.reef --collection contacts --filter '{\"address.city\": \"Springfield\"}' --project '{\"name\": 1}'"
"$reef" query --store "$out/app.reef" --collection contacts --filter '{"address.city": "Springfield"}' \
  --project '{"name": 1}' --format relaxed

step "reef index create --store app.reef --collection contacts --keys '{\"address.city\": 1}' && reef stats --store app.reef"
"$reef" index create --store "$out/app.reef" --collection contacts --keys '{"address.city": 1}'
"$reef" stats --store "$out/app.reef" | sed 's/[0-9]* bytes on disk/… bytes on disk/'

step "reef export --store app.reef --out dump --db crm   # a mongodump directory that mongorestore accepts"
"$reef" export --store "$out/app.reef" --out "$out/dump" --db crm
(cd "$out" && find dump -type f | sort)
cut -c1-160 "$out/dump/crm/contacts.metadata.json"; echo
