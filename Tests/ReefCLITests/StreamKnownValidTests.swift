@_spi(ReefInternal) import ReefBSON
import ReefTestSupport
import Testing

/// Documents read by a `BSONStreamReader` were validated by it: with the default options or
/// stricter ones they are known valid, so a store need not validate them again.
@Suite struct StreamKnownValidTests {
  func readFirst(options: ValidationOptions) throws -> Document? {
    let dir = try TemporaryDirectory()
    let path = try dir.write("two.bson", stream(sampleDocuments(count: 2)))
    var reader = try BSONStreamReader(path: path, options: options)
    return try reader.next()
  }

  @Test func documentsReadWithTheDefaultOptionsOrStricterAreKnownValid() throws {
    #expect(try readFirst(options: .default)?.isKnownValid == true)
    #expect(try readFirst(options: ValidationOptions(maximumDepth: 10))?.isKnownValid == true)
  }

  @Test func documentsReadWithLooserOptionsAreNot() throws {
    #expect(try readFirst(options: ValidationOptions(maximumDepth: 200))?.isKnownValid == false)
    #expect(try readFirst(options: ValidationOptions(checksUTF8: false))?.isKnownValid == false)
  }
}
