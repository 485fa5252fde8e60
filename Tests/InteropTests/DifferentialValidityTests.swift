import PropertyBased
import ReefBSON
import ReefLibBSON
import ReefTestSupport
import Testing

/// Property (c): on mutated documents, Reef's validator (`Document(bytes:)`) and the libbson oracle
/// (``LibBSONVerdict``: libbson plus `bson_utf8_validate` on every string and its own terminator
/// checks) reach the same verdict, except where Reef is stricter for a documented reason.
@Suite struct DifferentialValidityTests {
  static let baseDocuments = 2_000 * soakScale
  static let mutantsPerDocument = 6

  /// Why Reef may reject what libbson accepts. Each case names the rule Reef enforces and where it
  /// comes from; any other disagreement fails the test.
  enum StricterThanLibBSON: String, CaseIterable {
    /// Reef requires array keys "0", "1", … in order (BSON spec, bsonspec.org: "The document for an
    /// array is a normal BSON document with integer values for the keys, starting with 0 and
    /// continuing sequentially"). libbson never checks them. Note: the BSON corpus spec instead calls
    /// such arrays degenerate but readable ("reading arrays with invalid keys is possible ... so they
    /// are *not* decodeErrors", bson-corpus.md; array.json has three such `degenerate_bson` cases), so
    /// this strictness is Reef's choice, not the corpus's; see ``degenerateArrayKeysFromTheCorpus()``.
    case arrayKeys
    /// Reef rejects the overlong two-byte form `C0 80` of U+0000 in string values: BSON strings are
    /// UTF-8 (bsonspec.org), whose syntax (RFC 3629 section 4) has no C0 byte, and RFC 3629 section 10
    /// names exactly this sequence as one decoders must not accept. `bson_utf8_validate` with NULs
    /// allowed accepts it (Java's "modified UTF-8").
    case overlongNull
    /// Reef rejects nesting deeper than 100 below the top-level document (MongoDB's limit, the
    /// default `ValidationOptions.maximumDepth`, DESIGN.md "Limits"); libbson has no limit.
    case depthLimit
    // Not differences, because libbson 1.23's bson_iter_next checks them too: boolean bytes other than
    // 0 and 1 (corpus boolean.json decodeErrors) and old binary subtype 2 inner lengths (binary.json).
    // Regex option order is checked by neither (the corpus calls unsorted options degenerate).
  }

  /// A document to mutate and the seed of its mutations.
  struct MutationInput: CustomTestStringConvertible, Sendable {
    var document: GeneratedDocument
    var seed: UInt64
    var testDescription: String { "\(document.testDescription), mutation seed \(seed)" }
  }

  struct Tally {
    var mutants = 0
    var bothValid = 0
    var bothInvalid = 0
    var stricter: [StricterThanLibBSON: Int] = [:]
    var reefKinds: [String: Int] = [:]
    var oracleReasons: [String: Int] = [:]
  }

  @Test func reefAndLibbsonOracleAgreeOnMutants() async {
    var tally = Tally()
    // Smaller documents than the other properties (mutants of small documents hit the boundaries
    // more often), and some nested past the depth limit.
    let shapes = DocumentGenerator(
      maximumValues: 16, deepChainRate: 0.05, nearLimitDepths: 98...103, nearLimitRate: 0.3)
    let input = zip(shapes.generator, Generator { rng in rng.next() as UInt64 }).map(MutationInput.init)
    await propertyCheck(count: Self.baseDocuments, input: input) { input in
      let original = input.document.reef.bytes
      let map = ByteMap(validDocument: original)
      var rng: RNG = Xoshiro(seed: (input.seed, input.seed ^ 0x9E37_79B9_7F4A_7C15, 1, 2))
      var mutants = (0..<Self.mutantsPerDocument).map { _ in Mutator.mutate(original, map: map, &rng) }
      mutants.append(Mutant(bytes: original, steps: ["unmutated"]))
      for mutant in mutants {
        tally.mutants += 1
        if let problem = Self.compare(mutant, tally: &tally) {
          Issue.record("\(problem)\n\(mutant.testDescription)\noriginal \(hexString(original))")
          return
        }
      }
    }
    print(
      """
      DifferentialValidityTests: \(tally.mutants) documents (\(Self.baseDocuments) originals), \
      both valid \(tally.bothValid), both invalid \(tally.bothInvalid), \
      Reef stricter: \(tally.stricter.map { "\($0.key) \($0.value)" }.sorted())
        Reef errors: \(tally.reefKinds.sorted { $0.key < $1.key })
        oracle reasons: \(tally.oracleReasons.sorted { $0.key < $1.key })
      """)
    // The mutations must produce both verdicts in quantity, or the property proves little.
    #expect(tally.mutants >= 10_000)
    #expect(tally.bothValid >= 1_000 && tally.bothInvalid >= 5_000)
  }

