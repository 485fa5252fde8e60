import CLibBSON
import PropertyBased
import ReefBSON
import ReefLibBSON
import ReefTestSupport
import Testing

/// Property (b): Reef's canonical and relaxed Extended JSON parse (with Foundation's
/// `JSONSerialization`) to the same JSON value as libbson's `bson_as_canonical_extended_json` /
/// `bson_as_relaxed_extended_json`, after the narrow, spec-cited normalisations in
/// ``ExtendedJSONNormalization`` (doubles compared by value; libbson's relaxed dates after 9999).
/// Key order is not compared (JSON objects are unordered; the spec only says a generator SHOULD keep
/// it). Also: both parsers read the other's canonical output back to the original document.
@Suite struct DifferentialExtendedJSONTests {
  static let documentCount = 2_500 * soakScale

  @Test(arguments: ExtendedJSONMode.allCases)
  func reefWritesWhatLibbsonWrites(mode: ExtendedJSONMode) async {
    var checked = 0
    await propertyCheck(count: Self.documentCount, input: DocumentGenerator().generator) { generated in
      checked += 1
      let doc = generated.reef
      let reefText = doc.extendedJSON(mode)
      guard let libbsonText = ReefBuild.document(canonicalDecimals(generated.fields)).libbsonExtendedJSON(mode) else {
        Issue.record("libbson refused to write \(mode) Extended JSON for \(hexString(doc.bytes))")
        return
      }
      do {
        let reef = ExtendedJSONNormalization.conforming(try ParsedJSON(parsing: reefText))
        let libbson = ExtendedJSONNormalization.libbson(try ParsedJSON(parsing: libbsonText))
        if let difference = reef.firstDifference(from: libbson) {
          Issue.record(
            """
            \(mode) Extended JSON differs (Reef vs libbson) at \(difference)
            document: \(hexString(doc.bytes))
            Reef:     \(reefText)
            libbson:  \(libbsonText)
            """)
        }
      } catch {
        Issue.record(
          "not JSON (\(error))\ndocument: \(hexString(doc.bytes))\nReef: \(reefText)\nlibbson: \(libbsonText)")
      }
    }
    print("DifferentialExtendedJSONTests: \(checked) documents compared in \(mode) mode")
  }

  /// Canonical Extended JSON round-trips (corpus assertion `json_to_bson(cEJ) = cB`) through either
  /// parser, whichever writer produced it, up to the losses the specs allow: every double NaN is
  /// written as "NaN" (Extended JSON spec, "Representation of Non-finite Numeric Values": "NaN (all
  /// variants)"), and a Decimal128 is written as its value, so NaN payloads and non-canonical
  /// encodings (Decimal128 spec: coefficients above 10^34 - 1 read as zero) come back canonical.
  @Test func canonicalOutputRoundTripsThroughBothParsers() async {
    var checked = 0
    var skippedLibbsonReadings = 0
    await propertyCheck(count: Self.documentCount, input: DocumentGenerator().generator) { generated in
      checked += 1
      let doc = generated.reef
      let reefText = doc.extendedJSON(.canonical)
      guard let libbsonText = ReefBuild.document(canonicalDecimals(generated.fields)).libbsonExtendedJSON(.canonical)
      else { return }
      var readings: [(String, () throws -> Document)] = [
        ("Reef reading Reef's output", { try Document(extendedJSON: reefText) }),
        ("Reef reading libbson's output", { try Document(extendedJSON: libbsonText) }),
      ]
      if !libbsonParserMisreads(generated.fields) {
        readings.append(("libbson reading Reef's output", { try Document(libbsonJSON: reefText) }))
      } else {
        skippedLibbsonReadings += 1
      }
      for (what, read) in readings {
        do {
          if let difference = differenceUpToLossyValues(try read(), doc) {
            Issue.record("\(what): \(difference)\ndocument: \(hexString(doc.bytes))\nReef: \(reefText)")
          }
        } catch {
          Issue.record("\(what) failed: \(error)\ndocument: \(hexString(doc.bytes))\nReef: \(reefText)")
        }
      }
    }
    print(
      """
      DifferentialExtendedJSONTests: \(checked) canonical round trips; libbson's parser skipped for \
      \(skippedLibbsonReadings) documents with code or DBPointers in arrays or code in scopes
      """)
  }

