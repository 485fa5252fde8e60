import ArgumentParser
import ReefBSON
import ReefQuery
import ReefStore

/// The output forms of `reef query`.
public enum QueryOutputFormat: String, ExpressibleByArgument, CaseIterable, Sendable {
  /// Canonical Extended JSON v2, one document per line.
  case canonical
  /// Relaxed Extended JSON v2, one document per line.
  case relaxed
  /// Concatenated BSON documents.
  case bson
}

/// `reef query`: the documents of a BSON or Extended JSON stream that match a filter or a predicate.
public struct QueryCommand: ParsableCommand {
  /// The command's name, help text and examples.
  public static let configuration = CommandConfiguration(
    commandName: "query",
    abstract: "Print the documents of a BSON or Extended JSON stream that match a MongoDB filter or a Realm predicate.",
    discussion: """
      Reads concatenated BSON documents, or Extended JSON as mongoexport writes it (one document \
      per line, or a --jsonArray array; told apart from the first bytes), .gz too, and writes those that match, in input order \
      unless --sort is given, as Extended JSON lines (canonical by default) or BSON. With neither \
      --filter nor --where, every document matches. --skip and --limit apply after sorting; \
      --count prints only the number of results (after --skip and --limit).

      Results stream: nothing holds every match. A sort with --limit keeps only --skip + --limit \
      documents; one without holds up to --sort-memory MB (100 by default) and writes sorted \
      runs to temporary files in --temp-dir past that, removed when the query ends. A BSON \
      stream is validated and tested on --threads threads (one per processor by default), in \
      chunks of about 1 MB, and its results still come in stream order.

      --filter takes a MongoDB filter document in Extended JSON; --where takes a Realm-style \
      predicate, whose %@ and $0…$n come from --arg values (Extended JSON, one per --arg) and \
      which may end in SORT(…), DISTINCT(…) and LIMIT(…).

      A filter or predicate that cannot be compiled exits 1 with the position of the problem; \
      a malformed document in the stream is reported as by reef dump (exit 1), and skipped with \
      --skip-invalid as reef dump skips it (in Extended JSON, a document whose braces balance).

      Examples:
        reef query contacts.bson --filter '{"address.city": "Los Angeles"}'
        reef query contacts.bson --where 'ANY addresses.city BEGINSWITH[c] $0' --arg '"new"'
        reef query dump/shop/orders.bson.gz --filter '{"total": {"$gte": 100}}' --sort '{"total": -1}' --limit 10
        reef query contacts.bson --where 'name != nil' --project '{"name": 1}' --format relaxed
        reef query contacts.bson --filter '{"type": "Business"}' --count
        reef query --store app.reef --collection contacts --filter '{"address.city": "Paris"}'
      """
  )

  /// The input file; `-` (the default) reads standard input.
  @Argument(help: ArgumentHelp("The BSON or Extended JSON file to read, or - for standard input.", valueName: "path"))
  public var path: String = "-"

  /// A store to query instead of a stream.
  @Option(help: ArgumentHelp("Query a collection of this store instead of a BSON stream.", valueName: "path"))
  public var store: String?

  /// The collection, with --store.
  @Option(help: ArgumentHelp("The collection to query (with --store).", valueName: "name"))
  public var collection: String?

  /// A MongoDB filter document.
  // The next argument is the value even when it starts with "-" (a negative --arg, a predicate
  // starting with a minus): --filter=-… works as well.
  @Option(
    parsing: .unconditional,
    help: ArgumentHelp(
      "A MongoDB filter document (Extended JSON). The next argument is taken as the filter even when it"
        + " starts with -; --filter=<json> works too.", valueName: "json"))
  public var filter: String?

  /// A Realm-style predicate.
  @Option(
    name: .customLong("where"), parsing: .unconditional,
    help: ArgumentHelp(
      "A Realm-style predicate string (taken as given even when it starts with -; --where=<predicate> works too).",
      valueName: "predicate"))
  public var predicate: String?

  /// Arguments for the predicate's `%@` and `$0…$n`.
  @Option(
    name: .customLong("arg"), parsing: .unconditionalSingleValue,
    help: ArgumentHelp(
      "A predicate argument (Extended JSON value; -5 is a value, not an option).", valueName: "value"))
  public var arguments: [String] = []

  /// A MongoDB sort document.
  @Option(help: ArgumentHelp("A sort document: {\"field\": 1 or -1, …}.", valueName: "json"))
  public var sort: String?

  /// Results to drop from the front.
  @Option(help: ArgumentHelp("Results to skip.", valueName: "n"))
  public var skip: Int = 0

