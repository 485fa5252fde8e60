#!/usr/bin/env bash
# `make demo`: Realm's models as Reef objects (the three examples), their data as a mongodump
# directory, then the tour of Reef's command line on the Realm-style contacts sample.
# Usage: demo.sh BIN_DIR (the folder of the built `reef` and examples: `swift build --show-bin-path`).
set -euo pipefail
bin="$1"
reef="$bin/reef"
for product in reef EmbeddedObjects Relationships UserTasks ObjectTour; do
  [ -x "$bin/$product" ] || { echo "demo.sh: $bin/$product is not built (make demo builds it: swift build)" >&2; exit 1; }
done
here="$(cd "$(dirname "$0")" && pwd)"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
section() { printf '\n\033[1;4m%s\033[0m\n' "$*"; }

section "Objects: the models and snippets of Realm's pages, with Realm replaced by Reef"
objects="$out/objects"

step "swift run EmbeddedObjects   # Contact, Address, Business (Examples/EmbeddedObjects)"
"$bin/EmbeddedObjects" "$objects/EmbeddedObjects"

step "swift run Relationships     # Person, Dog, DogClub, Address (Examples/Relationships)"
"$bin/Relationships" "$objects/Relationships"

step "swift run UserTasks         # User, Task and a LinkingObjects backlink (Examples/UserTasks)"
"$bin/UserTasks" "$objects/UserTasks"

step "swift run ObjectTour        # the README's tour: write, query, live results, notifications, freeze, async changes"
"$bin/ObjectTour"

step "reef export --store EmbeddedObjects/default.reef --out dump --db crm   # the objects as a mongodump directory"
"$reef" export --store "$objects/EmbeddedObjects/default.reef" --out "$objects/dump" --db crm
step "reef export --store Relationships/default.reef --out dump --db clubs"
"$reef" export --store "$objects/Relationships/default.reef" --out "$objects/dump" --db clubs
step "reef export --store UserTasks/default.reef --out dump --db tasks && find dump -type f"
"$reef" export --store "$objects/UserTasks/default.reef" --out "$objects/dump" --db tasks
(cd "$objects" && find dump -type f | sort)

step "reef stats --store EmbeddedObjects/default.reef && reef schema --store EmbeddedObjects/default.reef --check"
"$reef" stats --store "$objects/EmbeddedObjects/default.reef" | sed 's/[0-9]* bytes on disk/… bytes on disk/'
"$reef" schema --store "$objects/EmbeddedObjects/default.reef" --check

step "cut -c1-120 dump/crm/Contact.metadata.json   # the schema is the collection's validator for mongorestore"
cut -c1-120 "$objects/dump/crm/Contact.metadata.json"

step "reef dump dump/crm/Contact.bson   # one document per object, each address inline"
"$reef" dump "$objects/dump/crm/Contact.bson"

step "reef dump dump/crm/Business.bson --pretty   # a List of embedded objects is an array of subdocuments"
"$reef" dump "$objects/dump/crm/Business.bson" --pretty

step "reef dump dump/clubs/DogClub.bson   # links hold primary keys; LinkingObjects are not stored"
"$reef" dump "$objects/dump/clubs/DogClub.bson"

step "reef dump dump/tasks/User.bson"
"$reef" dump "$objects/dump/tasks/User.bson"

step "reef query dump/crm/Contact.bson --where 'address.city == \$0' --arg '\"Los Angeles\"' --project '{\"name\": 1, \"_id\": 0}'"
"$reef" query "$objects/dump/crm/Contact.bson" --where 'address.city == $0' --arg '"Los Angeles"' \
  --project '{"name": 1, "_id": 0}' --format relaxed

section "Moving in: Realm's older models ported, and models inferred from data"

shared="${REEF_SHARED_DIR:-$here/../../shared}"
if [ -f "$shared/seeds/embedded-objects.txt" ]; then
  # The Embedded Objects page's Swift models as the page prints them (read in place from the seeds).
  awk '/^\/\/ Define an embedded object$/ {on = 1} /^\/\/ Define the embedded object$/ {on = 0} on' \
    "$shared/seeds/embedded-objects.txt" > "$out/EmbeddedModels.swift"
  step "reef port EmbeddedModels.swift   # the Embedded Objects page's @objc dynamic models, as a diff"
  (cd "$out" && "$reef" port EmbeddedModels.swift)
else
  echo "(the seed pages are not at $shared/seeds: set REEF_SHARED_DIR to show reef port on them)"
fi

step "reef models dump/crm   # models inferred from the exported documents: an Object per collection, embedded objects"
"$reef" models "$objects/dump/crm" | sed "s|$objects/||"

section "Documents: the command line on Examples/data/contacts.json"

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
