import ReefSwift

// Models for the rule tests (EmbeddedRuleTests, TransactionTests, LinkTests, ResultsTests…).
// Class names are the collections' names, so each is distinct in the test target.

/// The innermost level of a nested embedded object.
class Doorbell: EmbeddedObject {
  @Persisted var tone = ""
}

/// An embedded object that embeds another (one level down).
class Flat: EmbeddedObject {
  @Persisted var number = 0
  @Persisted var doorbell: Doorbell?
}

/// An embedded object with an embedded object and a list of embedded objects.
class Building: EmbeddedObject {
  @Persisted var street = ""
  @Persisted var city = ""
  @Persisted var flat: Flat?
  @Persisted var flats: List<Flat>
}

/// A top-level object with every kind of relation: embedded, list of embedded, links, backlinks.
class Tenant: Object {
  @Persisted(primaryKey: true) var id = 0
  @Persisted var name = ""
  @Persisted var age = 0
  @Persisted var score = 0.0
  @Persisted var nickname: String?
  @Persisted var home: Building?
  @Persisted var buildings: List<Building>
  @Persisted var landlord: Landlord?
  @Persisted var pets: List<Parrot>
  @Persisted var partner: Tenant?
}

/// A link target with a String primary key and backlinks from two properties.
class Landlord: Object {
  @Persisted(primaryKey: true) var name = ""
  @Persisted var rent = 0
  @Persisted(originProperty: "landlord") var tenants: LinkingObjects<Tenant>
}

/// A link target without a primary key: links store its hidden `_id`.
class Parrot: Object {
  @Persisted var name = ""
  @Persisted var words = 0
  @Persisted(originProperty: "pets") var owners: LinkingObjects<Tenant>
}

/// A type with an ObjectId primary key named `_id`.
class Ticket: Object {
  @Persisted(primaryKey: true) var _id: ObjectId
  @Persisted var seat = ""
}

/// A type with a UUID primary key.
class Badge: Object {
  @Persisted(primaryKey: true) var uuid: UUID
  @Persisted var label = ""
}

/// Two types that link each other (a cycle of links, which is fine).
class Hen: Object {
  @Persisted(primaryKey: true) var name = ""
  @Persisted var egg: Egg?
}

class Egg: Object {
  @Persisted(primaryKey: true) var name = ""
  @Persisted var hen: Hen?
}

/// One field of each type a query argument can have.
class Gauge: Object {
  @Persisted(primaryKey: true) var id = 0
  @Persisted var flag = false
  @Persisted var small: Int32 = 0
  @Persisted var reading = 0.0
  @Persisted var label = ""
  @Persisted var stamp = Date(timeIntervalSince1970: 0)
  @Persisted var blob = Data()
  @Persisted var oid: ObjectId
  @Persisted var uuid: UUID
  @Persisted var decimal: Decimal128
  @Persisted var level = GaugeLevel.low
  @Persisted var note: String?
}

enum GaugeLevel: String, PersistableEnum { case low, high }
