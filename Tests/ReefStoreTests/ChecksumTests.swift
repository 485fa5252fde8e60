import CLMDB
import ReefTestSupport
import Testing

/// CRC-32C, which the commit log's headers and records carry (`Specs/store/log.md`): the
/// published check values, and the same result from the SSE 4.2 instruction and the table.
@Suite struct ChecksumTests {
  @Test func publishedCheckValues() {
    func crc(_ bytes: [UInt8]) -> UInt32 { bytes.withUnsafeBytes { reef_crc32c($0.baseAddress, $0.count) } }
    #expect(crc(Array("123456789".utf8)) == 0xE306_9283)
    // RFC 3720 (iSCSI), appendix B.4.
    #expect(crc([UInt8](repeating: 0, count: 32)) == 0x8A91_36AA)
    #expect(crc([UInt8](repeating: 0xFF, count: 32)) == 0x62A8_AB43)
    #expect(crc(Array(0...31)) == 0x46DD_794E)
    #expect(crc(Array((0...31).reversed())) == 0x113F_DB5C)
    #expect(crc([]) == 0)
  }

  @Test func theInstructionAndTheTableAgree() {
    var random = SplitMix64(seed: 0x9E37_79B9_7F4A_7C15)
    for count in [0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 1_000, 4_096, 4_099] {
      let bytes = (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next() >> 56) }
      bytes.withUnsafeBytes { raw in
        let base = raw.bindMemory(to: UInt8.self).baseAddress
        let table = ~reef_crc32c_bytes(0xFFFF_FFFF, base, count)
        #expect(reef_crc32c(raw.baseAddress, count) == table, "\(count) bytes")
        // A salted checksum is the checksum of the salt's 8 bytes, then the bytes.
        let salt: UInt64 = 0x0123_4567_89AB_CDEF
        let salted = le64(Int64(bitPattern: salt)) + Array(raw)
        let expected = salted.withUnsafeBytes { reef_crc32c($0.baseAddress, $0.count) }
        #expect(reef_crc32c_salted(salt, raw.baseAddress, count) == expected, "\(count) bytes, salted")
      }
    }
  }
}
