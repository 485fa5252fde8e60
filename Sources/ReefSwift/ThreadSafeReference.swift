import ReefBSON
import ReefQuery
import ReefStore

/// A managed value that belongs to one `Reef` (its thread, queue or actor): Realm's
/// `ThreadConfined`. Objects, ``Results``, ``List``, ``MutableSet``, ``Map``,
/// ``LinkingObjects`` and ``AnyReefCollection`` are; a ``ThreadSafeReference`` (or
/// ``ThreadSafe``) carries one to another thread.
///
/// Only ReefSwift's types can be thread-confined: declaring another type one does not make it
/// work with ``ThreadSafeReference``.
public protocol ThreadConfined {
  /// The `Reef` that manages the value, or nil when unmanaged.
  var realm: Reef? { get }
  /// Whether the value can no longer be read (its object was deleted).
  var isInvalidated: Bool { get }
  /// Whether the value is frozen: an immutable snapshot readable from any thread.
  var isFrozen: Bool { get }
  /// How to find the same value in another `Reef` of the file. For ``ThreadSafeReference``.
  var _threadSafeLocator: _ThreadSafeLocator { get }
}

/// How a thread-confined value is found again in a `Reef` of its file: the file's store and a
/// search that captures only values safe on any thread (schemas, `_id`s, paths, query nodes).
/// For ReefSwift's own conformances.
public struct _ThreadSafeLocator: @unchecked Sendable {
  /// The store of the `Reef` the value was read by (a resolving `Reef` must read it).
  let store: Store
  /// Finds the value in a `Reef` of the file; nil when it is gone.
  let find: (Reef) -> Any?
}

/// Passes a live object, ``Results``, ``List``, ``MutableSet``, ``Map``, ``LinkingObjects``
/// or ``AnyReefCollection`` to another thread: Realm's `ThreadSafeReference`. Make it on the
/// value's thread, send it (it is `Sendable`), and ``Reef/resolve(_:)`` it in a `Reef` of the
/// same file on the other thread.
///
/// ```swift
/// let reference = ThreadSafeReference(to: person)
/// Thread {
///     let reef = try! Reef(configuration: configuration)
///     guard let person = reef.resolve(reference) else { return }  // deleted meanwhile
///     try! reef.write { person.name = "Ann" }
/// }.start()
/// ```
/// A reference holds no snapshot: resolving finds the value in the resolving `Reef`'s state
/// (a collection through its object, which must still exist). As in Realm, a reference is
/// resolved once: resolving it again stops the program ("Can only resolve a thread safe
/// reference once").
public final class ThreadSafeReference<Confined: ThreadConfined>: @unchecked Sendable {
  private let locator: _ThreadSafeLocator
  private let lock = Lock()
  private var resolved = false

  /// A reference to a managed value (for an embedded object: found again through its parent's
  /// primary key and its place; for a collection: through its object).
  ///
  /// Stops with Realm's message for an unmanaged value (send it directly), or one whose object
  /// was deleted.
  public init(to threadConfined: Confined) {
    locator = threadConfined._threadSafeLocator
  }

  /// Whether the reference was resolved already (it resolves once).
  public var isInvalidated: Bool { lock.withLock { resolved } }

  /// Marks the reference resolved; false when it was already.
  fileprivate func take() -> Bool {
    lock.withLock {
      if resolved { return false }
      resolved = true
      return true
    }
  }

  fileprivate func resolve(in reef: Reef) -> Confined? {
    guard take() else { reefStop("Can only resolve a thread safe reference once.") }
    // As in Realm, a `Reef` of another file does not have the value: nil (the reference is
    // resolved all the same).
    if reef.store !== locator.store { return nil }
    return locator.find(reef) as? Confined
  }
}

extension ThreadSafeReference {
  /// The stops of a reference made to what cannot be referenced.
  static func unmanaged() -> Never {
    reefStop("Cannot construct reference to unmanaged object, which can be passed across threads directly")
  }
  static func invalidated() -> Never { reefStop("Cannot construct reference to invalidated object") }
}

/// Values captured by a reference's resolver: schemas and query values, which nothing changes
/// once made.
struct Sendables<Value>: @unchecked Sendable {
  let value: Value
  init(_ value: Value) { self.value = value }
}

