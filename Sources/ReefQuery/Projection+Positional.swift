import ReefBSON

/// Which element of an array a query matched, for the positional projection (`"grades.$"`), as
/// MongoDB records it while matching.
///
/// A condition on a path that meets an array records the position, in the first array on the
/// path, of the first element through which it holds (`{"grades": {"$gte": 85}}` on `[80, 90]`
/// records 1; `{"x.a": 2}` the element of `x` whose `a` is 2); an array matched as a whole
/// records nothing. `$elemMatch` records its matching element. In an `$and` (also the implicit
/// one of a filter's fields) the last condition that records wins; an `$in` records its first
/// matching element, and so does an `$or` of equalities on one path (MongoDB makes it an `$in`);
/// any other `$or`, `$nor` and `$not` record nothing.
indirect enum PositionRecorder {
  case nothing
  case and([PositionRecorder])
  case first([PositionRecorder])
  /// A test of the values the path reaches.
  case values(ArraySlice<FieldPath.Segment>, CompiledTest?)
  /// `$elemMatch`: an element of an array at the path.
  case element(ArraySlice<FieldPath.Segment>, ElementMatcher)

  init(_ node: QueryNode) throws(QueryError) {
    switch node {
    case .and(let children):
      var recorders: [PositionRecorder] = []
      for child in children { recorders.append(try PositionRecorder(child)) }
      self = .and(recorders)
    case .or(let children):
      if children.count == 1 {
        self = try PositionRecorder(children[0])
        return
      }
      // An `$or` of equalities on one path is an `$in`: its first matching element.
      var path: FieldPath?
      for child in children {
        guard case .match(let childPath, .compare(.equal, _), .mongo) = child, path == nil || path == childPath else {
          self = .nothing
          return
        }
        path = childPath
      }
      var recorders: [PositionRecorder] = []
      for child in children { recorders.append(try PositionRecorder(child)) }
      self = .first(recorders)
    case .match(let path, let test, let quantifier):
      guard quantifier == .mongo || quantifier == .any else {
        self = .nothing
        return
      }
      self = .values(path.segments[...], try compile(test))
    case .exists(let path, true):
      self = .values(path.segments[...], nil)
    case .elementMatch, .elementMatchValue:
      guard let matcher = try compile(node) as? ElementMatcher else {
        self = .nothing
        return
      }
      self = .element(matcher.segments, matcher)
    default:
      self = .nothing
    }
  }

  /// The recorded position in `root`, a document the query matched; nil when none is recorded.
  func position(in root: RawValue) -> Int? {
    switch self {
    case .nothing:
      return nil
    case .and(let children):
      var recorded: Int?
      for child in children {
        if let position = child.position(in: root) { recorded = position }
      }
      return recorded
    case .first(let children):
      return children.compactMap { $0.position(in: root) }.min()
    case .values(let segments, let test):
      return PositionRecorder.firstElement(root, segments) { value in
        var state = PathWalk()
        return walk(value.value, value.rest, .wholeAndElements, &state) { test?.test($0) ?? true }
      } atEnd: { element in
        test?.test(element) ?? true
      }
    case .element(let segments, let matcher):
      return PositionRecorder.firstElement(root, segments) { value in
        var state = PathWalk()
        return walk(value.value, value.rest, .none, &state) { found in
          guard found.isArray else { return false }
          var elements = RawElements(found)
          while let element = elements.next() {
            if matcher.matchesElement(element.value) { return true }
          }
          return false
        }
      } atEnd: { element in
        matcher.matchesElement(element)
      }
    }
  }

  /// The first array on `segments` from `root` (through documents): the position of its first
  /// element for which `atEnd` holds when the array ends the path, or for which `inside` holds
  /// for the rest of the path otherwise. Nil when the path meets no array.
  static func firstElement(
    _ root: RawValue, _ segments: ArraySlice<FieldPath.Segment>,
    inside: ((value: RawValue, rest: ArraySlice<FieldPath.Segment>)) -> Bool, atEnd: (RawValue) -> Bool
  ) -> Int? {
    var current = root
    var rest = segments
    while let segment = rest.first {
      guard current.isDocument, let child = current.field(segment.name) else { return nil }
      rest = rest.dropFirst()
      guard child.isArray else {
        current = child
        continue
      }
      var elements = RawElements(child)
      var position = 0
      while let element = elements.next() {
        if rest.isEmpty ? atEnd(element.value) : inside((element.value, rest)) { return position }
        position += 1
      }
      return nil
    }
    return nil
  }
}
