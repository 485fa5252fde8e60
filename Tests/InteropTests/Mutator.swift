import PropertyBased
import ReefTestSupport
import Testing

/// Where the interesting bytes of a valid document are: the map that targeted mutations use.
struct ByteMap {
  /// An int32 length and the positions where inserting bytes grows what it measures.
  struct LengthField {
    var offset: Int
    /// Inserting at any of these positions (before the byte there) lands inside the measured bytes.
    var insertRange: ClosedRange<Int>
  }

  var lengthFields: [LengthField] = []
  /// Zero bytes that end documents, strings, keys and regex C strings.
  var terminators: [Int] = []
  var typeBytes: [Int] = []
  var booleans: [Int] = []
  var binarySubtypes: [Int] = []
  var arrayKeys: [Range<Int>] = []
  /// Insertion points inside keys, strings and regexes (up to, not past, their terminator).
  var text: [ClosedRange<Int>] = []

  /// Maps a valid document (built by Reef; never called on untrusted bytes).
  init(validDocument bytes: [UInt8]) {
    walk(bytes, document: 0, isArray: false)
  }

  private mutating func walk(_ b: [UInt8], document start: Int, isArray: Bool) {
    let length = Int(readLE32(b, start))
    lengthFields.append(.init(offset: start, insertRange: (start + 4)...(start + length - 1)))
    terminators.append(start + length - 1)
    var p = start + 4
    while p < start + length - 1 {
      typeBytes.append(p)
      let type = b[p]
      let keyEnd = b[(p + 1)...].firstIndex(of: 0)!
      text.append((p + 1)...keyEnd)
      terminators.append(keyEnd)
      if isArray { arrayKeys.append((p + 1)..<keyEnd) }
      let v = keyEnd + 1
      switch type {
      case 0x01, 0x09, 0x11, 0x12: p = v + 8
      case 0x02, 0x0D, 0x0E: p = string(b, at: v)
      case 0x03, 0x04:
        walk(b, document: v, isArray: type == 0x04)
        p = v + Int(readLE32(b, v))
      case 0x05:
        let n = Int(readLE32(b, v))
        lengthFields.append(.init(offset: v, insertRange: (v + 5)...(v + 5 + n)))
        binarySubtypes.append(v + 4)
        if b[v + 4] == 0x02 { lengthFields.append(.init(offset: v + 5, insertRange: (v + 9)...(v + 5 + n))) }
        p = v + 5 + n
      case 0x07: p = v + 12
      case 0x08:
        booleans.append(v)
        p = v + 1
      case 0x0B:
        let patternEnd = b[v...].firstIndex(of: 0)!
        let optionsEnd = b[(patternEnd + 1)...].firstIndex(of: 0)!
        text += [v...patternEnd, (patternEnd + 1)...optionsEnd]
        terminators += [patternEnd, optionsEnd]
        p = optionsEnd + 1
      case 0x0C: p = string(b, at: v) + 12
      case 0x0F:
        let total = Int(readLE32(b, v))
        lengthFields.append(.init(offset: v, insertRange: (v + 4)...(v + total - 1)))
        walk(b, document: string(b, at: v + 4), isArray: false)
        p = v + total
      case 0x10: p = v + 4
      case 0x13: p = v + 16
      default: p = v  // undefined, null, minKey, maxKey
      }
    }
  }

  private mutating func string(_ b: [UInt8], at v: Int) -> Int {
    let n = Int(readLE32(b, v))
    lengthFields.append(.init(offset: v, insertRange: (v + 4)...(v + 4 + n - 1)))
    text.append((v + 4)...(v + 4 + n - 1))
    terminators.append(v + 4 + n - 1)
    return v + 4 + n
  }
}

func readLE32(_ b: [UInt8], _ at: Int) -> Int32 {
  Int32(bitPattern: UInt32(b[at]) | UInt32(b[at + 1]) << 8 | UInt32(b[at + 2]) << 16 | UInt32(b[at + 3]) << 24)
}

func writeLE32(_ b: inout [UInt8], _ at: Int, _ v: Int32) {
  let u = UInt32(bitPattern: v)
  for i in 0..<4 where at + i < b.count { b[at + i] = UInt8(truncatingIfNeeded: u >> (8 * UInt32(i))) }
}

