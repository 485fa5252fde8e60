import Dispatch

// The notification forms that take Swift key paths (`keyPaths: [\Dog.name, \Dog.owner.name]`),
// as Realm's: each key path becomes the property names it reads, and the form with names is
// called. For `Results` and the collections of objects (`List`, `MutableSet`, `LinkingObjects`,
// and a `Map` of objects); the object forms are beside the others (`ObjectBase.observe`).

extension Results {
  /// ``observe(keyPaths:_:)`` with Swift key paths of the element type.
  public func observe(
    keyPaths: [PartialKeyPath<Element>], _ block: @escaping (ReefCollectionChange<Results<Element>>) -> Void
  ) -> NotificationToken {
    observe(keyPaths: keyPaths.map { KeyPathNames.name($0, in: Element.self) }, block)
  }

  /// ``observe(keyPaths:on:_:)`` with Swift key paths of the element type.
  public func observe(
    keyPaths: [PartialKeyPath<Element>], on queue: DispatchQueue?,
    _ block: @escaping (ReefCollectionChange<Results<Element>>) -> Void
  ) -> NotificationToken {
    observe(keyPaths: keyPaths.map { KeyPathNames.name($0, in: Element.self) }, on: queue, block)
  }

  /// ``observe(keyPaths:on:isolation:_:)`` with Swift key paths of the element type.
  public func observe<A: Actor>(
    keyPaths: [PartialKeyPath<Element>], on actor: A, isolation: isolated (any Actor)? = #isolation,
    _ block: @Sendable @escaping (isolated A, ReefCollectionChange<Results<Element>>) -> Void
  ) async -> NotificationToken {
    await observe(
      keyPaths: keyPaths.map { KeyPathNames.name($0, in: Element.self) }, on: actor, isolation: isolation, block)
  }
}

extension List {
  /// ``observe(keyPaths:_:)`` with Swift key paths of the element type (a list of objects).
  public func observe(
    keyPaths: [PartialKeyPath<Element>], _ block: @escaping (ReefCollectionChange<List<Element>>) -> Void
  ) -> NotificationToken where Element: ObjectBase {
    observe(keyPaths: keyPaths.map { KeyPathNames.name($0, in: Element.self) }, block)
  }

  /// ``observe(keyPaths:on:_:)`` with Swift key paths of the element type (a list of objects).
  public func observe(
    keyPaths: [PartialKeyPath<Element>], on queue: DispatchQueue?,
    _ block: @escaping (ReefCollectionChange<List<Element>>) -> Void
  ) -> NotificationToken where Element: ObjectBase {
    observe(keyPaths: keyPaths.map { KeyPathNames.name($0, in: Element.self) }, on: queue, block)
  }

  /// ``observe(keyPaths:on:isolation:_:)`` with Swift key paths of the element type (a list of
  /// objects).
  public func observe<A: Actor>(
    keyPaths: [PartialKeyPath<Element>], on actor: A, isolation: isolated (any Actor)? = #isolation,
    _ block: @Sendable @escaping (isolated A, ReefCollectionChange<List<Element>>) -> Void
  ) async -> NotificationToken where Element: ObjectBase {
    await observe(
      keyPaths: keyPaths.map { KeyPathNames.name($0, in: Element.self) }, on: actor, isolation: isolation, block)
  }
}

extension MutableSet {
  /// ``observe(keyPaths:_:)`` with Swift key paths of the element type (a set of objects).
  public func observe(
    keyPaths: [PartialKeyPath<Element>], _ block: @escaping (ReefCollectionChange<MutableSet<Element>>) -> Void
  ) -> NotificationToken where Element: ObjectBase {
    observe(keyPaths: keyPaths.map { KeyPathNames.name($0, in: Element.self) }, block)
  }

  /// ``observe(keyPaths:on:_:)`` with Swift key paths of the element type (a set of objects).
  public func observe(
    keyPaths: [PartialKeyPath<Element>], on queue: DispatchQueue?,
    _ block: @escaping (ReefCollectionChange<MutableSet<Element>>) -> Void
  ) -> NotificationToken where Element: ObjectBase {
    observe(keyPaths: keyPaths.map { KeyPathNames.name($0, in: Element.self) }, on: queue, block)
  }

