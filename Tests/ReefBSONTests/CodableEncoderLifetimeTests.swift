import ReefBSON
import ReefTestSupport
import Testing

// Adversarial `encode(to:)` implementations for the encoder's node and box reuse: encoders and
// containers kept past their value or their call, written to out of order, errors thrown at
// depth, re-entrant and concurrent encodes. Run under the address sanitizer too.

/// What an `encode(to:)` keeps past its value (the tests hand it across values by reference).
private final class Kept: @unchecked Sendable {
  var root: KeyedEncodingContainer<AnyKey>?
  var encoders: [any Encoder] = []
  var keyed: [KeyedEncodingContainer<AnyKey>] = []
  var unkeyed: [any UnkeyedEncodingContainer] = []
  var single: [any SingleValueEncodingContainer] = []
  var paths: [[String]] = []
}

private func strings(_ path: [any CodingKey]) -> [String] { path.map(\.stringValue) }

/// The bytes of the document `build` appends to.
private func document(_ build: (inout DocumentBuilder) -> Void) -> [UInt8] {
  var builder = DocumentBuilder()
  build(&builder)
  return builder.bytes
}

private struct TestError: Error, Equatable {
  let depth: Int
}

/// What a nested value writes into its parent after it while it encodes (see `Meddler`).
enum ClosingSibling: Sendable, CaseIterable {
  case keyed, unkeyed, nestedValue
}

@Suite("Codable encoder lifetimes")
struct CodableEncoderLifetimeTests {
  // MARK: - A nested value's node while its encode(to:) runs

  /// Writes to its parent's container (kept in `kept.root`) while it encodes, then asks for its
  /// own container: its node was closed by the write to the parent, and must not have been
  /// taken for the parent's next nested value meanwhile.
  private struct Meddler: Encodable {
    let sibling: ClosingSibling
    let kept: Kept
    func encode(to encoder: any Encoder) throws {
      try kept.root!.encode(1, forKey: AnyKey("x"))
      switch sibling {
      case .keyed:
        var y = kept.root!.nestedContainer(keyedBy: AnyKey.self, forKey: AnyKey("y"))
        try y.encode(2, forKey: AnyKey("in-y"))
        kept.keyed.append(y)
      case .unkeyed:
        var y = kept.root!.nestedUnkeyedContainer(forKey: AnyKey("y"))
        try y.encode(2)
        kept.unkeyed.append(y)
      case .nestedValue:
        try kept.root!.encode(Leaf(value: 2), forKey: AnyKey("y"))
      }
      kept.paths.append(strings(encoder.codingPath))
      var c = encoder.container(keyedBy: AnyKey.self)
      try c.encode(5, forKey: AnyKey("q"))
      kept.paths.append(strings(c.codingPath))
    }
  }

  private struct Leaf: Encodable {
    let value: Int
    func encode(to encoder: any Encoder) throws {
      var c = encoder.unkeyedContainer()
      try c.encode(value)
    }
  }

  private struct MeddlerHost: Encodable {
    let sibling: ClosingSibling
    let kept: Kept
    func encode(to encoder: any Encoder) throws {
      var c = encoder.container(keyedBy: AnyKey.self)
      kept.root = c
      try c.encode(Meddler(sibling: sibling, kept: kept), forKey: AnyKey("a"))
      kept.root = nil
    }
  }

  @Test(arguments: ClosingSibling.allCases)
  func aNestedValueClosedByItsParentKeepsItsNode(sibling: ClosingSibling) throws {
    // While its encode(to:) runs, the closed node of "a" is held by the stack, used unretained
    // by writeNested, and retained only by the `any Encoder` made for encode(to:) (Swift 6.3
    // retains it; an optimizer may not). Taken for "y", "q" would go into "y" in place (with
    // no second pass), or asking for a keyed container would fail, and paths would say "y".
    let kept = Kept()
    let bytes = try BSONEncoder().encodeBytes(MeddlerHost(sibling: sibling, kept: kept))
    let expected = document {
      $0.appendDocument("a") { $0.append("q", Int64(5)) }
      $0.append("x", Int64(1))
      switch sibling {
      case .keyed: $0.appendDocument("y") { $0.append("in-y", Int64(2)) }
      case .unkeyed, .nestedValue: $0.append("y", BSON.array([.int64(2)]))
      }
    }
    #expect(bytes == expected)
    // Both passes (fast, then tree) read the paths.
    #expect(kept.paths.allSatisfy { $0 == ["a"] })
    #expect(kept.paths.count == 4)
  }