/// A mutated document and the steps that made it.
struct Mutant: CustomTestStringConvertible {
  var bytes: [UInt8]
  var steps: [String] = []
  var testDescription: String { "mutant \(hexString(bytes)) (\(steps.joined(separator: "; ")))" }
}

/// Random and targeted mutations of valid documents.
enum Mutator {
  /// Byte values that tend to matter: zero, boolean-ish, ASCII edge, UTF-8 lead and continuation bytes.
  static let interestingBytes: [UInt8] = [
    0x00, 0x01, 0x02, 0x04, 0x05, 0x7F, 0x80, 0xBF, 0xC0, 0xC1, 0xC2, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF,
  ]
  /// Byte sequences to splice into text: invalid UTF-8 of every kind, NUL, and some valid characters.
  static let textPayloads: [[UInt8]] = [
    [0xC0, 0x80], [0xC0, 0x80], [0xC0, 0xAF], [0xC1, 0xBF], [0xE0, 0x80, 0x80], [0xE0, 0x9F, 0xBF],
    [0xED, 0xA0, 0x80], [0xED, 0xBF, 0xBF], [0xF0, 0x80, 0x80, 0x80], [0xF0, 0x8F, 0xBF, 0xBF],
    [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80], [0xF8, 0x88, 0x80, 0x80, 0x80], [0xFF], [0xFE], [0x80],
    [0xBF], [0xE2, 0x82], [0xF0, 0x9F, 0x98], [0xC3], [0x00], [0x00, 0x00], [0xC3, 0xA9], [0xE2, 0x82, 0xAC],
    [0xF0, 0x9F, 0x98, 0x80], [0xEF, 0xBF, 0xBF], [0xF4, 0x8F, 0xBF, 0xBF], [0x7F], [0x01], [0x41],
  ]
  static let typeBytes: [UInt8] = Array(0x01...0x13) + [0x7F, 0xFF, 0x00, 0x14, 0x80, 0xFE]

