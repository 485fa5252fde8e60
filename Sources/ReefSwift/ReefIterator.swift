import ReefBSON

/// An iterator over a ``List`` or a ``MutableSet`` as it was when the loop began: Realm's
/// `RLMIterator`, which enumerates a snapshot.
///
/// A loop that changes the collection it reads (appends to it, removes from it, deletes the
/// objects it holds) sees each element that was there when it began, once, and ends:
///
/// ```swift
/// for dog in person.dogs { person.dogs.append(dog) }   // doubles the list, once
/// ```
/// A managed collection's snapshot is its stored elements, decoded one by one as the loop
/// reaches them.
public struct ReefIterator<Element: _ReefCollectionElement>: IteratorProtocol {
  /// The managed field, or nil for an unmanaged collection.
  private let access: FieldAccess?
  /// The stored elements of a managed collection when the loop began.
  private let stored: [Document.Element]
  /// The elements of an unmanaged collection when the loop began.
  private let unmanaged: [Element]
  private var position = 0

  init(access: FieldAccess?, unmanaged: [Element]) {
    self.access = access
    stored = access?.elements() ?? []
    self.unmanaged = access == nil ? unmanaged : []
  }

  /// The next element of the snapshot, or nil after the last.
  public mutating func next() -> Element? {
    defer { position += 1 }
    guard let access else { return position < unmanaged.count ? unmanaged[position] : nil }
    guard position < stored.count else { return nil }
    return access.decode(stored[position], at: position, as: Element.self)
  }
}
