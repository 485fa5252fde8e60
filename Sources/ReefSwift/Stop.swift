// The stops a user can reach: a failure that Realm reports with an Objective-C exception (which
// ends the program), or a rule broken where the API cannot throw. Every such stop in ReefSwift
// goes through these two functions, so that its message is printed in release builds too:
// `precondition` and `preconditionFailure` drop their message under `-O` (the user would see a
// bare "illegal instruction"), `fatalError` keeps it.
//
// This file imports nothing: a test compiles it alone with `swiftc -O` and checks that a stop
// still prints its message there.

/// Stops the program with `message` (kept in release builds).
///
/// - Parameters:
///   - message: what went wrong, in Realm's words where Realm has them.
///   - file: the file the stop is reported in.
///   - line: the line the stop is reported at.
@inline(never) @usableFromInline
func reefStop(_ message: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line) -> Never {
  fatalError(message(), file: file, line: line)
}

/// Stops the program with `message` (kept in release builds) unless `condition` holds.
///
/// - Parameters:
///   - condition: what must hold.
///   - message: what went wrong, read only when the program stops.
///   - file: the file the stop is reported in.
///   - line: the line the stop is reported at.
@inlinable @inline(__always)
func reefRequire(
  _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String, file: StaticString = #fileID,
  line: UInt = #line
) {
  if !condition() { reefStop(message(), file: file, line: line) }
}