extension Reef {
  /// The value a ``ThreadSafeReference`` names, in this `Reef`'s snapshot: nil when its object
  /// was deleted.
  ///
  /// Nil too for a reference made in a `Reef` of another file, as in Realm, which does not
  /// find the object there. Stops with Realm's message for a reference resolved already (a
  /// reference resolves once, in whichever file).
  public func resolve<Confined>(_ reference: ThreadSafeReference<Confined>) -> Confined? {
    checkThread()
    return reference.resolve(in: self)
  }
}

// MARK: What each type is found again by

extension ObjectBase: ThreadConfined {
  /// A managed object (an `Object`, or an embedded object, found again by its parent's primary
  /// key and its place).
  public var _threadSafeLocator: _ThreadSafeLocator {
    guard let managed = _managed else { ThreadSafeReference<ObjectBase>.unmanaged() }
    managed.reef.checkThread()
    guard managed.currentDocument() != nil, let path = ObjectPath(managed) else {
      ThreadSafeReference<ObjectBase>.invalidated()
    }
    return _ThreadSafeLocator(store: managed.reef.store) { reef in path.state(in: reef)?.makeObject() }
  }
}

extension Results: ThreadConfined {
  /// The same query (conditions, sort, distinct, collection) over the resolving `Reef`.
  public var _threadSafeLocator: _ThreadSafeLocator {
    reef.checkThread()
    let definition = definition
    return _ThreadSafeLocator(store: reef.store) { reef in
      _ = reef.registerOrStop(Element.self)
      return Results(reef: reef, definition: definition)
    }
  }
}

extension OwnedCollection {
  /// The same property of the same object in the resolving `Reef` (nil when the object is
  /// gone).
  var collectionLocator: _ThreadSafeLocator {
    guard let owner = collectionOwner, let property = collectionProperty else {
      ThreadSafeReference<ObjectBase>.unmanaged()
    }
    owner.reef.checkThread()
    guard owner.currentDocument() != nil, let path = ObjectPath(owner) else {
      ThreadSafeReference<ObjectBase>.invalidated()
    }
    let carried = Sendables(property)
    return _ThreadSafeLocator(store: owner.reef.store) { reef in
      path.state(in: reef).map { Self.same(carried.value, in: $0) }
    }
  }
}

extension _CollectionAccessor: ThreadConfined {
  /// A managed `List`, `MutableSet` or `Map`, found through its object.
  public var _threadSafeLocator: _ThreadSafeLocator { collectionLocator }
}

extension LinkingObjects: ThreadConfined {
  /// Managed linking objects, found through the object they link to.
  public var _threadSafeLocator: _ThreadSafeLocator { collectionLocator }
}

/// A property that holds a ``ThreadSafeReference`` to its value and resolves it on the thread
/// that reads it: Realm's `@ThreadSafe`.
///
/// ```swift
/// @ThreadSafe var person = reef.objects(Person.self).first
/// DispatchQueue.global().async {
///     guard let person else { return }  // read on this thread, in its Reef of the file
///     print(person.name)
/// }
/// ```
/// Each read opens a `Reef` of the value's configuration on the reading thread, resolves the
/// reference there and makes a new one from what it found; nil once the value was deleted.
/// Keep it for short-lived values (arguments, values captured by a block): a reference holds
/// no snapshot, but the `Reef` each read opens lives as long as the value read.
@propertyWrapper public final class ThreadSafe<T: ThreadConfined>: @unchecked Sendable {
  private var reference: ThreadSafeReference<T>?
  private var configuration: Reef.Configuration?
  private let lock = Lock()

  /// The value, resolved in a `Reef` of the reading thread; nil when none was set or it was
  /// deleted. Setting an unmanaged value stops with Realm's message.
  public var wrappedValue: T? {
    get {
      lock.withLock {
        guard let reference, let configuration else { return nil }
        let reef: Reef
        do {
          reef = try Reef(configuration: configuration)
        } catch {
          reefStop("\(error)")
        }
        guard let value = reef.resolve(reference) else {
          self.reference = nil
          return nil
        }
        self.reference = ThreadSafeReference(to: value)
        return value
      }
    }
    set {
      lock.withLock {
        guard let newValue else {
          reference = nil
          return
        }
        guard let reef = newValue.realm else { reefStop("Only managed objects may be wrapped as thread safe.") }
        configuration = reef.configuration
        reference = ThreadSafeReference(to: newValue)
      }
    }
  }

  /// A property holding `wrappedValue` (a managed value, or nil).
  public init(wrappedValue: T?) {
    self.wrappedValue = wrappedValue
  }
}