  /// The most results to print.
  @Option(help: ArgumentHelp("The most results to print (0: no limit).", valueName: "n"))
  public var limit: Int = 0

  /// A MongoDB projection document.
  @Option(name: .customLong("project"), help: ArgumentHelp("A projection document.", valueName: "json"))
  public var projection: String?

  /// The output form.
  @Option(help: "Output form: canonical, relaxed or bson.")
  public var format: QueryOutputFormat = .canonical

  /// Print only the number of results.
  @Flag(help: "Print only the number of results.")
  public var count = false

  /// The memory a sort without --limit may hold before it spills to temporary files, in MB.
  @Option(
    name: .customLong("sort-memory"),
    help: ArgumentHelp(
      "The memory a sort without --limit may hold before it writes sorted runs to temporary files, in MB.",
      valueName: "MB"))
  public var sortMemory: Int = 100

  /// Where a sort's temporary files go.
  @Option(
    name: .customLong("temp-dir"),
    help: ArgumentHelp("The directory of a sort's temporary files (default: $TMPDIR or /tmp).", valueName: "path"))
  public var temporaryDirectory: String?

  /// The threads that validate and test a stream's documents.
  @Option(
    help: ArgumentHelp(
      "The threads that validate and test the documents of a BSON stream (default: one per processor,"
        + " at most 8).", valueName: "n"))
  public var threads: Int?

  /// Validation limits.
  @OptionGroup public var validation: ValidationFlags

  /// Whether to step over damaged documents.
  @OptionGroup public var skipping: SkipFlags

  /// Creates the command (ArgumentParser fills in its properties).
  public init() {}

  /// Checks the combination of options.
  public func validate() throws {
    if filter != nil && predicate != nil { throw ValidationError("give --filter or --where, not both") }
    if (store == nil) != (collection == nil) { throw ValidationError("--store and --collection go together") }
    if store != nil && path != "-" { throw ValidationError("give a file or --store, not both") }
    if !arguments.isEmpty && predicate == nil { throw ValidationError("--arg needs --where") }
    guard skip >= 0 else { throw ValidationError("--skip must be 0 or more, found \(skip)") }
    guard limit >= 0 else { throw ValidationError("--limit must be 0 or more, found \(limit)") }
    if let threads, !(1...64).contains(threads) {
      throw ValidationError("--threads must be between 1 and 64, found \(threads)")
    }
    guard sortMemory > 0 else { throw ValidationError("--sort-memory must be 1 MB or more, found \(sortMemory)") }
  }

  /// Runs the query.
  public func run() throws {
    let query: Query
    let options: FindOptions
    do {
      query = try compileQuery()
      var sortSpecification: SortSpecification?
      if let sort {
        let document = try parseJSON(sort, option: "--sort")
        sortSpecification = try compiled("--sort") { () throws(QueryError) in try SortSpecification(document) }
      }
      var projector: Projection?
      if let projection {
        let document = try parseJSON(projection, option: "--project")
        projector = try compiled("--project") { () throws(QueryError) in try Projection(document) }
      }
      let memory = SortMemory(limit: sortMemory * 1_048_576, temporaryDirectory: temporaryDirectory)
      options = FindOptions(
        sort: sortSpecification, skip: skip, limit: limit, projection: projector, sortMemory: memory)
    } catch {
      printError("reef: error: \(error.message)")
      throw ExitCode.failure
    }

    let out = try ByteSink.standardOutput()
    if let store, let collection {
      try runOnStore(store, collection, query, options, out)
      return
    }
    let source: ByteSource
    let format: DocumentStreamFormat
    do {
      source = try ByteSource(path: path)
      format = try DocumentStreamFormat.detect(source, maximumSize: validation.options.maximumSize)
    } catch {
      throw failure(error, input: path)
    }
    if format.isExtendedJSON {
      // mongoexport's output: one document per line, or an array.
      var reader = ExtendedJSONStreamReader(source: source, options: validation.options)
      let skipped = skipping.install(on: &reader, input: path)
      try run(FindStream(reader, query: query, options: options), out: out, skipped: skipped)
      return
    }
    // Documents are validated and tested on every core, in chunks, and come back in stream order;
    // a sort keeps a top-k, or spills past --sort-memory.
    let scan = ParallelStreamScan(
      source: source, options: validation.options, query: query,
      threads: threads ?? ParallelStreamScan.defaultThreadCount)
    defer { scan.close() }
    let skipped = skipping.install(input: path) { scan.onDamagedDocument = $0 }
    try run(
      FindStream(scan, query: query, options: options, sourceMatches: true, lifetime: .borrowed), out: out,
      skipped: skipped)
  }

