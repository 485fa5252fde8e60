import ReefSwift
import Testing

/// A thread-safe reference resolved in a `Reef` of another file.
@Suite struct ReferenceToAnotherFileTests {
  @Test func aReferenceResolvedInAnotherFilesReefIsNilAndIsUsedUp() async throws {
    let (reef, _) = try openReef("source")
    let dog = Dog()
    dog.name = "Rex"
    try reef.write { reef.add(dog) }
    let reference = ThreadSafeReference(to: dog)
    let (other, _) = try openReef("other")
    #expect(other.resolve(reference) == nil)
    #expect(reference.isInvalidated)
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let (reef, _) = try openReef("source")
        let dog = Dog()
        try reef.write { reef.add(dog) }
        let reference = ThreadSafeReference(to: dog)
        let (other, _) = try openReef("other")
        _ = other.resolve(reference)
        _ = reef.resolve(reference)
      }
    }
    let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(text.contains("Can only resolve a thread safe reference once"), "\(text)")
  }
}