  /// Compares the two verdicts on one mutant; returns a description of an unexplained disagreement.
  static func compare(_ mutant: Mutant, tally: inout Tally) -> String? {
    let oracle = LibBSONVerdict(checking: mutant.bytes)
    let reef = Result { () throws(BSONError) in try Document(bytes: mutant.bytes) }
    if let reason = oracle.reason { tally.oracleReasons[reason.rawValue, default: 0] += 1 }
    switch (reef, oracle.isValid) {
    case (.success, true):
      // Reef accepted: libbson must not have noticed anything Reef is meant to reject.
      if let leniency = oracle.leniencies.first {
        return "Reef accepted a document with \(leniency), which Reef's own rules reject (oracle: \(oracle))"
      }
      tally.bothValid += 1
      return nil
    case (.failure(let error), false):
      tally.reefKinds[error.kind.rawValue, default: 0] += 1
      tally.bothInvalid += 1
      return nil
    case (.success, false):
      return "Reef accepted a document that libbson rejects: \(oracle)"
    case (.failure(let error), true):
      tally.reefKinds[error.kind.rawValue, default: 0] += 1
      guard let reason = explanation(error, oracle) else {
        return "Reef rejected a document that libbson accepts, for no documented reason: \(error)\noracle: \(oracle)"
      }
      tally.stricter[reason, default: 0] += 1
      return nil
    }
  }

  /// The documented reason for which Reef may reject what the oracle accepted: Reef's error must be of
  /// the matching kind and point at a byte where the oracle saw that very leniency.
  static func explanation(_ error: BSONError, _ oracle: LibBSONVerdict) -> StricterThanLibBSON? {
    let (reason, kind): (StricterThanLibBSON, LibBSONVerdict.Leniency.Kind)
    switch error.kind {
    case .invalidArrayKey: (reason, kind) = (.arrayKeys, .arrayKeyNotIndex)
    case .invalidUTF8: (reason, kind) = (.overlongNull, .overlongNull)
    case .depthLimitExceeded: (reason, kind) = (.depthLimit, .deeperThanMongoDBLimit)
    default: return nil
    }
    return oracle.leniencies.contains(.init(kind, offset: error.offset ?? -1)) ? reason : nil
  }

  /// The classification fires for each documented reason on a minimal example, and nowhere else.
  @Test(arguments: [
    // ["a": [10]] with the array key "1" instead of "0".
    ("140000000461000C0000001031000A0000000000", StricterThanLibBSON.arrayKeys),
    // ["a": "\u{C0}\u{80}"] as bytes: the overlong NUL.
    ("0F00000002610003000000C0800000", .overlongNull),
  ])
  func documentedDifferences(hex: String, expected: StricterThanLibBSON) {
    var tally = Tally()
    #expect(Self.compare(Mutant(bytes: bytes(hex: hex)), tally: &tally) == nil)
    #expect(tally.stricter == [expected: 1])
  }

  @Test func depthLimitIsADocumentedDifference() {
    func nested(_ levels: Int) -> [UInt8] {
      var doc = [UInt8]([5, 0, 0, 0, 0])
      for _ in 0..<levels { doc = singleElementBytes(type: 0x03, value: doc) }
      return doc
    }
    var tally = Tally()
    #expect(Self.compare(Mutant(bytes: nested(100)), tally: &tally) == nil)
    #expect(tally.bothValid == 1)
    #expect(Self.compare(Mutant(bytes: nested(101)), tally: &tally) == nil)
    #expect(tally.stricter == [.depthLimit: 1])
  }

  /// The corpus's degenerate arrays (array.json `degenerate_bson`): libbson reads them; Reef's
  /// default follows the BSON spec's "0", "1", … rule and rejects them (the `arrayKeys` difference
  /// above), and with `checksArrayKeys: false` it reads them as libbson does.
  @Test func degenerateArrayKeysFromTheCorpus() throws {
    let degenerate = [
      "130000000461000B00000010000A0000000000",
      "150000000461000D000000106162000A0000000000",
      "1b000000046100130000001030000a000000103000140000000000",
    ]
    for hex in degenerate {
      #expect(LibBSONVerdict(checking: bytes(hex: hex)).isValid, "\(hex)")
      #expect(throws: BSONError.self, "\(hex): the default rejects out-of-sequence array keys") {
        try Document(bytes: bytes(hex: hex))
      }
      let lenient = try Document(bytes: bytes(hex: hex), options: ValidationOptions(checksArrayKeys: false))
      #expect(lenient.bytes == bytes(hex: hex), "\(hex)")
    }
  }
}
