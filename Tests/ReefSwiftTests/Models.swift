import ReefSwift

// The models of Realm's pages in ../shared/seeds/, with Realm replaced by Reef.

// Embedded Objects (embedded-objects.txt, in the @Persisted form of model-relationships.txt).
class Address: EmbeddedObject {
  @Persisted var street: String?
  @Persisted var city: String?
  @Persisted var country: String?
  @Persisted var postalCode: String?
}

class Contact: Object {
  @Persisted(primaryKey: true) var _id: ObjectId
  @Persisted var name = ""
  @Persisted var address: Address?

  convenience init(name: String, address: Address) {
    self.init()
    self.name = name
    self.address = address
  }
}

class Business: Object {
  @Persisted(primaryKey: true) var _id: ObjectId
  @Persisted var name = ""
  @Persisted var addresses: List<Address>

  convenience init(name: String, addresses: [Address]) {
    self.init()
    self.name = name
    self.addresses.append(objectsIn: addresses)
  }
}

// Model Relationships (model-relationships.txt).
class Person: Object {
  @Persisted(primaryKey: true) var id = 0
  @Persisted var name = ""
  @Persisted var dogs: List<Dog>
  @Persisted(originProperty: "members") var clubs: LinkingObjects<DogClub>
  @Persisted var address: Address?

  convenience init(name: String, address: Address) {
    self.init()
    self.name = name
    self.address = address
  }
}

class Dog: Object {
  @Persisted var name: String = ""
  @Persisted var age: Int = 0
  @Persisted var breed: String?
}

class DogClub: Object {
  @Persisted var name = ""
  @Persisted var members: List<Person>
  @Persisted var regionalOfficeAddresses: List<Address>

  convenience init(name: String, addresses: [Address]) {
    self.init()
    self.name = name
    self.regionalOfficeAddresses.append(objectsIn: addresses)
  }
}

class User: Object {
  @Persisted(primaryKey: true) var _id: ObjectId
  @Persisted var _partition: String = ""
  @Persisted var name: String = ""
  @Persisted var tasks: List<Task>
}

class Task: Object {
  @Persisted(primaryKey: true) var _id: ObjectId
  @Persisted var _partition: String = ""
  @Persisted var text: String = ""
  @Persisted(originProperty: "tasks") var assignee: LinkingObjects<User>
}

// Every supported type, optional or not.
enum Mood: String, PersistableEnum { case calm, excited }

class Everything: Object {
  @Persisted(primaryKey: true) var key = ""
  @Persisted var bool = false
  @Persisted var int = 0
  @Persisted var int8: Int8 = 0
  @Persisted var int16: Int16 = 0
  @Persisted var int32: Int32 = 0
  @Persisted var int64: Int64 = 0
  @Persisted var float: Float = 0
  @Persisted var double: Double = 0
  @Persisted var string = ""
  @Persisted var data = Data()
  @Persisted var date = Date(timeIntervalSince1970: 0)
  @Persisted var decimal: Decimal128
  @Persisted var objectId: ObjectId
  @Persisted var uuid: UUID
  @Persisted var mood = Mood.calm
  @Persisted var optionalInt: Int?
  @Persisted var optionalString: String?
  @Persisted var optionalDate: Date?
  @Persisted var optionalUUID: UUID?
  @Persisted var ints: List<Int>
  @Persisted var optionalStrings: List<String?>
  var ignored = "not stored"
}

class Mapped: Object {
  @Persisted(primaryKey: true) var id = 0
  @Persisted var title = ""
  override class func propertiesMapping() -> [String: String] { ["id": "_id", "title": "name"] }
}
