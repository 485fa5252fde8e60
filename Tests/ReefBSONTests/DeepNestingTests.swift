import ReefBSON
import ReefTestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Validation and Extended JSON output walk nested documents with a list of their own instead of
/// recursing, so a document of any depth gives an answer on a thread with a small stack, not a
/// crash (with recursion, about 500 levels overflowed a 512 KiB thread).
@Suite("Deep nesting")
struct DeepNestingTests {
  /// `{"a": {"a": … {} …}}` with `levels` embedded documents below the top-level one: each
  /// document is its 4-byte length, `03 "a" 00`, its child and a terminator, so the one at depth
  /// `d` starts at byte `7 * d`.
  static func nested(_ levels: Int) -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(8 * levels + 5)
    for depth in 0..<levels {
      bytes += le32(Int32(5 + 8 * (levels - depth)))
      bytes += [0x03, 0x61, 0x00]
    }
    bytes += [5, 0, 0, 0, 0]
    bytes += [UInt8](repeating: 0, count: levels)
    return bytes
  }

  /// A box that carries a closure to a thread and its result back.
  final class Job: @unchecked Sendable {
    let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }
  }

  /// Runs `body` on a new thread whose stack is `stackSize` bytes, and waits for it.
  static func onSmallStack(_ stackSize: Int = 256 * 1024, _ body: @escaping () -> Void) {
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    defer { pthread_attr_destroy(&attributes) }
    pthread_attr_setstacksize(&attributes, stackSize)
    let job = Unmanaged.passRetained(Job(body)).toOpaque()
    #if canImport(Glibc)
      var thread = pthread_t()
    #else
      var thread: pthread_t?
    #endif
    let created = pthread_create(
      &thread, &attributes,
      { raw in
        Unmanaged<Job>.fromOpaque(raw!).takeRetainedValue().body()
        return nil
      }, job)
    precondition(created == 0, "pthread_create failed: \(created)")
    #if canImport(Glibc)
      pthread_join(thread, nil)
    #else
      pthread_join(thread!, nil)
    #endif
  }

  /// What a validation on the small-stack thread gave.
  final class Outcome: @unchecked Sendable {
    var error: BSONError?
    var document: Document?
    var json: String?
  }

  @Test("100,000 levels on a 256 KiB thread: refused past the limit, with its offset and key path")
  func refusedPastTheLimit() {
    let bytes = Self.nested(100_000)
    let outcome = Outcome()
    Self.onSmallStack {
      do throws(BSONError) {
        outcome.document = try Document(bytes: bytes)
      } catch {
        outcome.error = error
      }
    }
    #expect(outcome.document == nil)
    let error = outcome.error
    #expect(error?.kind == .depthLimitExceeded)
    // The 101st embedded document starts at 7 * 101.
    #expect(error?.offset == 707)
    #expect(error?.keyPath == Array(repeating: "a", count: 101))
  }

  @Test("100,000 levels on a 256 KiB thread: accepted with no limit, and printed as Extended JSON")
  func acceptedWithoutALimit() throws {
    let levels = 100_000
    let bytes = Self.nested(levels)
    let outcome = Outcome()
    Self.onSmallStack {
      do throws(BSONError) {
        let document = try Document(
          bytes: bytes, options: ValidationOptions(maximumDepth: ValidationOptions.unlimitedDepth))
        outcome.document = document
        outcome.json = document.extendedJSON(.canonical)
      } catch {
        outcome.error = error
      }
    }
    #expect(outcome.error == nil)
    #expect(outcome.document?.byteCount == 8 * levels + 5)
    let expected = String(repeating: #"{"a":"#, count: levels) + "{}" + String(repeating: "}", count: levels)
    #expect(outcome.json == expected)
  }

  @Test("a limit deeper than the thread's stack could recurse is enforced, not a crash")
  func deepLimit() {
    let bytes = Self.nested(100_000)
    let outcome = Outcome()
    Self.onSmallStack {
      do throws(BSONError) {
        outcome.document = try Document(bytes: bytes, options: ValidationOptions(maximumDepth: 50_000))
      } catch {
        outcome.error = error
      }
    }
    #expect(outcome.error?.kind == .depthLimitExceeded)
    #expect(outcome.error?.offset == 7 * 50_001)
    #expect(outcome.error?.keyPath.count == 50_001)
  }

  @Test("an error deep inside keeps its offset and whole key path")
  func deepError() {
    var bytes = Self.nested(1_000)
    // Break the innermost document's terminator.
    bytes[7 * 1_000 + 4] = 1
    do {
      _ = try Document(bytes: bytes, options: ValidationOptions(maximumDepth: ValidationOptions.unlimitedDepth))
      Issue.record("accepted a broken terminator")
    } catch {
      #expect(error.kind == .missingTerminator)
      #expect(error.offset == 7 * 1_000 + 4)
      #expect(error.keyPath == Array(repeating: "a", count: 1_000))
    }
  }

  @Test("pretty output of nested documents, arrays and code with scope is unchanged")
  func prettyNesting() throws {
    let document = try Document(
      extendedJSON: #"{"a": [1, {"b": []}, {"$code": "x", "$scope": {"c": {"d": [2]}}}], "e": {}}"#)
    #expect(
      document.extendedJSON(.relaxed)
        == #"{"a":[1,{"b":[]},{"$code":"x","$scope":{"c":{"d":[2]}}}],"e":{}}"#)
    let pretty = document.extendedJSON(.relaxed, pretty: true)
    #expect(
      pretty == """
        {
          "a": [
            1,
            {
              "b": []
            },
            {
              "$code": "x",
              "$scope": {
                "c": {
                  "d": [
                    2
                  ]
                }
              }
            }
          ],
          "e": {}
        }
        """)
  }
}
