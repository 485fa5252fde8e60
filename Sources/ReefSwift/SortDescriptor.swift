extension SortDescriptor: CustomStringConvertible {
  /// A sort by the property at a Swift key path (`\Person.address?.city` sorts by
  /// `address.city`).
  ///
  /// A key path that reads no `@Persisted` property stops, naming the type.
  public init<Root: ObjectBase, Value>(keyPath: KeyPath<Root, Value>, ascending: Bool = true) {
    self.init(keyPath: KeyPathNames.name(keyPath, in: Root.self), ascending: ascending)
  }

  /// The same sort in the other direction.
  public func reversed() -> SortDescriptor { SortDescriptor(keyPath: keyPath, ascending: !ascending) }

  /// Realm's form: `SortDescriptor(keyPath: name, direction: ascending)`.
  public var description: String {
    "SortDescriptor(keyPath: \(keyPath), direction: \(ascending ? "ascending" : "descending"))"
  }
}
