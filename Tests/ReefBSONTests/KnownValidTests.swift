@_spi(ReefInternal) import ReefBSON
import Testing

/// `Document.isKnownValid`: which documents the store may write without validating them again.
@Suite struct KnownValidTests {
  let bytes: [UInt8] = {
    var builder = DocumentBuilder()
    builder.append("name", "Ann")
    builder.appendDocument("address") { $0.append("city", "Los Angeles") }
    builder.appendArray("tags") { $0.append("a") }
    return builder.document.bytes
  }()

  @Test func documentsValidatedWithTheDefaultOptionsOrStricterAreKnownValid() throws {
    let copied = try Document(bytes: bytes)
    #expect(copied.isKnownValid)
    let borrowed = try bytes.withUnsafeBytes { raw in try Document(bytesNoCopy: raw, owner: nil).isKnownValid }
    #expect(borrowed)
    #expect(try Document(bytes: bytes, options: ValidationOptions(maximumDepth: 10, maximumSize: 1_000)).isKnownValid)
    // What they contain is valid too.
    guard case .document(let address)? = copied["address"], case .array(let tags)? = copied["tags"] else {
      Issue.record("expected the nested document and array")
      return
    }
    #expect(address.isKnownValid)
    #expect(tags.document.isKnownValid)
    // A copy of a document the store validated when it wrote it.
    let stored = bytes.withUnsafeBytes { Document(storedCopying: $0) }
    #expect(stored.isKnownValid)
    #expect(stored.bytes == bytes)
  }

  @Test func documentsValidatedMoreLeniently_builtOrTrustedAreNot() throws {
    #expect(!(try Document(bytes: bytes, options: ValidationOptions(checksUTF8: false)).isKnownValid))
    #expect(!(try Document(bytes: bytes, options: ValidationOptions(checksArrayKeys: false)).isKnownValid))
    #expect(!(try Document(bytes: bytes, options: ValidationOptions(maximumDepth: 200)).isKnownValid))
    #expect(!(try Document(bytes: bytes, options: ValidationOptions(maximumSize: 1 << 30)).isKnownValid))
    var builder = DocumentBuilder()
    builder.append("name", "Ann")
    #expect(!builder.document.isKnownValid)
    #expect(!Document().isKnownValid)
    bytes.withUnsafeBytes { raw in
      #expect(!Document(trustedBytesNoCopy: raw, owner: nil).isKnownValid)
      #expect(!Document(trustedCopying: raw).isKnownValid)
    }
  }
}
