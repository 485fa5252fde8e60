import Foundation
import ReefBSON
import ReefSwift
import Testing

/// Key-value coding on objects and collections, as Realm's: `value(forKey:)`,
/// `setValue(_:forKey:)`, `value(forKeyPath:)` and the subscript, over the schema.
@Suite struct KeyValueCodingTests {
  /// A probe with a value in most properties.
  static func filledProbe(_ id: Int = 1) -> Probe {
    Probe(value: [
      "id": id, "flag": true, "small": 8, "medium": 16, "large": 32, "huge": 64, "ratio": 1.5, "reading": 2.5,
      "label": "probe \(id)", "amount": "1.25", "level": 2, "optionalSmall": 3, "anything": AnyReefValue.int(7),
      "smalls": [1, 2], "tags": ["a"], "limits": ["x": 1], "sample": ["reading": 4],
    ])
  }

  /// Checks the reads of a filled probe, unmanaged or managed.
  static func checkReads(_ probe: Probe) {
    #expect(probe.value(forKey: "id") as? Int == probe.id)
    #expect(probe.value(forKey: "flag") as? Bool == true)
    #expect(probe.value(forKey: "small") as? Int8 == 8, "a number casts to its own type")
    #expect(probe["small"] as? Int == 8, "and to every integer type that holds it, as an NSNumber in Realm")
    #expect(probe["medium"] as? Int16 == 16 && probe["large"] as? Int32 == 32 && probe["huge"] as? Int64 == 64)
    #expect(probe["huge"] is NSNumber)
    #expect(probe["ratio"] as? Float == 1.5 && probe["reading"] as? Double == 2.5)
    #expect(probe["label"] as? String == probe.label)
    #expect(probe["amount"] as? Decimal128 == Decimal128("1.25"))
    #expect(probe["level"] as? Int == 2, "an enum as its raw value")
    #expect(probe["optionalSmall"] as? Int8 == 3)
    #expect(probe["optionalLabel"] == nil, "nil is nil, not an optional inside Any")
    #expect(probe["optionalLevel"] == nil && probe["partner"] == nil && probe["legacy"] == nil)
    #expect(probe["anything"] as? Int == 7, "an AnyReefValue as what it holds")
    #expect((probe["sample"] as? ProbeSample)?.reading == 4)
    #expect(probe["smalls"] as? List<Int8> === probe.smalls, "the object's own list")
    #expect(probe["tags"] as? MutableSet<String> === probe.tags)
    #expect(probe["limits"] as? Map<String, Int16> === probe.limits)
    #expect(probe["partners"] is LinkingObjects<Probe>)
  }