  // MARK: - Everything kept past its value and its call

  /// At `depth` 0 keeps its encoder and every kind of container (and their paths) once per call.
  private struct Keeper: Encodable {
    let depth: Int
    let kept: Kept?
    func encode(to encoder: any Encoder) throws {
      if depth > 0 {
        var c = encoder.container(keyedBy: AnyKey.self)
        try c.encode(Keeper(depth: depth - 1, kept: kept), forKey: AnyKey("d\(depth)"))
        try c.encode(depth, forKey: AnyKey("n"))
        return
      }
      var c = encoder.container(keyedBy: AnyKey.self)
      try c.encode(0, forKey: AnyKey("n"))
      guard let kept else { return }
      kept.encoders.append(encoder)
      var list = c.nestedUnkeyedContainer(forKey: AnyKey("list"))
      try list.encode(1)
      var inner = list.nestedContainer(keyedBy: AnyKey.self)
      try inner.encode(2, forKey: AnyKey("two"))
      kept.keyed.append(inner)
      kept.encoders.append(list.superEncoder())
      kept.unkeyed.append(list)
      kept.encoders.append(c.superEncoder())
      kept.encoders.append(c.superEncoder(forKey: AnyKey("sup")))
      kept.keyed.append(c)
      kept.single.append(encoder.singleValueContainer())
    }
  }

  private static func keeperBytes(depth: Int, kept: Bool) -> [UInt8] {
    func level(_ d: Int, _ b: inout DocumentBuilder) {
      if d == 0 {
        b.append("n", Int64(0))
        guard kept else { return }
        b.append(
          "list",
          BSON.array([.int64(1), .document(["two": .int64(2)]), .document([:])]))
        b.appendDocument("super") { _ in }
        b.appendDocument("sup") { _ in }
        return
      }
      b.appendDocument("d\(d)") { level(d - 1, &$0) }
      b.append("n", Int64(d))
    }
    return document { level(depth, &$0) }
  }

  private static func keeperPaths(depth: Int) -> [[String]] {
    let base = (1...depth).reversed().map { "d\($0)" }
    return [base, base + ["list", "2"], base + ["super"], base + ["sup"]]
  }

