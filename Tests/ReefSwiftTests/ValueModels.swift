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
