import Dispatch
import Foundation
import ReefSwift
import Testing

/// An unannotated observe block of several statements that passes its change on as an
/// `ObjectChange<Object>`, as Realm's tests do, and an object's `hash`.
@Suite struct UnannotatedObserveBlockTests {
  /// Takes a change as Realm's tests' helpers do, typed by the base class.
  private func name(of change: ObjectChange<Object>) -> String {
    if case .change(let object, let properties) = change {
      return "\(object.objectSchema.className) \(properties.map(\.name))"
    }
    return "other"
  }

  @Test func aBlockOfSeveralStatementsMayPassItsChangeOnAsAnObjectChangeOfObject() throws {
    let (reef, _) = try openReef()
    let dog = Dog()
    try reef.write { reef.add(dog) }
    var seen: [String] = []
    var calls = 0
    let token = dog.observe { change in
      seen.append(name(of: change))
      calls += 1
    }
    try reef.write { dog.name = "Rex" }
    #expect(seen == ["Dog [\"name\"]"])
    #expect(calls == 1)
    // A block that needs the object's own type still gets it.
    var names: [String] = []
    let typed = dog.observe { change in
      if case .change(let dog, _) = change { names.append(dog.name) }
      calls += 1
    }
    try reef.write { dog.name = "Max" }
    #expect(names == ["Max"])
    _ = (token, typed)
  }

  @Test func soMayABlockCalledOnAQueue() throws {
    let (reef, _) = try openReef()
    let dog = Dog()
    try reef.write { reef.add(dog) }
    let queue = DispatchQueue(label: "observer")
    let done = DispatchSemaphore(value: 0)
    let seen = Locked<[String]>([])
    let token = dog.observe(on: queue) { change in
      seen.mutate { $0.append(name(of: change)) }
      done.signal()
    }
    queue.sync {}
    try reef.write { dog.name = "Rex" }
    #expect(done.wait(timeout: .now() + 10) == .success)
    token.invalidate()
    #expect(seen.value == ["Dog [\"name\"]"])
  }

  @Test func anObjectsHashIsEqualForEqualObjects() throws {
    let (reef, _) = try openReef()
    // Objects of a type with a primary key are == when they are the same stored object.
    let person = makePerson(1, "Ann")
    try reef.write { reef.add(person) }
    let again = try #require(reef.objects(Person.self).first)
    #expect(person == again)
    #expect(person.hash == again.hash)
    #expect(person.hash == person.hashValue)
  }
}

/// A value shared with a queue's block.
private final class Locked<Value>: @unchecked Sendable {
  private let lock = NSLock()
  private var stored: Value
  init(_ value: Value) { stored = value }
  var value: Value {
    lock.lock()
    defer { lock.unlock() }
    return stored
  }
  func mutate(_ change: (inout Value) -> Void) {
    lock.lock()
    defer { lock.unlock() }
    change(&stored)
  }
}