  /// Writes the results of a find over a file, then reports what was skipped.
  func run<Source: DocumentSource>(_ stream: FindStream<Source>, out: ByteSink, skipped: SkipCounter?) throws {
    var results = stream
    defer { results.close() }
    do {
      try emit(&results, to: out)
      try out.close()
    } catch let error as BSONError {
      try? out.close()
      _ = skipped?.failureIfAny()
      throw failure(error, input: path)
    } catch {
      try? out.close()
      _ = skipped?.failureIfAny()
      throw failure(error)
    }
    if let code = skipped?.failureIfAny() { throw code }
  }

  /// Runs the query on a collection of a store (through its indexes when they help).
  func runOnStore(_ path: String, _ name: String, _ query: Query, _ options: FindOptions, _ out: ByteSink) throws {
    try withStore(path, readOnly: true) { store in
      let results = try store.collection(name).find(query, options: options)
      defer { results.close() }
      try emit(results, to: out)
    }
    do {
      try out.close()
    } catch {
      throw failure(error, input: "-")
    }
  }

  /// Writes a store query's results, or their number with --count.
  func emit(_ results: Cursor, to out: ByteSink) throws {
    if count {
      let number = try results.count()
      try out.write("\(number)\n")
      return
    }
    while let document = try results.next() { try write(document, to: out) }
  }

  /// Writes a stream query's results, or their number with --count.
  func emit<Source: DocumentSource>(_ results: inout FindStream<Source>, to out: ByteSink) throws {
    if count {
      let number = try results.count()
      try out.write("\(number)\n")
      return
    }
    while let document = try results.next() { try write(document, to: out) }
  }

  /// Writes one result in the chosen format: BSON, or an Extended JSON line.
  func write(_ document: Document, to out: ByteSink) throws(BSONError) {
    let mode: ExtendedJSONMode? =
      switch format {
      case .bson: nil
      case .canonical: .canonical
      case .relaxed: .relaxed
      }
    try out.write(document, as: mode)
  }

  func compileQuery() throws(CommandError) -> Query {
    if let predicate {
      var values: [BSON] = []
      for (index, argument) in arguments.enumerated() {
        values.append(try parseValue(argument, option: "--arg \(index + 1)"))
      }
      return try compiled("--where") { () throws(QueryError) in try Query(predicate: predicate, arguments: values) }
    }
    guard let filter else {
      return try compiled("--filter") { () throws(QueryError) in try Query(.constant(true)) }
    }
    if filter.allSatisfy(\.isWhitespace) {
      throw CommandError(
        message:
          "--filter: expected a filter document such as {\"a\": 1}, found an empty string (leave out --filter, or"
          + " give {}, to match every document)")
    }
    let document = try parseJSON(filter, option: "--filter")
    return try compiled("--filter") { () throws(QueryError) in try Query(filter: document) }
  }
}

/// A problem with a command line value, already phrased for the user.
struct CommandError: Error {
  var message: String
}

/// Runs `body`, turning a query error into a message that names the option.
private func compiled<T>(_ option: String, _ body: () throws(QueryError) -> T) throws(CommandError) -> T {
  do {
    return try body()
  } catch {
    var message = "\(option): \(error.message)"
    if let column = error.column { message += " (column \(column))" }
    if !error.keyPath.isEmpty { message += " (at \(BSONError.printableKeyPath(error.keyPath)))" }
    throw CommandError(message: message)
  }
}

/// Parses an option's Extended JSON document.
private func parseJSON(_ text: String, option: String) throws(CommandError) -> Document {
  do {
    return try Document(extendedJSON: text)
  } catch {
    var message = "\(option): \(error.message)"
    if let line = error.line, let column = error.column { message += " (line \(line), column \(column))" }
    throw CommandError(message: message)
  }
}

/// Parses one Extended JSON value, as `--arg` takes it.
private func parseValue(_ text: String, option: String) throws(CommandError) -> BSON {
  let prefix = #"{"v": "#
  do {
    let document = try Document(extendedJSON: prefix + text + "}")
    guard let value = document["v"], document.count == 1 else {
      throw CommandError(message: "\(option): expected one Extended JSON value, found \(text)")
    }
    return value
  } catch let error as BSONError {
    var message = "\(option): \(error.message)"
    if let column = error.column, error.line == 1 { message += " (column \(max(1, column - prefix.count)))" }
    throw CommandError(message: message)
  } catch {
    throw error as! CommandError
  }
}
