/// The rules a set of model classes must keep, checked when a `Reef` opens or first uses a type.
enum SchemaCheck {
  /// The schemas reachable from one through links, embedded objects and linking objects.
  static func reachable(from schema: ObjectSchema) -> [ObjectSchema] {
    var seen = Set<ObjectIdentifier>()
    var result: [ObjectSchema] = []
    var stack = [schema]
    while let next = stack.popLast() {
      guard seen.insert(ObjectIdentifier(next.objectClass)).inserted else { continue }
      result.append(next)
      for property in next.allProperties {
        if let objectClass = property.objectClass { stack.append(ObjectSchema.of(objectClass)) }
      }
    }
    return result
  }

  /// Throws for the first broken rule, naming the type and the property; every rule broken is
  /// listed in the message.
  static func check(_ schemas: [ObjectSchema], complete: Bool = false) throws(ReefError) {
    var problems: [ReefError] = []
    func problem(_ schema: ObjectSchema, _ property: Property?, _ message: String) {
      problems.append(ReefError(.schema, message, type: schema.className, property: property?.name))
    }
    for schema in schemas {
      for name in schema.undeclaredCollections {
        problems.append(
          ReefError(
            .schema,
            "\(name) is not stored: declare it @Persisted (`@Persisted var \(name): …`); properties without @Persisted, such as the older API's `let x = List<T>()` and `@objc dynamic var`, are ignored",
            type: schema.className, property: name))
      }
      for name in schema.ignoredPersisted {
        problems.append(
          ReefError(
            .schema,
            "\(name) is @Persisted and named in ignoredProperties(): remove @Persisted to ignore it (a property without @Persisted is not stored)",
            type: schema.className, property: name))
      }
      // A type whose only properties are LinkingObjects is a model, as in Realm.
      if schema.allProperties.isEmpty {
        problem(
          schema, nil,
          "the type has no @Persisted property (the older API's `@objc dynamic var` properties are not supported: declare them with @Persisted)"
        )
      }
      let primaryKeys = schema.allProperties.filter(\.isPrimary)
      if schema.isEmbedded, let key = primaryKeys.first {
        problem(schema, key, "an embedded object type cannot have a primary key")
      }
      if primaryKeys.count > 1 {
        problem(schema, primaryKeys[1], "a type has at most one primary key (also \(primaryKeys[0].name))")
      }
      if let key = primaryKeys.first, !schema.isEmbedded {
        let allowed: Set<PropertyType> = [.int, .string, .objectId, .uuid]
        if !allowed.contains(key.type) || key.isArray || key.isSet || key.isMap {
          problem(
            schema, key,
            "a primary key must be an Int, String, ObjectId or UUID (or an optional), not \(key.typeDescription)")
        }
      }
      if let legacy = (schema.objectClass as? Object.Type)?.primaryKey(), schema.property(named: legacy) == nil {
        problem(schema, nil, "primaryKey() names \(legacy), which is not a @Persisted property")
      }
      var columns: [String: Property] = [:]
      for property in schema.allProperties where property.shape.isStored {
        if let other = columns[property.columnName] {
          problem(schema, property, "two properties are stored as \(property.columnName) (also \(other.name))")
        }
        columns[property.columnName] = property
        if property.isIndexed && !property.isPrimary && (property.type == .object || property.isMap) {
          problem(schema, property, "\(property.typeDescription) cannot be indexed: index a property of a value type")
        }
        if property.isSet && property.isEmbedded {
          problem(schema, property, "a MutableSet cannot hold embedded objects (\(property.typeDescription))")
        }
        // A type mapped to an embedded object need not be optional in a map, as in Realm.
        if property.isMap && property.isEmbedded && !property.isOptional && !property.isCustomMapped {
          problem(
            schema, property,
            "a Map of embedded objects holds optionals, as in Realm: Map<String, \(property.objectClassName ?? "")?>, not \(property.typeDescription)"
          )
        }
      }
      if !schema.isEmbedded, let id = columns["_id"], !id.isPrimary {
        problem(schema, id, "a property stored as _id must be the primary key (@Persisted(primaryKey: true))")
      }
      for property in schema.allProperties where property.type == .linkingObjects {
        guard let originName = property.linkOriginPropertyName, !originName.isEmpty else {
          problem(schema, property, "LinkingObjects needs its origin: @Persisted(originProperty: \"…\")")
          continue
        }
        let origin = ObjectSchema.of(property.objectClass!)
        guard let originProperty = origin.property(named: originName) else {
          problem(schema, property, "the origin property \(origin.className).\(originName) does not exist")
          continue
        }
        // By stored type name, as Realm: two classes whose className() is the same are one type.
        if originProperty.objectClassName != schema.className || originProperty.type != .object {
          problem(
            schema, property,
            "the origin property \(origin.className).\(originName) is \(originProperty.typeDescription), which does not link to \(schema.className)"
          )
        }
      }
    }
    checkEmbeddedCycles(schemas, problem)
    if complete { checkOrphans(schemas, problem) }
    if var first = problems.first {
      if problems.count > 1 {
        first.message += "; and \(problems.dropFirst().map(\.description).joined(separator: "; "))"
      }
      throw first
    }
  }

