import ReefBSON
import ReefQuery
import ReefStore

/// Passes a live object, ``Results`` or ``List`` to another thread: Realm's
/// `ThreadSafeReference`. Make it on the object's thread, send it (it is `Sendable`), and
/// ``Reef/resolve(_:)`` it in a `Reef` of the same file on the other thread.
///
/// ```swift
/// let reference = ThreadSafeReference(to: person)
/// Thread {
///     let reef = try! Reef(configuration: configuration)
///     guard let person = reef.resolve(reference) else { return }  // deleted meanwhile
///     try! reef.write { person.name = "Ann" }
/// }.start()
/// ```
/// A reference holds no snapshot: resolving finds the object in the resolving `Reef`'s state.
/// As in Realm, a reference is resolved at most once: a second ``Reef/resolve(_:)`` returns nil.
public final class ThreadSafeReference<Confined>: @unchecked Sendable {
  /// The store of the `Reef` the reference was made in (a resolving `Reef` must read it).
  private let store: Store
  /// Finds the referenced thing in a `Reef` of the file (only values safe on any thread are
  /// captured: schemas, `_id`s, paths, query nodes).
  private let find: (Reef) -> Confined?
  private let lock = Lock()
  private var resolved = false

  private init(store: Store, find: @escaping (Reef) -> Confined?) {
    self.store = store
    self.find = find
  }

  /// A reference to a managed object (an `Object`, or an embedded object, found again by its
  /// parent's primary key and its place).
  ///
  /// Stops with Realm's message for an unmanaged object (send it directly) or a deleted one.
  public convenience init(to object: Confined) where Confined: ObjectBase {
    guard let managed = object._managed else {
      preconditionFailure("Cannot construct reference to unmanaged object, which can be passed across threads directly")
    }
    managed.reef.checkThread()
    guard managed.currentDocument() != nil, let path = ObjectPath(managed) else {
      preconditionFailure("Cannot construct reference to invalidated object")
    }
    self.init(store: managed.reef.store) { reef in
      path.state(in: reef).map { unsafeDowncast($0.makeObject(), to: Confined.self) }
    }
  }

  /// A reference to results: resolved, the same query (conditions, sort, distinct) over the
  /// resolving `Reef`.
  public convenience init<Element>(to results: Results<Element>) where Confined == Results<Element> {
    results.reef.checkThread()
    let (schema, conditions, sortKeys, distinct) = (
      results.schema, results.conditions, results.sortKeys, results.distinctPaths
    )
    let box = Sendables((schema, conditions, sortKeys, distinct))
    self.init(store: results.reef.store) { reef in
      let (schema, conditions, sortKeys, distinct) = box.value
      _ = reef.registerOrStop(Element.self)
      return Results(reef: reef, schema: schema, conditions: conditions, sortKeys: sortKeys, distinctPaths: distinct)
    }
  }

  /// A reference to a managed list: resolved, the list of the same object in the resolving
  /// `Reef` (nil when the object is gone).
  ///
  /// Stops for an unmanaged list (send its elements instead).
  public convenience init<Element>(to list: List<Element>) where Confined == List<Element> {
    guard let access = list.access else {
      preconditionFailure("Cannot construct reference to unmanaged object, which can be passed across threads directly")
    }
    access.owner.reef.checkThread()
    let path = ObjectPath(access.owner)
    let property = Sendables(access.property)
    self.init(store: access.owner.reef.store) { reef in
      path?.state(in: reef).flatMap { property.value.codec.get($0, property.value) as? List<Element> }
    }
  }

  /// Marks the reference resolved; false when it was already.
  fileprivate func take() -> Bool {
    lock.withLock {
      if resolved { return false }
      resolved = true
      return true
    }
  }

  fileprivate func resolve(in reef: Reef) -> Confined? {
    precondition(
      reef.store === store,
      "Cannot resolve thread safe reference in Reef with different configuration than the source Reef (\(store.path))")
    guard take() else { return nil }
    return find(reef)
  }
}

/// Values captured by a reference's resolver: schemas and query values, which nothing changes
/// once made.
private struct Sendables<Value>: @unchecked Sendable {
  let value: Value
  init(_ value: Value) { self.value = value }
}

extension Reef {
  /// The object, results or list a ``ThreadSafeReference`` names, in this `Reef`'s snapshot: nil
  /// when the object was deleted, and when the reference was resolved already (a reference is
  /// resolved at most once, as in Realm).
  ///
  /// Stops with Realm's message for a reference made in a `Reef` of another file.
  public func resolve<Confined>(_ reference: ThreadSafeReference<Confined>) -> Confined? {
    checkThread()
    return reference.resolve(in: self)
  }
}