  @Test func everythingKeptPastItsCallKeepsItsPathAndWritesNothing() throws {
    let kept = Kept()
    let encoder = BSONEncoder()
    for depth in [3, 70] {
      kept.encoders = []
      kept.keyed = []
      kept.unkeyed = []
      kept.single = []
      #expect(try encoder.encodeBytes(Keeper(depth: depth, kept: kept)) == Self.keeperBytes(depth: depth, kept: true))
      let paths = Self.keeperPaths(depth: depth)
      let base = paths[0]
      func checkPaths(_ when: String) {
        #expect(kept.encoders.map { strings($0.codingPath) } == paths, "\(when)")
        #expect(kept.unkeyed.map { strings($0.codingPath) } == [base + ["list"]], "\(when)")
        #expect(kept.single.map { strings($0.codingPath) } == [base], "\(when)")
        // A kept keyed container keeps its node, and so its path, even once its state is let go
        // (when another is kept idle, by a concurrent test).
        #expect(kept.keyed.map { strings($0.codingPath) } == [base + ["list", "1"], base], "\(when)")
      }
      checkPaths("after the call")
      // Later calls of other shapes reuse the nodes; the kept paths stay.
      for other in [0, 1, depth, depth + 5] {
        #expect(
          try encoder.encodeBytes(Keeper(depth: other, kept: nil)) == Self.keeperBytes(depth: other, kept: false))
        checkPaths("after a call of depth \(other)")
      }
      // Written to after their call (also during another call, below): nothing happens.
      // (A single value into a node that has a keyed container is an error, live or not.)
      var single = kept.single[0]
      #expect(throws: EncodingError.self) { try single.encode(1) }
      var unkeyed = kept.unkeyed[0]
      try unkeyed.encode(1)
      _ = unkeyed.nestedUnkeyedContainer()
      for index in kept.keyed.indices {
        try kept.keyed[index].encode(1, forKey: AnyKey("late"))
        _ = kept.keyed[index].superEncoder()
      }
      for kept in kept.encoders {
        var c = kept.container(keyedBy: AnyKey.self)
        try c.encode(1, forKey: AnyKey("late"))
        var u = c.nestedUnkeyedContainer(forKey: AnyKey("u"))
        try u.encode(Keeper(depth: 2, kept: nil))
      }
      struct Meddled: Encodable {
        let kept: Kept
        func encode(to encoder: any Encoder) throws {
          var c = encoder.container(keyedBy: AnyKey.self)
          try c.encode(1, forKey: AnyKey("a"))
          for index in kept.keyed.indices { try kept.keyed[index].encode(2, forKey: AnyKey("stale")) }
          for e in kept.encoders {
            var single = e.singleValueContainer()
            try single.encode(Keeper(depth: 1, kept: nil))
          }
          try c.encode(Keeper(depth: 2, kept: nil), forKey: AnyKey("b"))
        }
      }
      let meddled = try encoder.encodeBytes(Meddled(kept: kept))
      #expect(
        meddled
          == document {
            $0.append("a", Int64(1))
            $0.append("b", try! Document(bytes: Self.keeperBytes(depth: 2, kept: false)))
          })
      checkPaths("after a call that wrote to them")
    }
  }

  @Test func keptEncodersOutliveTheirState() throws {
    // Keeps encoders and containers in a call that encodes another value with a second
    // encoder inside it: that inner call's state ends first and is kept idle, so this call's
    // state is let go (its nodes freed unless kept; unless a concurrent test's state was idle
    // already, and the inner one is let go). Either way the kept ones keep their paths.
    struct Host: Encodable {
      let kept: Kept
      func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: AnyKey.self)
        try c.encode(Keeper(depth: 4, kept: kept), forKey: AnyKey("k"))
        let inner = try BSONEncoder().encode(Keeper(depth: 3, kept: nil))
        try c.encode(inner, forKey: AnyKey("inner"))
      }
    }
    let kept = Kept()
    let bytes = try BSONEncoder().encodeBytes(Host(kept: kept))
    let expected = document {
      $0.append("k", try! Document(bytes: Self.keeperBytes(depth: 4, kept: true)))
      $0.append("inner", try! Document(bytes: Self.keeperBytes(depth: 3, kept: false)))
    }
    #expect(bytes == expected)
    let paths = Self.keeperPaths(depth: 4).map { ["k"] + $0 }
    for _ in 0..<3 {
      #expect(try BSONEncoder().encodeBytes(Keeper(depth: 6, kept: nil)) == Self.keeperBytes(depth: 6, kept: false))
      #expect(kept.encoders.map { strings($0.codingPath) } == paths)
      #expect(kept.unkeyed.map { strings($0.codingPath) } == [paths[0] + ["list"]])
      #expect(kept.single.map { strings($0.codingPath) } == [paths[0]])
      // Kept boxes keep their nodes (never freed under a read on another thread), so their paths.
      #expect(kept.keyed.map { strings($0.codingPath) } == [paths[0] + ["list", "1"], paths[0]])
    }
  }

  // MARK: - Paths read at every point

  /// Reads, at every level, the path of its encoder and of every ancestor's encoder and
  /// container (kept in `kept` on the way down).
  private struct PathReader: Encodable {
    let depth: Int
    let kept: Kept
    func encode(to encoder: any Encoder) throws {
      let level = kept.encoders.count
      let expected = (0..<level).map { "k\($0)" }
      #expect(strings(encoder.codingPath) == expected)
      kept.encoders.append(encoder)
      var c = encoder.container(keyedBy: AnyKey.self)
      kept.keyed.append(c)
      for (index, e) in kept.encoders.enumerated() {
        #expect(strings(e.codingPath) == Array(expected.prefix(index)))
        #expect(strings(kept.keyed[index].codingPath) == Array(expected.prefix(index)))
      }
      try c.encode(level, forKey: AnyKey("n"))
      if depth > 0 {
        try c.encode(PathReader(depth: depth - 1, kept: kept), forKey: AnyKey("k\(level)"))
        // Inner levels ended: their kept encoders still have their paths.
        for (index, e) in kept.encoders.enumerated() {
          #expect(strings(e.codingPath) == (0..<index).map { "k\($0)" })
        }
      }
    }
  }

  @Test(arguments: [5, 100, 300])
  func pathsOfEveryAncestorWhileNested(depth: Int) throws {
    if depth > 100
      && Sanitizer.skipped(
        under: [.thread], "pathsOfEveryAncestorWhileNested(depth: \(depth))",
        because: "its checks read about \(depth * depth * depth / 6) path components, which took over 10 minutes "
          + "under ThreadSanitizer (100 levels pass)")
    {
      return
    }
    let kept = Kept()
    let bytes = try BSONEncoder().encodeBytes(PathReader(depth: depth, kept: kept))
    var value = try Document(bytes: bytes, options: ValidationOptions(maximumDepth: 1_000))
    for level in 0...depth {
      #expect(value["n"] == .int64(Int64(level)))
      guard level < depth else { break }
      guard case .document(let inner)? = value["k\(level)"] else {
        Issue.record("level \(level) has no document k\(level)")
        break
      }
      value = inner
    }
    #expect(kept.encoders.count == depth + 1)
    #expect(strings(kept.encoders.last!.codingPath) == (0..<depth).map { "k\($0)" })
  }

  // MARK: - Errors at depth

  /// Throws `TestError` at depth `throwAt`; the value at `catchAt` catches it and goes on.
  private struct Thrower: Encodable {
    let depth: Int
    let throwAt: Int
    let catchAt: Int?
    func encode(to encoder: any Encoder) throws {
      if depth == throwAt { throw TestError(depth: depth) }
      var c = encoder.container(keyedBy: AnyKey.self)
      try c.encode(depth, forKey: AnyKey("before"))
      do {
        try c.encode(Thrower(depth: depth + 1, throwAt: throwAt, catchAt: catchAt), forKey: AnyKey("next"))
      } catch let error as TestError where depth == catchAt {
        try c.encode(error.depth, forKey: AnyKey("caught"))
      }
      try c.encode(depth, forKey: AnyKey("after"))
    }
  }

  private static func throwerBytes(from depth: Int, caughtAt catchAt: Int, thrownAt throwAt: Int) -> [UInt8] {
    func level(_ d: Int, _ b: inout DocumentBuilder) {
      b.append("before", Int64(d))
      if d == catchAt {
        b.append("caught", Int64(throwAt))
      } else {
        b.appendDocument("next") { level(d + 1, &$0) }
      }
      b.append("after", Int64(d))
    }
    return document { level(depth, &$0) }
  }

  @Test func errorsThrownAtDepthThenTheSameEncoderAgain() throws {
    let encoder = BSONEncoder()
    for throwAt in [1, 2, 7, 80] {
      #expect(throws: TestError(depth: throwAt)) {
        try encoder.encodeBytes(Thrower(depth: 0, throwAt: throwAt, catchAt: nil))
      }
      for catchAt in Set([0, throwAt / 2, throwAt - 1]) {
        #expect(
          try encoder.encodeBytes(Thrower(depth: 0, throwAt: throwAt, catchAt: catchAt))
            == Self.throwerBytes(from: 0, caughtAt: catchAt, thrownAt: throwAt))
      }
      #expect(try encoder.encodeBytes(Keeper(depth: 4, kept: nil)) == Self.keeperBytes(depth: 4, kept: false))
    }
  }

  // MARK: - Re-entrant and concurrent encodes

  @Test func encodingReentrantlyWithTheSameEncoder() throws {
    struct Reentrant: Encodable {
      let encoder: BSONEncoder
      let depth: Int
      func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: AnyKey.self)
        try c.encode(depth, forKey: AnyKey("n"))
        guard depth > 0 else { return }
        // Between this container's writes: another call of the same encoder, then a nested value.
        let inner = try self.encoder.encode(Reentrant(encoder: self.encoder, depth: depth - 1))
        try c.encode(inner, forKey: AnyKey("inner"))
        try c.encode(Keeper(depth: 2, kept: nil), forKey: AnyKey("nested"))
        #expect(strings(c.codingPath).isEmpty)
      }
    }
    func expected(_ depth: Int) -> [UInt8] {
      document {
        $0.append("n", Int64(depth))
        guard depth > 0 else { return }
        $0.append("inner", try! Document(bytes: expected(depth - 1)))
        $0.append("nested", try! Document(bytes: Self.keeperBytes(depth: 2, kept: false)))
      }
    }
    let encoder = BSONEncoder()
    for _ in 0..<3 { #expect(try encoder.encodeBytes(Reentrant(encoder: encoder, depth: 6)) == expected(6)) }
  }

  @Test func concurrentEncodesWithOneSharedEncoder() async throws {
    let encoder = BSONEncoder()
    let shapes = [0, 3, 40, 90]
    let expected = shapes.map { Self.keeperBytes(depth: $0, kept: false) }
    try await withThrowingTaskGroup(of: Bool.self) { group in
      for task in 0..<6 {
        group.addTask {
          for round in 0..<150 {
            let shape = (task + round) % shapes.count
            if round % 7 == 0 {
              // Some calls keep things and throw, on every thread.
              let kept = Kept()
              _ = try encoder.encodeBytes(Keeper(depth: 2, kept: kept))
              guard (try? encoder.encodeBytes(Thrower(depth: 0, throwAt: 5, catchAt: nil))) == nil else {
                return false
              }
              guard strings(kept.encoders[0].codingPath) == ["d2", "d1"] else { return false }
            }
            guard try encoder.encodeBytes(Keeper(depth: shapes[shape], kept: nil)) == expected[shape] else {
              return false
            }
          }
          return true
        }
      }
      for try await ok in group { #expect(ok) }
    }
  }

  // MARK: - Tree mode

  @Test func outOfOrderUseDeepInsideAndKeptEncoders() throws {
    // A kept nested encoder written after its value ended forces the second (tree) pass; the
    // paths read in both passes are the same, and the result is the in-order one.
    struct Late: Encodable {
      let kept: Kept
      func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: AnyKey.self)
        kept.encoders = []
        try c.encode(Keeper(depth: 66, kept: kept), forKey: AnyKey("deep"))
        // Written after its value: the encoder starts again in tree mode.
        var late = kept.encoders[0].container(keyedBy: AnyKey.self)
        try late.encode(7, forKey: AnyKey("late"))
        kept.paths.append(strings(late.codingPath))
        try c.encode(1, forKey: AnyKey("after"))
      }
    }
    let kept = Kept()
    let bytes = try BSONEncoder().encodeBytes(Late(kept: kept))
    let base = (1...66).reversed().map { "d\($0)" }
    #expect(kept.paths == [["deep"] + base, ["deep"] + base])
    var deep = try Document(bytes: Self.keeperBytes(depth: 66, kept: true))
    func addLate(_ d: Document, _ level: Int) -> Document {
      var d = d
      if level == 0 {
        d[key: "late"] = .int64(7)
        return d
      }
      guard case .document(let inner)? = d["d\(level)"] else { return d }
      d[key: "d\(level)"] = .document(addLate(inner, level - 1))
      return d
    }
    deep = addLate(deep, 66)
    #expect(try Document(bytes: bytes) == ["deep": .document(deep), "after": .int64(1)])
  }
}
