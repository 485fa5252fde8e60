/// The sanitizer the tests run under: `make sanitize` sets `REEF_SANITIZER` to `address` or
/// `thread` for its runs.
///
/// Some tests cannot run under a sanitizer (recursion deep enough to overflow the larger stack
/// frames of an instrumented build, measurements of memory the sanitizer's own shadow memory
/// disturbs); they skip that part with ``skipped(under:because:)``, which prints why, so that the
/// output of every run says what was left out.
public enum Sanitizer: String, Sendable {
  case address
  case thread

  /// The sanitizer of this run (`REEF_SANITIZER`), or nil.
  public static let current: Sanitizer? = getenvString("REEF_SANITIZER").flatMap(Sanitizer.init(rawValue:))

  /// The sanitizer's name, as its reports print it.
  public var name: String {
    switch self {
    case .address: "AddressSanitizer"
    case .thread: "ThreadSanitizer"
    }
  }

  /// Whether this run is under one of `sanitizers`; if so, prints "skipped under <name>:
  /// `reason`" (with `what`, the test or case left out) for the caller to return.
  public static func skipped(under sanitizers: Set<Sanitizer>, _ what: String, because reason: String) -> Bool {
    guard let current, sanitizers.contains(current) else { return false }
    print("\(what): skipped under \(current.name): \(reason)")
    return true
  }
}
