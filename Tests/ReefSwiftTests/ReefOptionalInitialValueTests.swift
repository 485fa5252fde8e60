import ReefSwift
import Testing

// A ReefOptional declared with an initial value, as Realm's `RealmOptional(1)`.

class OptionalDefaults: Object {
  @Persisted var name: String? = "A"
  @Persisted var count = ReefOptional<Int>(1)
  @Persisted var small = ReefOptional<Int8>(2)
  @Persisted var ratio = ReefOptional<Double>(3.5)
  @Persisted var flag = ReefOptional<Bool>(true)
  @Persisted var missing = ReefOptional<Int>(nil)
}

@Suite struct ReefOptionalInitialValueTests {
  @Test func anInitialValueIsTheUnmanagedValueAndIsStored() throws {
    let object = OptionalDefaults()
    #expect(object.count.value == 1)
    #expect(object.small.value == 2)
    #expect(object.ratio.value == 3.5)
    #expect(object.flag.value == true)
    #expect(object.missing.value == nil)
    let (reef, _) = try openReef()
    try reef.write { _ = reef.create(OptionalDefaults.self) }
    let stored = try #require(reef.objects(OptionalDefaults.self).first)
    #expect(stored.count.value == 1)
    #expect(stored.ratio.value == 3.5)
    #expect(stored.missing.value == nil)
    try reef.write { stored.count.value = nil }
    #expect(reef.objects(OptionalDefaults.self).first?.count.value == nil)
  }

  @Test func aDynamicObjectReadsTheOptionalsByName() throws {
    let (reef, _) = try openReef()
    try reef.write { _ = reef.create(OptionalDefaults.self) }
    let object = try #require(reef.dynamicObjects("OptionalDefaults").first)
    #expect(object["name"] as? String == "A")
    #expect(object["count"] as? Int == 1)
    #expect(object["small"] as? Int8 == 2)
    #expect(object["ratio"] as? Double == 3.5)
    #expect(object["flag"] as? Bool == true)
    #expect(object["missing"] as? Int == nil)
  }
}
