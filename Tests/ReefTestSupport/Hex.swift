import ReefBSON

/// Bytes from a hexadecimal string (either case); traps on malformed test input.
public func bytes(hex: String) -> [UInt8] {
  let u = Array(hex.utf8)
  precondition(u.count % 2 == 0, "odd-length hex string in test data: \(hex)")
  func v(_ c: UInt8) -> UInt8 {
    switch c {
    case 48...57: return c - 48
    case 65...70: return c - 55
    case 97...102: return c - 87
    default: preconditionFailure("bad hex digit in test data: \(hex)")
    }
  }
  return stride(from: 0, to: u.count, by: 2).map { v(u[$0]) << 4 | v(u[$0 + 1]) }
}

/// Uppercase hexadecimal of bytes.
public func hexString(_ bytes: some Sequence<UInt8>) -> String {
  let digits = Array("0123456789ABCDEF".utf8)
  var out = [UInt8]()
  for b in bytes {
    out.append(digits[Int(b >> 4)])
    out.append(digits[Int(b & 15)])
  }
  return String(decoding: out, as: UTF8.self)
}
