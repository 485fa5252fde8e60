/// One list of embedded objects as a `Reef` knows it: each element has a token that stays with
/// it when the list changes (an insert, a remove, a move or a swap), so that an accessor of an
/// element follows its object, as in Realm, rather than a position.
///
/// Until the list is changed through its `Reef`, an element's token is its position (so a place
/// costs nothing for a list that is only read). A change gives the elements that stay their old
/// tokens at their new positions and new elements fresh tokens, which are negative and never
/// reused by the `Reef`; a removed element's token is gone, which invalidates its accessors and
/// those of its own embedded objects (their paths go through it).
///
/// The accessors of a list's elements hold its place, and the `Reef` holds it weakly (and through
/// a write transaction that changed it): a place that no accessor needs goes, and the list's
/// next accessors start again from positions.
final class ListPlace {
  /// The list: its object and field, with the tokens of the elements on the way.
  let key: EpochKey
  /// The token of each position; nil while each position is its own token.
  private(set) var tokens: [Int]?
  /// The position of each token, made when first asked after a change.
  private var positions: [Int: Int]?
  /// Whether ``saved`` holds the tokens from before the current write transaction changed them.
  var isSaved = false
  /// The tokens from before the current write transaction changed them: a rollback restores them.
  var saved: [Int]?

  init(key: EpochKey) { self.key = key }

  /// The token of the element at `position`. A position past the known tokens (the list grew
  /// through another `Reef`) gets fresh ones.
  func token(at position: Int, fresh: () -> Int) -> Int {
    guard var tokens else { return position }
    if position < tokens.count { return tokens[position] }
    while tokens.count <= position { tokens.append(fresh()) }
    set(tokens)
    return tokens[position]
  }

  /// The tokens of the first `count` positions.
  func tokens(count: Int, fresh: () -> Int) -> [Int] {
    guard tokens != nil else { return Array(0..<count) }
    return (0..<count).map { token(at: $0, fresh: fresh) }
  }

  /// The position of the element with `token`; nil when it left the list.
  func position(of token: Int) -> Int? {
    guard let tokens else { return token >= 0 ? token : nil }
    if positions == nil {
      var made: [Int: Int] = [:]
      made.reserveCapacity(tokens.count)
      for (position, token) in tokens.enumerated() { made[token] = position }
      positions = made
    }
    return positions?[token]
  }

  /// Gives the positions new tokens (nil: each position is its own token).
  func set(_ tokens: [Int]?) {
    self.tokens = tokens
    positions = nil
  }
}

/// A place held weakly by its `Reef`.
struct WeakListPlace {
  weak var value: ListPlace?
}

/// An element of a list, as ``FieldAccess/changeArray(_:)`` edits it: its stored value and, for
/// an element that was in the list before the change, its token (nil for a new element).
struct ListSlot {
  var token: Int?
  var value: BSON

  /// A new element.
  init(_ value: BSON) {
    token = nil
    self.value = value
  }

  init(token: Int?, value: BSON) {
    self.token = token
    self.value = value
  }
}

extension Reef {
  /// The place of the list of embedded objects named `key`: the one its live accessors share,
  /// or a new one that starts from positions.
  func listPlace(_ key: EpochKey) -> ListPlace {
    let gate = self.enterSnapshot()
    defer { gate?.unlock() }
    if let place = listPlaces[key]?.value { return place }
    if listPlaces.count >= listPlacesSweepAt {
      listPlaces = listPlaces.filter { $0.value.value != nil }
      listPlacesSweepAt = max(64, listPlaces.count * 2)
    }
    let place = ListPlace(key: key)
    listPlaces[key] = WeakListPlace(value: place)
    return place
  }

  /// A token no element of this `Reef`'s lists has had.
  func freshListToken() -> Int {
    let gate = self.enterSnapshot()
    defer { gate?.unlock() }
    lastListToken -= 1
    return lastListToken
  }

  /// Gives a list's elements their tokens after a change, keeping the old ones for a rollback.
  func changeListPlace(_ place: ListPlace, to tokens: [Int]) {
    if isInWriteTransaction && !place.isSaved {
      place.isSaved = true
      place.saved = place.tokens
      changedListPlaces.append(place)
    }
    place.set(tokens)
  }

  /// Ends the write transaction's hold on the list places it changed: a rollback gives them their
  /// tokens from before it.
  func endListPlaceChanges(rollBack: Bool) {
    for place in changedListPlaces {
      if rollBack { place.set(place.saved) }
      place.isSaved = false
      place.saved = nil
    }
    changedListPlaces = []
  }
}