  /// An embedded type that can contain itself (through other embedded types, optional or in a
  /// list) is refused, as in Realm: a subdocument would nest in its own type, which MongoDB's
  /// depth limit and JSON Schemas (written inline) cannot follow.
  private static func checkEmbeddedCycles(
    _ schemas: [ObjectSchema], _ problem: (ObjectSchema, Property?, String) -> Void
  ) {
    for schema in schemas where schema.isEmbedded {
      var stack: [(ObjectSchema, [String])] = [(schema, [schema.className])]
      var seen = Set<ObjectIdentifier>()
      while let (next, path) = stack.popLast() {
        for property in next.allProperties where property.isEmbedded {
          let inner = ObjectSchema.of(property.objectClass!)
          if inner.objectClass == schema.objectClass {
            problem(
              schema, property,
              "embedded types form a cycle (\((path + [inner.className]).joined(separator: " → "))): an embedded type cannot contain itself; link to an Object instead"
            )
          } else if seen.insert(ObjectIdentifier(inner.objectClass)).inserted {
            stack.append((inner, path + [inner.className]))
          }
        }
      }
    }
  }

  /// Every embedded type of a complete list must be reachable from a top-level type.
  private static func checkOrphans(_ schemas: [ObjectSchema], _ problem: (ObjectSchema, Property?, String) -> Void) {
    var reached = Set<ObjectIdentifier>()
    for schema in schemas where !schema.isEmbedded {
      for other in reachable(from: schema) { reached.insert(ObjectIdentifier(other.objectClass)) }
    }
    for schema in schemas where schema.isEmbedded && !reached.contains(ObjectIdentifier(schema.objectClass)) {
      problem(schema, nil, "the embedded type \(schema.className) is reachable from no top-level type")
    }
  }
}

/// The indexes a type's collection gets.
enum IndexPlan {
  struct Index {
    var name: String
    var keys: Document
    var unique: Bool
  }

  /// A unique index on a primary key stored under another name than `_id`; an index on each
  /// indexed property (through embedded objects: `address.city`) and on each link.
  static func indexes(of schema: ObjectSchema) -> [Index] {
    var result: [Index] = []
    func visit(_ schema: ObjectSchema, prefix: String, depth: Int) {
      guard depth < 8 else { return }
      for property in schema.allProperties where property.shape.isStored {
        let path = prefix + property.columnName
        if property.isEmbedded {
          visit(ObjectSchema.of(property.objectClass!), prefix: path + ".", depth: depth + 1)
        } else if property.isPrimary {
          if path != "_id" { result.append(Index(name: "\(path)_1", keys: [path: 1], unique: true)) }
        } else if property.isIndexed || property.isLink {
          result.append(Index(name: "\(path)_1", keys: [path: 1], unique: false))
        }
      }
    }
    visit(schema, prefix: "", depth: 0)
    return result
  }
}
