import Foundation
import ReefBSON
import ReefStore
import ReefSwift
import Testing

/// The values `init(value:)` and `create` take, converted as Realm converts them.
@Suite struct ValueConversionTests {
  /// The standard error of an exit test, as text.
  static func stderr(_ result: ExitTest.Result?) -> String {
    String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
  }

  @Test func integerLiteralsFitEveryIntegerWidthAndFloatingPoint() throws {
    let values: [String: Any] = [
      "id": 1, "small": 8, "medium": 16, "large": 32, "huge": 64, "ratio": 1.5, "reading": 2,
      "amount": 3, "optionalSmall": 9, "optionalRatio": 7,
    ]
    let probe = Probe(value: values)
    #expect(probe.small == 8 && probe.medium == 16 && probe.large == 32 && probe.huge == 64)
    #expect(probe.ratio == 1.5 && probe.reading == 2.0 && probe.optionalRatio == 7)
    #expect(probe.amount == Decimal128(3) && probe.optionalSmall == 9)

    let (reef, _) = try openReef()
    let created = try reef.write { reef.create(Probe.self, value: values) }
    #expect(created.small == 8 && created.medium == 16 && created.large == 32 && created.huge == 64)
    #expect(created.ratio == 1.5 && created.reading == 2.0 && created.amount == Decimal128(3))
  }

  @Test func numbersOfOtherTypesConvertWhereTheyFitExactly() {
    let probe = Probe(value: [
      "small": Int64(-128), "medium": NSNumber(value: 300), "ratio": NSNumber(value: 0.25), "amount": "4.4",
      "reading": Float(0.5),
    ])
    #expect(probe.small == -128 && probe.medium == 300 && probe.ratio == 0.25 && probe.reading == 0.5)
    #expect(probe.amount == Decimal128("4.4"))
    #expect(Probe(value: ["amount": 3.3]).amount == Decimal128("3.3"), "a Double by its shortest description")
    #expect(Probe(value: ["amount": Decimal(string: "5.5")!]).amount == Decimal128("5.5"))
  }

  @Test func nilAndNSNullAreNilOrAnEmptyCollection() throws {
    let values: [String: Any] = [
      "optionalSmall": NSNull(), "optionalLabel": NSNull(), "optionalLevel": NSNull(), "partner": NSNull(),
      "sample": NSNull(), "smalls": NSNull(), "tags": NSNull(), "limits": NSNull(), "anything": NSNull(),
      "legacy": NSNull(), "optionalSmalls": [NSNull(), 3], "optionalLimits": ["a": NSNull()],
    ]
    func check(_ probe: Probe) {
      #expect(probe.optionalSmall == nil && probe.optionalLabel == nil && probe.optionalLevel == nil)
      #expect(probe.partner == nil && probe.sample == nil && probe.anything == .none && probe.legacy.value == nil)
      #expect(probe.smalls.isEmpty && probe.tags.isEmpty && probe.limits.isEmpty)
      #expect(Array(probe.optionalSmalls) == [nil, 3])
      #expect(probe.optionalLimits["a"] == .some(nil))
    }
    let filled = Probe(value: ["optionalSmall": 1, "optionalLabel": "x", "smalls": [1, 2]])
    check(Probe(value: values))
    let (reef, _) = try openReef()
    check(try reef.write { reef.create(Probe.self, value: values) })
    var withNil: [String: Any?] = ["id": 5, "optionalSmall": nil, "optionalLabel": Optional<String>.none]
    withNil["partner"] = .some(nil)
    let created = try reef.write { reef.create(Probe.self, value: withNil as [String: Any]) }
    #expect(created.id == 5 && created.optionalSmall == nil && created.optionalLabel == nil)
    #expect(filled.optionalSmall == 1 && filled.optionalLabel == "x" && Array(filled.smalls) == [1, 2])
  }

