import ArgumentParser
import ReefBSON

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The Extended JSON v2 output forms, as command line values.
public enum JSONFormat: String, ExpressibleByArgument, CaseIterable, Sendable {
  /// Type-preserving: every number and date wrapped.
  case canonical
  /// Human-friendly: plain JSON numbers and ISO-8601 dates where lossless.
  case relaxed

  /// The library's mode for this format.
  public var mode: ExtendedJSONMode {
    switch self {
    case .canonical: .canonical
    case .relaxed: .relaxed
    }
  }
}

extension ByteSink {
  /// Writes `document` as its BSON bytes, or, given a `mode`, as one Extended JSON line.
  func write(_ document: Document, as mode: ExtendedJSONMode?, pretty: Bool = false) throws(BSONError) {
    guard let mode else {
      try document.withUnsafeBytes { bytes throws(BSONError) in try write(bytes) }
      return
    }
    try append { buffer in
      document.appendExtendedJSON(to: &buffer, mode: mode, pretty: pretty)
      buffer.append(0x0A)
    }
  }
}

/// Writes `message` and a newline to standard error, unbuffered.
func printError(_ message: String) {
  var bytes = Array(message.utf8)
  bytes.append(0x0A)
  bytes.withUnsafeBytes { raw in
    var offset = 0
    while offset < raw.count {
      let n = write(2, raw.baseAddress! + offset, raw.count - offset)
      if n < 0 && errno == EINTR { continue }
      if n <= 0 { return }
      offset += n
    }
  }
}

/// Reports a data or I/O error on standard error and returns the exit code to throw (1).
///
/// Data errors are prefixed with the input's name; I/O errors name their file themselves.
func failure(_ error: BSONError, input: String) -> ExitCode {
  if error.kind == .io {
    printError("reef: error: \(error)")
  } else {
    printError("reef: error: \(input == "-" ? "<stdin>" : input): \(error)")
  }
  return ExitCode.failure
}

/// Opens `path` for a command that reads BSON only (`dump`, `validate`): Extended JSON text is
/// refused with what to run instead (read as BSON, its first bytes would make a nonsensical
/// document length).
func openBSON(_ path: String, options: ValidationOptions, command: String) throws(BSONError) -> BSONStreamReader {
  let source = try ByteSource(path: path)
  let format = try DocumentStreamFormat.detect(source, maximumSize: options.maximumSize)
  guard !format.isExtendedJSON else {
    let form = format == .extendedJSONArray ? "a JSON array of documents" : "Extended JSON text"
    throw BSONError(
      .invalidValue,
      "expected BSON, found \(form): reef \(command) reads BSON (mongodump's .bson files); convert JSON with 'reef convert INPUT OUTPUT.bson', or query it with 'reef query'",
      offset: 0, documentIndex: 0)
  }
  return BSONStreamReader(source: source, options: options)
}

/// Whether standard output is a terminal.
func standardOutputIsTerminal() -> Bool { isatty(1) != 0 }

/// Whether two paths name the same existing file.
func isSameFile(_ a: String, _ b: String) -> Bool {
  var sa = stat()
  var sb = stat()
  guard stat(a, &sa) == 0, stat(b, &sb) == 0 else { return false }
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino
}

/// Validation limits shared by the commands that read BSON.
public struct ValidationFlags: ParsableArguments {
  /// The deepest nesting of documents and arrays accepted; `nil` for the command's default.
  @Option(
    name: .customLong("max-depth"),
    help: ArgumentHelp(
      "Deepest nesting of documents and arrays accepted (default: no limit for files read and written;"
        + " 100, MongoDB's limit, for what a store keeps).", valueName: "n"))
  public var maximumDepth: Int?

  /// Whether array keys must be "0", "1", … in order.
  @Flag(
    name: .customLong("strict-array-keys"),
    help: ArgumentHelp(
      "Refuse arrays whose keys are not \"0\", \"1\", … in order. By default they are read, as libbson and"
        + " MongoDB read them (the BSON corpus calls them degenerate), and printed renumbered."))
  public var strictArrayKeys = false

  /// Creates the flags (ArgumentParser fills in their values).
  public init() {}

  /// Checks that the depth is usable.
  public func validate() throws {
    if let maximumDepth, maximumDepth < 0 {
      throw ValidationError("--max-depth must be 0 or more, found \(maximumDepth)")
    }
  }

  /// The library options these flags describe for a file tool (`dump`, `convert`, `query`,
  /// `validate`): no depth limit unless `--max-depth` sets one. Validation and Extended JSON
  /// output do not recurse, so any depth is safe.
  public var options: ValidationOptions { options(defaultDepth: ValidationOptions.unlimitedDepth) }

  /// The library options these flags describe, with `defaultDepth` when `--max-depth` is absent.
  public func options(defaultDepth: Int) -> ValidationOptions {
    ValidationOptions(maximumDepth: maximumDepth ?? defaultDepth, checksArrayKeys: strictArrayKeys)
  }
}

/// `--skip-invalid` for the commands that read a stream of documents (`dump`, `convert`, `query`).
public struct SkipFlags: ParsableArguments {
  /// Whether to step over damaged documents.
  @Flag(
    help: ArgumentHelp(
      "Skip each damaged document and go on with the next, as bsondump does, when the stream's framing"
        + " allows: in BSON, when its length prefix is plausible; in Extended JSON, when its braces balance."
        + " Each skipped document is reported on standard error with its index, position and reason, and the"
        + " exit code is then 1."))
  public var skipInvalid = false

  /// Creates the flags (ArgumentParser fills in their values).
  public init() {}

  /// With `--skip-invalid`, makes `reader` report each damaged document it steps over on
  /// standard error, and returns the counter of those documents; `nil` without the flag.
  func install(on reader: inout BSONStreamReader, input: String) -> SkipCounter? {
    install(input: input) { reader.onDamagedDocument = $0 }
  }

  /// With `--skip-invalid`, makes an Extended JSON `reader` report each damaged document it steps
  /// over, and returns the counter of those documents; `nil` without the flag.
  func install(on reader: inout ExtendedJSONStreamReader, input: String) -> SkipCounter? {
    install(input: input) { reader.onDamagedDocument = $0 }
  }

  /// With `--skip-invalid`, gives `setHandler` the handler that reports each damaged document on
  /// standard error, and returns the counter of those documents; `nil` without the flag.
  func install(input: String, _ setHandler: (@escaping (BSONError) -> Void) -> Void) -> SkipCounter? {
    guard skipInvalid else { return nil }
    let counter = SkipCounter()
    let name = input == "-" ? "<stdin>" : input
    setHandler { error in
      counter.count += 1
      printError("reef: skipped: \(name): \(error)")
    }
    return counter
  }
}

/// The number of damaged documents a reader stepped over.
final class SkipCounter {
  var count = 0

  /// Reports the total on standard error and returns the exit code to throw (1) when any
  /// document was skipped; `nil` when none was.
  func failureIfAny() -> ExitCode? {
    guard count > 0 else { return nil }
    printError("reef: \(count == 1 ? "1 document" : "\(count) documents") skipped")
    return ExitCode.failure
  }
}