  @Test func valueForKeyReadsEveryKindOfPropertyInRealmsForm() throws {
    Self.checkReads(Self.filledProbe())
    let (reef, _) = try openReef()
    let added = Self.filledProbe(2)
    try reef.write { reef.add(added) }
    Self.checkReads(added)
    Self.checkReads(try #require(reef.object(ofType: Probe.self, forPrimaryKey: 2)))
    let created = try reef.write { reef.create(Probe.self, value: Self.filledProbe(3)) }
    Self.checkReads(created)
  }

  /// Sets each kind of property through `set` and checks it, on an unmanaged or managed probe.
  static func checkWrites(_ probe: Probe, _ set: (Probe, Any?, String) -> Void) {
    set(probe, 5, "small")
    set(probe, NSNumber(value: 300), "medium")
    set(probe, Int8(7), "huge")
    set(probe, 0.25, "ratio")
    set(probe, 3, "reading")
    set(probe, "2.5", "amount")
    set(probe, 2, "level")
    set(probe, ProbeLevel.low, "optionalLevel")
    set(probe, "label", "optionalLabel")
    set(probe, AnyReefValue.string("any"), "anything")
    #expect(probe.small == 5 && probe.medium == 300 && probe.huge == 7 && probe.ratio == 0.25)
    #expect(probe.reading == 3 && probe.amount == Decimal128("2.5") && probe.level == .high)
    #expect(probe.optionalLevel == .low && probe.optionalLabel == "label" && probe.anything == .string("any"))
    set(probe, 9, "anything")
    #expect(probe.anything == .int(9), "a raw value for an AnyReefValue")
    set(probe, NSNull(), "optionalLabel")
    set(probe, nil, "optionalLevel")
    set(probe, nil, "anything")
    #expect(probe.optionalLabel == nil && probe.optionalLevel == nil && probe.anything == .none)
    set(probe, 10, "optionalLevel")
    #expect(probe.optionalLevel == nil, "a raw value without a case is nil in an optional")
    set(probe, 4, "legacy")
    #expect(probe.legacy.value == 4)
    set(probe, ["reading": 6], "sample")
    #expect(probe.sample?.reading == 6)
  }

  @Test func setValueForKeyAndTheSubscriptConvertValuesAsRealm() throws {
    let bySetValue: (Probe, Any?, String) -> Void = { $0.setValue($1, forKey: $2) }
    let bySubscript: (Probe, Any?, String) -> Void = { $0[$2] = $1 }
    Self.checkWrites(Probe(), bySetValue)
    Self.checkWrites(Probe(), bySubscript)
    let (reef, _) = try openReef()
    try reef.write {
      Self.checkWrites(reef.create(Probe.self, value: ["id": 1]), bySetValue)
      Self.checkWrites(reef.create(Probe.self, value: ["id": 2]), bySubscript)
    }
    let stored = try #require(reef.object(ofType: Probe.self, forPrimaryKey: 1))
    #expect(stored.medium == 300 && stored.sample?.reading == 6 && stored.legacy.value == 4)
  }

  /// Assigns collections through `setValue(_:forKey:)` on an unmanaged or managed probe.
  static func checkCollectionWrites(_ probe: Probe) {
    let smalls = probe.smalls
    probe.setValue([1, 2, 3], forKey: "smalls")
    #expect(Array(smalls) == [1, 2, 3], "the elements go into the object's own list")
    #expect(probe.smalls === smalls)
    probe.setValue(probe.value(forKey: "smalls"), forKey: "smalls")
    #expect(Array(smalls) == [1, 2, 3], "assigning a list to itself keeps it")
    let other = List<Int8>()
    other.append(objectsIn: [4, 5])
    probe["smalls"] = other
    #expect(Array(probe.smalls) == [4, 5] && probe.smalls !== other)
    let assigned = List<Int8>()
    assigned.append(7)
    probe.smalls = assigned
    #expect(Array(smalls) == [7] && probe.smalls === smalls, "the property's setter copies too, as in Realm")
    let tags = probe.tags
    let newTags = MutableSet<String>()
    newTags.insert("n")
    probe.tags = newTags
    #expect(Array(tags) == ["n"] && probe.tags === tags)
    let limits = probe.limits
    let newLimits = Map<String, Int16>()
    newLimits["k"] = 1
    probe.limits = newLimits
    #expect(limits.keys == ["k"] && probe.limits === limits)
    probe["smalls"] = NSNull()
    #expect(probe.smalls.isEmpty, "NSNull empties a list")
    probe["smalls"] = [6]
    probe["smalls"] = nil
    #expect(probe.smalls.isEmpty, "nil too")
    probe["tags"] = ["b", "b", "c"]
    #expect(Set(probe.tags) == ["b", "c"] && probe.tags.count == 2)
    probe["limits"] = ["m": 1, "n": 2]
    #expect(probe.limits.keys == ["m", "n"] && probe.limits["n"] == 2)
    probe["optionalSmalls"] = [1, NSNull()]
    #expect(Array(probe.optionalSmalls) == [1, nil])
    probe["samples"] = [[1], ["reading": 2]]
    #expect(probe.samples.map(\.reading) == [1, 2])
  }

  @Test func collectionsAreAssignedByCopyingTheirElements() throws {
    Self.checkCollectionWrites(Probe())
    let (reef, _) = try openReef()
    try reef.write { Self.checkCollectionWrites(reef.create(Probe.self, value: ["id": 1])) }
    let stored = try #require(reef.object(ofType: Probe.self, forPrimaryKey: 1))
    #expect(stored.samples.map(\.reading) == [1, 2] && stored.limits["m"] == 1)
  }

  @Test func embeddedObjectsHaveKeyValueCodingToo() throws {
    let sample = ProbeSample(value: [1, "one"])
    #expect(sample["reading"] as? Int == 1 && sample.value(forKey: "note") as? String == "one")
    sample["note"] = nil
    #expect(sample.note == nil)
    let (reef, _) = try openReef()
    let probe = try reef.write { reef.create(Probe.self, value: ["id": 1, "sample": [2, "two"]]) }
    let managed = try #require(probe.sample)
    #expect(managed["reading"] as? Int == 2 && managed["note"] as? String == "two")
    try reef.write { managed.setValue(3, forKey: "reading") }
    #expect(probe.sample?.reading == 3)
  }

  @Test func valueForKeyPathFollowsLinksEmbeddedObjectsAndCollections() throws {
    let (reef, _) = try openReef()
    let probe = try reef.write {
      reef.create(
        Probe.self,
        value: [
          "id": 1, "sample": ["reading": 5], "partner": ["id": 2, "label": "partner", "sample": ["note": "deep"]],
          "friends": [["id": 3, "label": "three"], ["id": 4, "label": "four"]],
        ])
    }
    #expect(probe.value(forKeyPath: "sample.reading") as? Int == 5)
    #expect(probe.value(forKeyPath: "partner.label") as? String == "partner")
    #expect(probe.value(forKeyPath: "partner.sample.note") as? String == "deep")
    #expect(probe.value(forKeyPath: "partner.partner.label") == nil, "nil once a step is nil")
    #expect(probe.value(forKeyPath: "friends.label") as? [String] == ["three", "four"])
    #expect(probe.value(forKeyPath: "label") as? String == "")
    try reef.write { probe.setValue("renamed", forKeyPath: "partner.label") }
    #expect(probe.partner?.label == "renamed")
    let unmanaged = Probe(value: ["partner": ["label": "p"]])
    #expect(unmanaged.value(forKeyPath: "partner.label") as? String == "p")
  }

  @Test func collectionsGiveTheirElementsValuesAndSetThemOnEveryElement() throws {
    let (reef, _) = try openReef()
    let probe = try reef.write {
      reef.create(
        Probe.self,
        value: [
          "id": 1, "smalls": [1, 2], "tags": ["t"], "limits": ["x": 3],
          "friends": [["id": 2, "label": "b", "partner": ["id": 4]], ["id": 3, "label": "c"]],
        ])
    }
    #expect(probe.friends.value(forKey: "label") as? [String] == ["b", "c"])
    #expect(probe.friends.value(forKey: "small") as? [Int] == [0, 0])
    #expect(probe.friends.value(forKeyPath: "partner.id") as? [Int?] == [4, nil])
    #expect((probe.friends.value(forKey: "self") as? [Probe])?.map(\.id) == [2, 3])
    #expect(probe.smalls.value(forKey: "self") as? [Int8] == [1, 2])
    #expect(probe.tags.value(forKey: "self") as? Set<String> == ["t"], "a set's values are a set, as Realm's NSSet")
    let results = reef.objects(Probe.self).sorted(byKeyPath: "id")
    #expect(results.value(forKey: "id") as? [Int] == [1, 2, 3, 4])
    let erased = AnyReefCollection(probe.friends)
    #expect(erased.value(forKey: "label") as? [String] == ["b", "c"])
    #expect(erased.value(forKeyPath: "partner.id") as? [Int?] == [4, nil])
    #expect(try #require(probe.friends.first?.partner).partners.value(forKey: "label") as? [String] == ["b"])
    #expect(probe.limits.value(forKey: "x") as? Int16 == 3 && probe.limits.value(forKey: "none") == nil)

    try reef.write {
      AnyReefCollection(probe.friends).setValue("friend", forKey: "label")
      results.setValue(Int8(9), forKey: "small")
      probe.limits.setValue(4, forKey: "y")
      probe.limits.setValue(nil, forKey: "x")
    }
    #expect(probe.friends.map(\.label) == ["friend", "friend"])
    #expect(reef.objects(Probe.self).map(\.small) == [9, 9, 9, 9])
    #expect(probe.limits.keys == ["y"] && probe.limits["y"] == 4)
    let unmanaged = List<Probe>()
    unmanaged.append(objectsIn: [Probe(), Probe()])
    unmanaged.setValue(2, forKey: "medium")
    #expect(unmanaged.map(\.medium) == [2, 2])
  }

  @Test func anUnknownKeyStopsWithRealmsMessage() async {
    let read = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = Probe()["nope"]
    }
    #expect(
      ValueConversionTests.stderr(read).contains("Invalid property name 'nope' for class 'Probe'."),
      "\(ValueConversionTests.stderr(read))")
    let write = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      Probe().setValue(1, forKey: "nope")
    }
    #expect(ValueConversionTests.stderr(write).contains("Invalid property name 'nope' for class 'Probe'."))
    let path = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = Probe(value: ["sample": [1]]).value(forKeyPath: "sample.nope")
    }
    #expect(ValueConversionTests.stderr(path).contains("Invalid property name 'nope'"))
  }

  @Test func aValueThatDoesNotFitStopsWithRealmsMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      Probe()["small"] = "small"
    }
    #expect(
      ValueConversionTests.stderr(result).contains(
        "Invalid value 'small' of type 'String' for 'int' property 'Probe.small'."))
    let managed = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let (reef, _) = try openReef()
        try reef.write { reef.create(Probe.self, value: ["id": 1]).setValue(1.5, forKey: "huge") }
      }
    }
    #expect(
      ValueConversionTests.stderr(managed).contains(
        "Invalid value '1.5' of type 'Double' for 'int' property 'Probe.huge'."))
  }

  @Test func linkingObjectsCannotBeSet() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      Probe().setValue([], forKey: "partners")
    }
    #expect(ValueConversionTests.stderr(result).contains("Cannot modify read-only property 'Probe.partners'"))
  }

  @Test func aPathIntoAListOfValuesStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = Probe(value: ["smalls": [1]]).smalls.value(forKey: "count")
    }
    #expect(ValueConversionTests.stderr(result).contains("only a collection of objects has properties"))
  }
}
