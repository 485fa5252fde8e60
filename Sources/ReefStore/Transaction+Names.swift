extension Transaction {
  /// Checks a new collection name against Reef's and MongoDB's naming rules, so that every
  /// collection can be exported and imported again under the same name.
  ///
  /// A name with a dot is a namespace `database.collection`, split at the first dot (as export
  /// splits it); a name without one is a collection alone (export puts it under a default
  /// database).
  /// - The name is not empty, holds no NUL, and is at most 255 bytes (MongoDB's namespace limit).
  /// - It does not start with `__` unless `reserved` (the store's own collections: imports).
  /// - A database part is not empty, is shorter than 64 bytes, and holds none of `/ \ . space " $`
  ///   (MongoDB's rule for Unix and Windows alike: each database is one folder of a dump).
  /// - A collection part is not empty, holds no `$`, does not contain `.system.`, and does not
  ///   start with `system.` unless it is one of the system collections MongoDB lets clients
  ///   write (``Transaction/clientSystemCollections``, and `system.buckets.<name>`).
  /// - Throws: ``StoreError/Kind/namespace``, naming the rule, the character and its byte offset.
  static func checkName(_ name: String, reserved: Bool) throws(StoreError) {
    func refuse(_ why: String) -> StoreError {
      StoreError(.namespace, "invalid collection name \"\(printable(name))\": \(why)")
    }
    let bytes = Array(name.utf8)
    guard !bytes.isEmpty else { throw refuse("a name cannot be empty") }
    if let nul = bytes.firstIndex(of: 0) { throw refuse("it contains NUL at byte \(nul); names cannot contain NUL") }
    if name.hasPrefix("__") {
      guard reserved else { throw refuse("names starting with __ are reserved for the store's own collections") }
      return
    }
    guard bytes.count <= 255 else {
      throw refuse("it is \(bytes.count) bytes long; a namespace is at most 255 bytes (MongoDB's limit)")
    }
    guard let dot = bytes.firstIndex(of: UInt8(ascii: ".")) else {
      try checkCollectionPart(bytes[...], database: nil, refuse)
      return
    }
    let database = bytes[..<dot]
    guard !database.isEmpty else { throw refuse("the database part (before the first dot) is empty") }
    guard database.count < 64 else {
      throw refuse("its database part is \(database.count) bytes long; database names are shorter than 64 bytes")
    }
    for (offset, byte) in zip(database.indices, database) where Self.forbiddenInDatabase.contains(byte) {
      throw refuse(
        "its database part \"\(printable(String(decoding: database, as: UTF8.self)))\" contains \(describe(byte)) at byte \(offset); database names cannot contain / \\ . space \" or $"
      )
    }
    let collection = bytes[(dot + 1)...]
    guard !collection.isEmpty else { throw refuse("the collection part (after the first dot) is empty") }
    try checkCollectionPart(collection, database: String(decoding: database, as: UTF8.self), refuse)
  }

  /// The system collections MongoDB lets clients create or write (as mongorestore restores
  /// them), by database; `"*"` lists those allowed in every database.
  static let clientSystemCollections: [String: Set<String>] = [
    "*": ["system.js", "system.views", "system.profile", "system.users"],
    "admin": ["system.roles", "system.version", "system.keys", "system.new_users", "system.backup_users"],
    "config": ["system.sessions", "system.indexBuilds"],
    "local": ["system.replset", "system.healthlog"],
  ]

  private static let forbiddenInDatabase: Set<UInt8> = Set("/\\. \"$".utf8)

  /// Checks the collection part of a name (all of it when it has no database part).
  private static func checkCollectionPart(
    _ collection: ArraySlice<UInt8>, database: String?, _ refuse: (String) -> StoreError
  ) throws(StoreError) {
    let text = String(decoding: collection, as: UTF8.self)
    let part = database == nil ? "the name" : "its collection part \"\(printable(text))\""
    if let dollar = collection.firstIndex(of: UInt8(ascii: "$")) {
      throw refuse("\(part) contains '$' at byte \(dollar); collection names cannot contain $")
    }
    if let range = text.utf8.firstRange(of: ".system.".utf8) {
      let offset = collection.startIndex + text.utf8.distance(from: text.utf8.startIndex, to: range.lowerBound)
      throw refuse("\(part) contains \".system.\" at byte \(offset); collection names cannot contain .system.")
    }
    // A name without a database part cannot start with "system.": its first dot would end one.
    guard let database, text.hasPrefix("system.") else { return }
    let allowed = clientSystemCollections["*"]!.union(clientSystemCollections[database] ?? [])
    if allowed.contains(text) { return }
    if text.hasPrefix("system.buckets."), text.utf8.count > "system.buckets.".utf8.count { return }
    throw refuse(
      "\(part) starts with \"system.\", which MongoDB reserves for its own collections (in \(database), "
        + "clients may write \(allowed.sorted().joined(separator: ", ")) and system.buckets.<name>)")
  }

  /// A name as it can be shown in a message: NUL and other control characters escaped.
  private static func printable(_ text: String) -> String {
    var shown = ""
    for scalar in text.unicodeScalars {
      if scalar.value < 0x20 || scalar.value == 0x7F {
        shown += "\\u{\(String(scalar.value, radix: 16))}"
      } else {
        shown.unicodeScalars.append(scalar)
      }
    }
    return shown
  }

  /// A byte as a message names it: `'/'`, or `a space`.
  private static func describe(_ byte: UInt8) -> String {
    byte == 0x20 ? "a space" : "'\(Character(Unicode.Scalar(byte)))'"
  }
}