  @Test func anArrayGivesThePropertiesInOrderAndLeavesTheRestToTheirDefaults() throws {
    let token = ObjectId()
    let values: [Any?] = [
      7, true, 1, 2, 3, 4, 0.5, 1.5, "label", Data([1]), Date(timeIntervalSince1970: 9), "2.5", token,
    ]
    let probe = Probe(value: values as [Any])
    #expect(probe.id == 7 && probe.flag && probe.small == 1 && probe.medium == 2 && probe.large == 3)
    #expect(probe.huge == 4 && probe.ratio == 0.5 && probe.reading == 1.5 && probe.label == "label")
    #expect(probe.bytes == Data([1]) && probe.seen == Date(timeIntervalSince1970: 9))
    #expect(probe.amount == Decimal128("2.5") && probe.token == token && probe.level == .low)
    let (reef, _) = try openReef()
    let created = try reef.write { reef.create(Probe.self, value: values as [Any]) }
    #expect(created.id == 7 && created.huge == 4 && created.amount == Decimal128("2.5"))
    // Realm's tests build such arrays from the schema: a value per property, nil where none
    // (nil for an optional property, as nil for a required one stops).
    let byName: [String: Any] = ["reading": 2]
    let fromSchema = ProbeSample(value: try #require(ProbeSample.sharedSchema()).properties.map { byName[$0.name] })
    #expect(fromSchema.reading == 2 && fromSchema.note == nil)
  }

  @Test func collectionsTakeArraysSequencesAndDictionariesOfOtherElementTypes() throws {
    let values: [String: Any] = [
      "smalls": [1, 2, 3], "optionalSmalls": [1, nil] as [Int?], "tags": ["a", "b", "a"],
      "limits": ["x": 1, "y": 2], "optionalLimits": ["x": 1, "y": nil] as [String: Int?],
      "samples": [[1, "one"], ["reading": 2]],
    ]
    func check(_ probe: Probe) {
      #expect(Array(probe.smalls) == [1, 2, 3])
      #expect(Array(probe.optionalSmalls) == [1, nil])
      #expect(Set(probe.tags) == ["a", "b"] && probe.tags.count == 2)
      #expect(probe.limits["x"] == 1 && probe.limits["y"] == 2 && probe.limits.keys == ["x", "y"])
      #expect(probe.optionalLimits["x"] == .some(1) && probe.optionalLimits["y"] == .some(nil))
      #expect(probe.samples.map(\.reading) == [1, 2] && probe.samples[0].note == "one")
    }
    check(Probe(value: values))
    let (reef, _) = try openReef()
    check(try reef.write { reef.create(Probe.self, value: values) })
    let fromSequences = Probe(value: ["smalls": Set([Int8(4)]), "tags": probe(tags: ["z"]).tags])
    #expect(Array(fromSequences.smalls) == [4] && Array(fromSequences.tags) == ["z"])
  }

  private func probe(tags: [String]) -> Probe {
    let probe = Probe()
    probe.tags.insert(objectsIn: tags)
    return probe
  }

  @Test func enumsTakeTheirRawValues() {
    let probe = Probe(value: ["level": 2, "optionalLevel": NSNumber(value: 1)])
    #expect(probe.level == .high && probe.optionalLevel == .low)
    let unknown = Probe(value: ["optionalLevel": 10])
    #expect(unknown.optionalLevel == nil, "a raw value without a case is nil in an optional, as Realm reads it")
  }

  @Test func keysThatAreNotPropertiesAreIgnoredAsInRealm() throws {
    let probe = Probe(value: ["id": 3, "nope": 1, "scratch": "ignored too"])
    #expect(probe.id == 3 && probe.scratch == "not stored")
    let (reef, _) = try openReef()
    let created = try reef.write { reef.create(Probe.self, value: ["id": 4, "nope": 1]) }
    #expect(created.id == 4)
  }

  @Test func initWithValueUsesTheObjectsGivenAndCreateCopiesThem() throws {
    let friend = Probe(value: ["id": 2])
    let partner = Probe(value: ["id": 3])
    let unmanaged = Probe(value: ["id": 1, "partner": partner, "friends": [friend]])
    #expect(unmanaged.partner === partner && unmanaged.friends.first === friend)

    let (reef, _) = try openReef()
    let created = try reef.write { reef.create(Probe.self, value: ["id": 1, "partner": partner, "friends": [friend]]) }
    #expect(partner.reef == nil && friend.reef == nil, "the objects given stay unmanaged")
    #expect(created.partner?.id == 3 && created.friends.map(\.id) == [2])
    #expect(reef.objects(Probe.self).count == 3)

    let linked = try reef.write {
      reef.create(Probe.self, value: ["id": 4, "partner": try #require(created.partner)])
    }
    #expect(reef.objects(Probe.self).count == 4, "a managed object of this Reef is linked, not copied")
    #expect(linked.partner?.isEqual(to: created.partner) == true)
  }

  @Test func createCopiesObjectsOfAnotherFileWithTheirLinks() throws {
    let (source, _) = try openReef("source")
    let original = try source.write {
      source.create(Probe.self, value: ["id": 1, "label": "there", "partner": ["id": 2, "label": "partner"]])
    }
    let (reef, _) = try openReef("target")
    let copy = try reef.write { reef.create(Probe.self, value: original) }
    #expect(copy.reef === reef && copy.label == "there" && copy.partner?.label == "partner")
    #expect(copy.partner?.reef === reef)
    #expect(original.reef === source && reef.objects(Probe.self).count == 2)
  }

  @Test func aCycleOfUnmanagedObjectsIsCopiedOnce() throws {
    let first = Probe(value: ["id": 1])
    let second = Probe(value: ["id": 2, "partner": first])
    first.partner = second
    let (reef, _) = try openReef()
    let created = try reef.write { reef.create(Probe.self, value: first) }
    #expect(created.partner?.partner?.id == 1)
    #expect(reef.objects(Probe.self).count == 2)
    #expect(first.reef == nil && second.reef == nil)
  }

  @Test func createWithAnUpdatePolicyUpdatesTheObjectAnArrayOrAnObjectNames() throws {
    let (reef, _) = try openReef()
    try reef.write { reef.create(Probe.self, value: ["id": 1, "label": "first", "small": 1]) }
    let fromArray = try reef.write { reef.create(Probe.self, value: [1, true], update: .modified) }
    #expect(reef.objects(Probe.self).count == 1)
    #expect(fromArray.flag && fromArray.label == "", "an array gives every property (the rest to their defaults)")
    let source = Probe(value: ["id": 1, "label": "from an object", "small": 5])
    let fromObject = try reef.write { reef.create(Probe.self, value: source, update: .all) }
    #expect(reef.objects(Probe.self).count == 1 && fromObject.label == "from an object" && fromObject.small == 5)
    #expect(source.reef == nil)
    let fromDictionary = try reef.write { reef.create(Probe.self, value: ["id": 1, "small": 6], update: .modified) }
    #expect(fromDictionary.small == 6 && fromDictionary.label == "from an object")
  }

  @Test func aNumberThatDoesNotFitStopsWithRealmsMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = Probe(value: ["small": 300])
    }
    let message = Self.stderr(result)
    #expect(message.contains("Invalid value '300' of type 'Int' for 'int' property 'Probe.small'."), "\(message)")
  }

  @Test func aValueOfTheWrongTypeInCreateStopsWithRealmsMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let (reef, _) = try openReef()
        try reef.write { reef.create(Probe.self, value: ["id": 1, "optionalLabel": 5]) }
      }
    }
    let message = Self.stderr(result)
    #expect(
      message.contains("Invalid value '5' of type 'Int' for 'string?' property 'Probe.optionalLabel'."), "\(message)")
  }

  @Test func nilForARequiredPropertyOrAnElementStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = Probe(value: ["label": NSNull()])
    }
    #expect(
      Self.stderr(result).contains("Invalid value '<null>' of type 'NSNull' for 'string' property 'Probe.label'."))
    let element = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = Probe(value: ["smalls": [1, NSNull()]])
    }
    #expect(Self.stderr(element).contains("for 'int' array property 'Probe.smalls'."), "\(Self.stderr(element))")
  }

  @Test func aNonOptionalEnumWithoutThatCaseStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = Probe(value: ["level": 10])
    }
    #expect(Self.stderr(result).contains("Invalid value '10' of type 'Int' for 'int' property 'Probe.level'."))
  }

  @Test func moreValuesThanPropertiesStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = ProbeSample(value: [1, "note", "one too many"])
    }
    #expect(Self.stderr(result).contains("Invalid array input: more values (3) than properties (2)."))
  }

  @Test func initValidatingThrowsWhatInitWithValueStopsFor() {
    #expect(throws: ReefError.self) { _ = try Probe(validating: ["small": 300]) }
    #expect(throws: ReefError.self) { _ = try Probe(validating: "not a dictionary") }
    do {
      _ = try Probe(validating: ["medium": "many"])
    } catch {
      #expect(error.kind == .invalidValue && error.property == "medium")
      #expect(error.message == "Invalid value 'many' of type 'String' for 'int' property 'Probe.medium'.")
    }
    #expect((try? Probe(validating: ["medium": 3]))?.medium == 3)
  }

  @Test func anOptionalEnumReadsAStoredRawValueWithoutACaseAsNil() throws {
    let (reef, _) = try openReef()
    try reef.write { reef.add(Probe(value: ["id": 1, "optionalLevel": 2])) }
    try reef.store.write { transaction in
      try transaction.collection("Probe").updateOne(["id": 1], ["$set": ["optionalLevel": .int64(10)]])
    }
    reef.refresh()
    let probe = try #require(reef.object(ofType: Probe.self, forPrimaryKey: 1))
    #expect(probe.optionalLevel == nil)
  }
}