  /// Relaxed Extended JSON is stable through Reef (corpus assertion
  /// `bson_to_relaxed_extended_json(json_to_bson(rEJ)) = rEJ`).
  @Test func relaxedOutputIsStableThroughReef() async {
    await propertyCheck(count: Self.documentCount, input: DocumentGenerator().generator) { generated in
      let text = generated.reef.extendedJSON(.relaxed)
      do {
        let again = try Document(extendedJSON: text).extendedJSON(.relaxed)
        #expect(again == text, "document: \(hexString(generated.reef.bytes))")
      } catch {
        Issue.record("Reef cannot read its relaxed output: \(error)\n\(text)")
      }
    }
  }
}

/// The first difference between two documents, where any two double NaNs count as equal and
/// Decimal128 values compare by their string form (`bson_decimal128_to_string`), i.e. by value.
func differenceUpToLossyValues(_ a: Document, _ b: Document, path: String = "$") -> String? {
  let x = Array(a)
  let y = Array(b)
  guard x.count == y.count else { return "\(path): \(x.count) elements vs \(y.count)" }
  for (e, f) in zip(x, y) {
    let here = path + "." + e.key
    guard e.withUnsafeKeyBytes({ k in f.withUnsafeKeyBytes { k.elementsEqual($0) } }) else {
      return "\(here): key vs \(String(reflecting: f.key))"
    }
    switch (e.value, f.value) {
    case (.double(let p), .double(let q)) where p.isNaN && q.isNaN: continue
    case (.decimal128(let p), .decimal128(let q)):
      guard libbsonString(p) == libbsonString(q) else { return "\(here): \(libbsonString(p)) vs \(libbsonString(q))" }
    case (.document(let p), .document(let q)):
      if let d = differenceUpToLossyValues(p, q, path: here) { return d }
    case (.array(let p), .array(let q)):
      if let d = differenceUpToLossyValues(p.document, q.document, path: here) { return d }
    case (.javascriptWithScope(let p), .javascriptWithScope(let q)):
      guard p.code.utf8.elementsEqual(q.code.utf8) else { return "\(here): code differs" }
      if let d = differenceUpToLossyValues(p.scope, q.scope, path: here + ".$scope") { return d }
    case (let p, let q):
      if !identical(p, q) { return "\(here): \(p) vs \(q)" }
    }
  }
  return nil
}

/// libbson's string form of a Decimal128 (the Decimal128 spec's to-string algorithm), with the
/// non-canonical encodings libbson misprints first replaced by their value (see `canonicalDecimals`).
func libbsonString(_ d: Decimal128) -> String {
  let canonical = isNonCanonicalBelow2To113(d) ? Decimal128(high: d.high & 0xFFFE_0000_0000_0000, low: 0) : d
  var dec = bson_decimal128_t(low: canonical.low, high: canonical.high)
  var buffer = [CChar](repeating: 0, count: Int(BSON_DECIMAL128_STRING))
  bson_decimal128_to_string(&dec, &buffer)
  return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// Whether a document has what libbson 1.23's JSON parser (`bson_new_from_json`) reads wrongly:
/// - `{"$code": …}`, `{"$code": …, "$scope": …}` or `{"$dbPointer": …}` as an array element gets a
///   garbage array key (for example "\u{FC}" or "6" instead of "0");
/// - inside `"$scope"`, the `{"$code": …}` wrapper is not recognised: it is stored as a sub-document
///   with a "$code" string, or the parse fails with "Error storing Javascript code".
/// Both are libbson bugs: the Extended JSON spec's Conversion table defines these wrappers for any
/// value position. Only the libbson-parser direction of the round trip skips such documents.
func libbsonParserMisreads(_ fields: [Field]) -> Bool {
  func isCode(_ node: Node) -> Bool {
    switch node {
    case .codeWithScope, .scalar(.javascript), .scalar(.javascriptWithScope): true
    default: false
    }
  }
  func isMisreadInArray(_ node: Node) -> Bool {
    if case .scalar(.dbPointer) = node { return true }
    return isCode(node)
  }
  func containsCode(_ node: Node) -> Bool {
    switch node {
    case .document(let f): f.contains { containsCode($0.value) }
    case .array(let items): items.contains(where: containsCode)
    case .codeWithScope: true
    case .scalar: isCode(node)
    }
  }
  func check(_ node: Node) -> Bool {
    switch node {
    case .document(let f): f.contains { check($0.value) }
    case .array(let items): items.contains { isMisreadInArray($0) || check($0) }
    case .codeWithScope(_, let scope): scope.contains { containsCode($0.value) || check($0.value) }
    case .scalar: false
    }
  }
  return fields.contains { check($0.value) }
}
