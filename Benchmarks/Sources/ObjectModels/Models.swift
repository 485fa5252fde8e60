// The models of Realm's Embedded Objects page (as in Tests/ReefSwiftTests/Models.swift), in two
// forms: ReefSwift classes, and GRDB Codable records of the same data.

import Foundation
import GRDB
import ReefSwift

// MARK: ReefSwift

public class Address: EmbeddedObject {
  @Persisted public var street: String?
  // Indexed: every type that embeds Address gets an index on `address.city` (`addresses.city`).
  @Persisted(indexed: true) public var city: String?
  @Persisted public var country: String?
  @Persisted public var postalCode: String?

  public convenience init(_ value: AddressValue) {
    self.init()
    street = value.street
    city = value.city
    country = value.country
    postalCode = value.postalCode
  }
}

public class Contact: Object {
  @Persisted(primaryKey: true) public var _id: ObjectId
  @Persisted public var name = ""
  @Persisted public var address: Address?
}

public class Business: Object {
  @Persisted(primaryKey: true) public var _id: ObjectId
  @Persisted public var name = ""
  @Persisted public var addresses: List<Address>
}

// MARK: GRDB

/// An address as a plain value: the source data of both sides, and the element of a business's
/// `addresses` JSON column.
public struct AddressValue: Codable, Hashable, Sendable {
  public var street: String?
  public var city: String?
  public var country: String?
  public var postalCode: String?

  public init(street: String?, city: String?, country: String?, postalCode: String?) {
    self.street = street
    self.city = city
    self.country = country
    self.postalCode = postalCode
  }
}

/// A contact with its address flattened into four columns (`address_street`, `address_city`,
/// …): one row, no JSON, and a plain column index on `address_city`.
public struct ContactRecord: Codable, FetchableRecord, PersistableRecord {
  public static let databaseTableName = "contact"
  public var id: Data  // the ObjectId's 12 bytes
  public var name: String
  public var addressStreet: String?
  public var addressCity: String?
  public var addressCountry: String?
  public var addressPostalCode: String?

  public enum CodingKeys: String, CodingKey {
    case id, name
    case addressStreet = "address_street"
    case addressCity = "address_city"
    case addressCountry = "address_country"
    case addressPostalCode = "address_postalCode"
  }

  public enum Columns {
    public static let name = Column(CodingKeys.name)
    public static let addressStreet = Column(CodingKeys.addressStreet)
    public static let addressCity = Column(CodingKeys.addressCity)
  }

  public init(id: Data, name: String, address: AddressValue?) {
    self.id = id
    self.name = name
    addressStreet = address?.street
    addressCity = address?.city
    addressCountry = address?.country
    addressPostalCode = address?.postalCode
  }
}

/// A business with its addresses in one JSON text column (GRDB's Codable encoding of a nested
/// array): one row per business, as Reef has one document.
public struct BusinessRecord: Codable, FetchableRecord, PersistableRecord {
  public static let databaseTableName = "business"
  public var id: Data
  public var name: String
  public var addresses: [AddressValue]
}

/// Creates the GRDB tables: WITHOUT ROWID, so the 12-byte id is the B-tree key (one lookup per
/// read, not rowid index + table), and an index on `address_city`.
public func createGRDBSchema(_ db: Database) throws {
  try db.create(table: ContactRecord.databaseTableName, options: .withoutRowID) { t in
    t.primaryKey("id", .blob)
    t.column("name", .text).notNull()
    t.column("address_street", .text)
    t.column("address_city", .text)
    t.column("address_country", .text)
    t.column("address_postalCode", .text)
  }
  try db.create(index: "contact_address_city", on: ContactRecord.databaseTableName, columns: ["address_city"])
  try db.create(table: BusinessRecord.databaseTableName, options: .withoutRowID) { t in
    t.primaryKey("id", .blob)
    t.column("name", .text).notNull()
    t.column("addresses", .text).notNull()
  }
}