  /// ``observe(keyPaths:on:isolation:_:)`` with Swift key paths of the element type (a set of
  /// objects).
  public func observe<A: Actor>(
    keyPaths: [PartialKeyPath<Element>], on actor: A, isolation: isolated (any Actor)? = #isolation,
    _ block: @Sendable @escaping (isolated A, ReefCollectionChange<MutableSet<Element>>) -> Void
  ) async -> NotificationToken where Element: ObjectBase {
    await observe(
      keyPaths: keyPaths.map { KeyPathNames.name($0, in: Element.self) }, on: actor, isolation: isolation, block)
  }
}

extension LinkingObjects {
  /// ``observe(keyPaths:_:)`` with Swift key paths of the linking type.
  public func observe(
    keyPaths: [PartialKeyPath<Element>], _ block: @escaping (ReefCollectionChange<LinkingObjects<Element>>) -> Void
  ) -> NotificationToken {
    observe(keyPaths: keyPaths.map { KeyPathNames.name($0, in: Element.self) }, block)
  }

  /// ``observe(keyPaths:on:_:)`` with Swift key paths of the linking type.
  public func observe(
    keyPaths: [PartialKeyPath<Element>], on queue: DispatchQueue?,
    _ block: @escaping (ReefCollectionChange<LinkingObjects<Element>>) -> Void
  ) -> NotificationToken {
    observe(keyPaths: keyPaths.map { KeyPathNames.name($0, in: Element.self) }, on: queue, block)
  }

  /// ``observe(keyPaths:on:isolation:_:)`` with Swift key paths of the linking type.
  public func observe<A: Actor>(
    keyPaths: [PartialKeyPath<Element>], on actor: A, isolation: isolated (any Actor)? = #isolation,
    _ block: @Sendable @escaping (isolated A, ReefCollectionChange<LinkingObjects<Element>>) -> Void
  ) async -> NotificationToken {
    await observe(
      keyPaths: keyPaths.map { KeyPathNames.name($0, in: Element.self) }, on: actor, isolation: isolation, block)
  }
}

extension Map {
  /// ``observe(keyPaths:_:)`` with Swift key paths of the value type (a map of objects, as
  /// Realm's `Map<String, Dog?>`).
  public func observe<Wrapped: ObjectBase>(
    keyPaths: [PartialKeyPath<Wrapped>], _ block: @escaping (ReefMapChange<Map<Key, Value>>) -> Void
  ) -> NotificationToken where Value == Wrapped? {
    observe(keyPaths: keyPaths.map { KeyPathNames.name($0, in: Wrapped.self) }, block)
  }

  /// ``observe(keyPaths:on:_:)`` with Swift key paths of the value type (a map of objects).
  public func observe<Wrapped: ObjectBase>(
    keyPaths: [PartialKeyPath<Wrapped>], on queue: DispatchQueue?,
    _ block: @escaping (ReefMapChange<Map<Key, Value>>) -> Void
  ) -> NotificationToken where Value == Wrapped? {
    observe(keyPaths: keyPaths.map { KeyPathNames.name($0, in: Wrapped.self) }, on: queue, block)
  }

  /// ``observe(keyPaths:on:isolation:_:)`` with Swift key paths of the value type (a map of
  /// objects).
  public func observe<A: Actor, Wrapped: ObjectBase>(
    keyPaths: [PartialKeyPath<Wrapped>], on actor: A, isolation: isolated (any Actor)? = #isolation,
    _ block: @Sendable @escaping (isolated A, ReefMapChange<Map<Key, Value>>) -> Void
  ) async -> NotificationToken where Value == Wrapped? {
    await observe(
      keyPaths: keyPaths.map { KeyPathNames.name($0, in: Wrapped.self) }, on: actor, isolation: isolation, block)
  }
}

extension AnyReefCollection {
  /// ``observe(keyPaths:on:_:)`` with Swift key paths of the element type.
  public func observe(
    keyPaths: [PartialKeyPath<Element>], on queue: DispatchQueue? = nil,
    _ block: @escaping (ReefCollectionChange<AnyReefCollection>) -> Void
  ) -> NotificationToken {
    observe(keyPaths: keyPaths.map { KeyPathNames.name($0, in: Element.self) }, on: queue, block)
  }
}