  /// One mutant of `original`, whose map is `map`.
  static func mutate(_ original: [UInt8], map: ByteMap, _ rng: inout RNG) -> Mutant {
    var m = Mutant(bytes: original)
    func pick<T>(_ xs: [T]) -> T? { xs.randomElement(using: &rng) }
    func position(_ inclusiveEnd: Bool = false) -> Int {
      Int.random(in: 0...(m.bytes.count - (inclusiveEnd ? 0 : 1)), using: &rng)
    }
    func byte() -> UInt8 { chance(0.5, &rng) ? pick(interestingBytes)! : UInt8.random(in: 0...255, using: &rng) }

    switch Int.random(in: 0..<16, using: &rng) {
    case 0:
      let at = position()
      let bit = Int.random(in: 0..<8, using: &rng)
      m.bytes[at] ^= 1 << bit
      m.steps.append("flip bit \(bit) of byte \(at)")
    case 1:
      let at = position()
      m.bytes[at] = byte()
      m.steps.append("overwrite byte \(at) with \(hexString([m.bytes[at]]))")
    case 2:
      let at = position(true)
      let inserted = (0..<Int.random(in: 1...4, using: &rng)).map { _ in byte() }
      m.bytes.insert(contentsOf: inserted, at: at)
      m.steps.append("insert \(hexString(inserted)) at \(at)")
    case 3:
      let at = position()
      let n = min(Int.random(in: 1...4, using: &rng), m.bytes.count - at)
      m.bytes.removeSubrange(at..<(at + n))
      m.steps.append("delete \(n) bytes at \(at)")
    case 4:
      let n = Int.random(in: 0..<m.bytes.count, using: &rng)
      m.bytes.removeSubrange(n...)
      m.steps.append("truncate to \(n) bytes")
    case 5, 6:
      guard let field = pick(map.lengthFields) else { break }
      let old = readLE32(m.bytes, field.offset)
      let new: Int32 =
        chance(0.6, &rng)
        ? old &+ Int32([-5, -4, -3, -2, -1, 1, 2, 3, 4, 5].randomElement(using: &rng)!)
        : pick([0, 1, 3, 4, 5, 13, 14, -1, -4, .max, .min, old &* 2, old / 2])!
      writeLE32(&m.bytes, field.offset, new)
      m.steps.append("length at \(field.offset): \(old) -> \(new)")
    case 7:
      guard let at = pick(map.terminators) else { break }
      if chance(0.7, &rng) {
        m.bytes[at] = chance(0.5, &rng) ? pick([0x01, 0x30, 0x61, 0xFF])! : UInt8.random(in: 1...255, using: &rng)
        m.steps.append("terminator at \(at) -> \(hexString([m.bytes[at]]))")
      } else {
        m.bytes.insert(0, at: at)
        m.steps.append("insert an extra zero before the terminator at \(at)")
      }
    case 8:
      guard let at = pick(map.typeBytes) else { break }
      m.bytes[at] = pick(typeBytes)!
      m.steps.append("type byte at \(at) -> \(hexString([m.bytes[at]]))")
    case 9, 10:
      guard let range = pick(map.text) else { break }
      let at = Int.random(in: range, using: &rng)
      let payload = pick(textPayloads)!
      replace(&m, at..<at, with: payload, map: map)
    case 11:
      guard let range = pick(map.text), range.count > 1 else { break }
      let at = Int.random(in: range.lowerBound..<range.upperBound, using: &rng)
      let n = min(Int.random(in: 1...3, using: &rng), range.upperBound - at)
      replace(&m, at..<(at + n), with: [], map: map)
    case 12:
      guard let at = pick(map.booleans) else { break }
      m.bytes[at] = chance(0.5, &rng) ? pick([0x02, 0x80, 0xFF, 0x10])! : UInt8.random(in: 0...255, using: &rng)
      m.steps.append("boolean at \(at) -> \(hexString([m.bytes[at]]))")
    case 13:
      guard let key = pick(map.arrayKeys) else { break }
      let replacement = pick(["", "0", "1", "00", "01", "a", "-1", "10", "٠", " 1", "99999999999"])!
      replace(&m, key, with: Array(replacement.utf8), map: map)
    case 14:
      guard let at = pick(map.binarySubtypes) else { break }
      m.bytes[at] = pick([0x00, 0x02, 0x03, 0x04, 0x80, UInt8.random(in: 0...255, using: &rng)])!
      m.steps.append("binary subtype at \(at) -> \(hexString([m.bytes[at]]))")
    default:
      // A consistently inserted or deleted run of raw bytes inside some document.
      guard let field = pick(map.lengthFields) else { break }
      let at = Int.random(in: field.insertRange, using: &rng)
      if chance(0.5, &rng) {
        replace(&m, at..<at, with: (0..<Int.random(in: 1...6, using: &rng)).map { _ in byte() }, map: map)
      } else {
        let n = min(Int.random(in: 1...6, using: &rng), field.insertRange.upperBound - at)
        replace(&m, at..<(at + n), with: [], map: map)
      }
    }
    if !m.bytes.isEmpty && (m.steps.isEmpty || chance(0.15, &rng)) {
      let at = position()
      m.bytes[at] = byte()
      m.steps.append("overwrite byte \(at) with \(hexString([m.bytes[at]]))")
    }
    // Half the time, repair the top-level length so that the mutation reaches the inner checks.
    if m.bytes.count >= 4 && chance(0.5, &rng) {
      writeLE32(&m.bytes, 0, Int32(m.bytes.count))
      m.steps.append("top-level length := \(m.bytes.count)")
    }
    return m
  }

  /// Replaces `range` with `new` and adjusts every length field (documents, strings, binary, code
  /// with scope) that measures bytes containing the range, so that the result stays well framed.
  static func replace(_ m: inout Mutant, _ range: Range<Int>, with new: [UInt8], map: ByteMap) {
    let delta = Int32(new.count - range.count)
    for field in map.lengthFields
    where field.insertRange.contains(range.lowerBound)
      && range.upperBound <= field.insertRange.upperBound
    {
      writeLE32(&m.bytes, field.offset, readLE32(m.bytes, field.offset) &+ delta)
    }
    m.bytes.replaceSubrange(range, with: new)
    m.steps.append("replace \(range) with \(hexString(new)), lengths adjusted")
  }
}
