import Foundation
import ReefBSON
import ReefSwift

// Models for the tests of values, dynamic access and the schema types.

enum ProbeLevel: Int, PersistableEnum { case low = 1, high = 2 }

class ProbeSample: EmbeddedObject {
  @Persisted var reading = 0
  @Persisted var note: String?
}

class Probe: Object {
  @Persisted(primaryKey: true) var id = 0
  @Persisted var flag = false
  @Persisted var small: Int8 = 0
  @Persisted var medium: Int16 = 0
  @Persisted var large: Int32 = 0
  @Persisted var huge: Int64 = 0
  @Persisted var ratio: Float = 0
  @Persisted var reading: Double = 0
  @Persisted var label = ""
  @Persisted var bytes = Data()
  @Persisted var seen = Date(timeIntervalSince1970: 0)
  @Persisted var amount: Decimal128
  @Persisted var token: ObjectId
  @Persisted var uuid: UUID
  @Persisted var level = ProbeLevel.low
  @Persisted var optionalLevel: ProbeLevel?
  @Persisted var optionalSmall: Int8?
  @Persisted var optionalRatio: Float?
  @Persisted var optionalLabel: String?
  @Persisted var anything: AnyReefValue
  @Persisted var partner: Probe?
  @Persisted var sample: ProbeSample?
  @Persisted var samples: List<ProbeSample>
  @Persisted var smalls: List<Int8>
  @Persisted var optionalSmalls: List<Int8?>
  @Persisted var tags: MutableSet<String>
  @Persisted var friends: List<Probe>
  @Persisted var limits: Map<String, Int16>
  @Persisted var optionalLimits: Map<String, Int16?>
  @Persisted var legacy: ReefProperty<Int32?>
  @Persisted(originProperty: "partner") var partners: LinkingObjects<Probe>
  var scratch = "not stored"
}

/// A model whose only properties are `LinkingObjects`.
class ProbeFan: Object {
  @Persisted(originProperty: "idol") var admirers: LinkingObjects<ProbeAdmirer>
}

class ProbeAdmirer: Object {
  @Persisted var name = ""
  @Persisted var idol: ProbeFan?
}

/// A model that names one of its `@Persisted` properties in `ignoredProperties()`.
class IgnoringProbe: Object {
  @Persisted var kept = 0
  @Persisted var dropped = 0
  override class func ignoredProperties() -> [String] { ["dropped", "scratch"] }
  var scratch = 0
}

/// A model that ignores a property without `@Persisted`, in the older API's style.
class LegacyIgnoringProbe: Object {
  @Persisted var kept = 0
  var runtimeOnly = 0
  override class func ignoredProperties() -> [String] { ["runtimeOnly"] }
}
