// A loop around one benchmarked operation, for profilers (perf record, valgrind --tool=callgrind):
//
//   swift build -c release --product ReefProfile
//   perf record -g .build/release/ReefProfile validate full 200000
//
// Operations: validate, iterate, walk, build, path, ejson, parse, libbson-walk (DATASET: flat, deep, full).
// Store operations on Examples-model documents (StoreBenchmarks' import, lookup and queries):
//
//   perf record -g .build/release/ReefProfile store-insert 1000000   one write transaction, then commit
//   perf record -g .build/release/ReefProfile store-get 100000 [CALLS] document(forID:) per call
//   perf record -g .build/release/ReefProfile store-query 100000 indexed|plain|one [CALLS [warm|cold]]   find on address.city (one: on name, 1 match)
//   perf record -g .build/release/ReefProfile store-commit 100000 [CALLS [full|normal|none]]   one insert per write transaction
import BenchSupport
import CBench
import ReefBSON
import ReefStore

#if canImport(Glibc)
  import Glibc
#endif

let args = CommandLine.arguments
if args.count >= 2, args[1].hasPrefix("store-") {
  profileStore()
  exit(0)
}
guard args.count >= 3, let dataset = Dataset.extended(args[2]) else {
  printError("usage: ReefProfile validate|iterate|walk|build|path|ejson|parse|libbson-walk DATASET [ITERATIONS]")
  exit(2)
}
let iterations = countArgument(3, default: 100_000)
let buffer = PinnedBytes(dataset.bson).buffer
let document = try! Document(bytesNoCopy: buffer, owner: nil)
let paths = ["flat": "CFujXoob", "deep": "left.left.left.left.left.leftValue", "full": "UwZlNrHv.7"]

@inline(never) func sink<T>(_ value: T) { withExtendedLifetime(value) {} }

@inline(never)
func walk(_ d: Document) -> Int {
  var acc = 0
  for e in d {
    switch e.value {
    case .document(let n): acc &+= walk(n)
    case .array(let a): acc &+= walk(a.document)
    case .int32(let v): acc &+= Int(v)
    default: acc &+= 1
    }
  }
  return acc
}

var acc = 0
switch args[1] {
case "validate":
  for _ in 0..<iterations { acc &+= (try? Document.validatedLength(of: buffer)) ?? 0 }
case "iterate":
  for _ in 0..<iterations { for e in document { acc &+= Int(e.type.rawValue) } }
case "walk":
  for _ in 0..<iterations { acc &+= walk(document) }
case "build":
  let program = BuildProgram(document)!
  for _ in 0..<iterations { acc &+= program.build().byteCount }
case "path":
  let path = paths[dataset.name]!
  for _ in 0..<iterations { acc &+= document[path] == nil ? 0 : 1 }
case "ejson":
  for _ in 0..<iterations { acc &+= document.extendedJSON(.canonical).utf8.count }
case "parse":
  let text = dataset.jsonString
  for _ in 0..<iterations { acc &+= (try? Document(extendedJSON: text))?.byteCount ?? 0 }
case "libbson-walk":
  for _ in 0..<iterations {
    acc &+= Int(cb_iter_walk(buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), buffer.count))
  }
default:
  printError("unknown operation \(args[1])")
  exit(2)
}
print(acc)
