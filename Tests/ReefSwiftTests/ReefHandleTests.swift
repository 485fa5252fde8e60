import Foundation
import ReefBSON
import ReefStore
import ReefSwift
import Testing

/// Realm's calls on the handle itself: invalidating, emptiness, refreshing, the file.
@Suite struct ReefHandleTests {
  @Test func invalidateInvalidatesTheObjectsReadBeforeAndTheReefReadsOnAfter() throws {
    let (reef, _) = try openReef()
    let ann = makePerson(1, "Ann", dogs: ["Rex"])
    try reef.write { reef.add(ann) }
    let dogs = ann.dogs
    let results = reef.objects(Person.self)
    #expect(results.count == 1)
    #expect(!results.isInvalidated)
    reef.invalidate()
    #expect(ann.isInvalidated)
    #expect(dogs.isInvalidated)
    #expect(results.isInvalidated, "as Realm's")
    #expect(!reef.objects(Person.self).isInvalidated)
    try reef.write { reef.add(makePerson(2, "Bob")) }
    #expect(ann.isInvalidated, "an object read before invalidate() stays invalidated")
    #expect(results.count == 2, "results read the file again (Realm refuses to read them)")
    let again = try #require(reef.object(ofType: Person.self, forPrimaryKey: 1))
    #expect(!again.isInvalidated)
    #expect(again.dogs.map(\.name) == ["Rex"])
  }

  @Test func invalidateInsideAWriteRollsItBack() throws {
    let (reef, _) = try openReef()
    reef.beginWrite()
    reef.add(makePerson(1, "Ann"))
    reef.invalidate()
    #expect(!reef.isInWriteTransaction)
    #expect(reef.objects(Person.self).isEmpty)
  }

  @Test func isEmptyFollowsTheObjectsOfAllTypesAndTheWriteUnderWay() throws {
    let (reef, _) = try openReef()
    #expect(reef.isEmpty)
    reef.beginWrite()
    reef.add(Dog())
    #expect(!reef.isEmpty, "the write's own object counts")
    reef.cancelWrite()
    #expect(reef.isEmpty)
    try reef.write { reef.add(makePerson(1, "Ann")) }
    #expect(!reef.isEmpty)
    try reef.write { reef.deleteAll() }
    #expect(reef.isEmpty)
  }

  @Test func anEmptyWriteStillNotifiesTheReefsObservers() throws {
    let (reef, _) = try openReef()
    var notifications: [Reef.Notification] = []
    let token = reef.observe { notification, observed in
      #expect(observed === reef)
      notifications.append(notification)
    }
    try reef.write {}
    #expect(notifications == [.didChange])
    try reef.write(withoutNotifying: [token]) {}
    #expect(notifications == [.didChange], "a silenced block is not called")
    // A refresh that finds nothing new calls nobody.
    reef.refresh()
    #expect(notifications == [.didChange])
    token.invalidate()
    try reef.write {}
    #expect(notifications == [.didChange])
  }

  @Test func anEmptyWriteDoesNotNotifyResults() throws {
    let (reef, _) = try openReef()
    var updates = 0
    let token = reef.objects(Person.self).observe { change in
      if case .update = change { updates += 1 }
    }
    try reef.write {}
    #expect(updates == 0)
    try reef.write { reef.add(makePerson(1, "Ann")) }
    #expect(updates == 1)
    token.invalidate()
  }

  @Test func autorefreshIsOnByDefaultAndAThreadConfinedReefRefreshesOnlyWhenAsked() throws {
    let (reef, path) = try openReef()
    #expect(reef.autorefresh)
    reef.autorefresh = false
    #expect(!reef.autorefresh)
    reef.autorefresh = true
    let results = reef.objects(Person.self)
    #expect(results.isEmpty)
    let error = onAnotherThread {
      let other = try Reef(configuration: configuration(path))
      try other.write { other.add(makePerson(1, "Ann")) }
    }
    #expect(error == nil)
    #expect(results.isEmpty, "no run loop: the thread's Reef stays on its state")
    reef.refresh()
    #expect(results.count == 1)
  }

  @Test func aQueueConfinedReefWithoutAutorefreshIsToldARefreshIsRequired() throws {
    let (_, path) = try openReef()
    let queue = DispatchQueue(label: "reef.autorefresh")
    let log = LockedLog()
    let held = try queue.sync { () throws -> Smuggled<(Reef, NotificationToken)> in
      let reef = try Reef(configuration: configuration(path), queue: queue)
      reef.autorefresh = false
      _ = reef.objects(Person.self).count
      let token = reef.observe { notification, reef in
        log.append("\(notification) \(reef.objects(Person.self).count)")
      }
      return Smuggled(value: (reef, token))
    }
    let error = onAnotherThread {
      let other = try Reef(configuration: configuration(path))
      try other.write { other.add(makePerson(1, "Ann")) }
    }
    #expect(error == nil)
    #expect(log.wait(for: 1))
    #expect(log.entries == ["refreshRequired 0"])
    queue.sync {
      held.value.0.refresh()
      held.value.1.invalidate()
    }
    #expect(log.entries == ["refreshRequired 0", "didChange 1"])
  }

  @Test func fileExistsSaysWhetherTheFileIsThere() throws {
    let directory = makeTemporaryDirectoryForReef()
    let configuration = Reef.Configuration(fileURL: URL(fileURLWithPath: directory + "/exists.reef"))
    #expect(!Reef.fileExists(for: configuration))
    try { _ = try Reef(configuration: configuration) }()
    #expect(Reef.fileExists(for: configuration))
    #expect(try Reef.deleteFiles(for: configuration))
    #expect(!Reef.fileExists(for: configuration))
  }

  @Test func schemaVersionAtURLReadsTheVersionAndThrowsWithoutAReefFile() throws {
    let directory = makeTemporaryDirectoryForReef()
    let url = URL(fileURLWithPath: directory + "/versioned.reef")
    #expect(throws: ReefError.self) { try schemaVersionAtURL(url) }
    try { _ = try Reef(fileURL: url) }()
    #expect(try schemaVersionAtURL(url) == 0, "read with no Reef of the file open")
    let open = try Reef(configuration: Reef.Configuration(fileURL: url, schemaVersion: 3))
    #expect(try schemaVersionAtURL(url) == 3, "read through the open store")
    _ = open
    #expect(throws: ReefError.self) { try schemaVersionAtURL(URL(fileURLWithPath: "/dev/null")) }
    #expect(throws: ReefError.self) { try schemaVersionAtURL(url, encryptionKey: Data(count: 64)) }
  }

  @Test func performMigrationRunsTheBlockOnceAndThenNot() throws {
    let directory = makeTemporaryDirectoryForReef()
    let url = URL(fileURLWithPath: directory + "/perform.reef")
    try { _ = try Reef(fileURL: url) }()
    nonisolated(unsafe) var runs: [UInt64] = []
    let configuration = Reef.Configuration(
      fileURL: url, schemaVersion: 1, migrationBlock: { _, old in runs.append(old) })
    try Reef.performMigration(for: configuration)
    #expect(runs == [0])
    #expect(try schemaVersionAtURL(url) == 1)
    try Reef.performMigration(for: configuration)
    #expect(runs == [0], "the file is at the version already")
    var next = configuration
    next.schemaVersion = 2
    _ = try Reef(configuration: next)
    #expect(runs == [0, 1], "opening migrates too")
  }

  @Test func performMigrationOfAnOpenFileStopsWithRealmsMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let (reef, path) = try openReef()
        try Reef.performMigration(for: Reef.Configuration(fileURL: URL(fileURLWithPath: path), schemaVersion: 1))
        _ = reef
      }
    }
    let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(stderr.contains("Cannot migrate Reefs that are already open."), "\(stderr)")
  }

  @Test func asyncOpenMigratesElsewhereAndCallsBackWithAReefOfTheQueue() throws {
    let directory = makeTemporaryDirectoryForReef()
    let url = URL(fileURLWithPath: directory + "/async.reef")
    try {
      let reef = try Reef(fileURL: url)
      try reef.write { reef.add(makePerson(1, "Ann")) }
    }()
    let migratedOn = LockedLog()
    let configuration = Reef.Configuration(
      fileURL: url, schemaVersion: 1,
      migrationBlock: { _, _ in migratedOn.append(Thread.isMainThread ? "main" : "\(currentThreadNumber())") })
    let queue = DispatchQueue(label: "reef.async-open")
    let log = LockedLog()
    let here = currentThreadNumber()
    Reef.asyncOpen(configuration: configuration, callbackQueue: queue) { result in
      switch result {
      case .success(let reef):
        // The Reef is the queue's: using it here, on the queue, is allowed.
        log.append(
          "opened \(reef.objects(Person.self).count) \(reef === (try? Reef(configuration: configuration, queue: queue)))"
        )
      case .failure(let error): log.append("failed \(error)")
      }
    }
    #expect(log.wait(for: 1))
    #expect(log.entries == ["opened 1 true"])
    #expect(migratedOn.entries.count == 1 && migratedOn.entries != ["\(here)"], "migrated on another thread")
  }

  @Test func asyncOpenCallsBackWithTheErrorAndNotAtAllWhenCancelled() throws {
    let queue = DispatchQueue(label: "reef.async-open.error")
    let log = LockedLog()
    let bad = Reef.Configuration(fileURL: URL(fileURLWithPath: "/dev/null/none.reef"))
    Reef.asyncOpen(configuration: bad, callbackQueue: queue) { result in
      if case .failure(let error) = result { log.append("failed \((error as? ReefError)?.kind.rawValue ?? "?")") }
    }
    #expect(log.wait(for: 1))
    #expect(log.entries == ["failed store"])
    let (_, path) = try openReef()
    let task = Reef.asyncOpen(configuration: configuration(path), callbackQueue: queue) { _ in
      log.append("called after cancel")
    }
    task.cancel()
    // Anything the task would call runs before this block, which comes after it on the queue
    // (the open's other thread schedules its block before the task could be waited for).
    Thread.sleep(forTimeInterval: 0.2)
    queue.sync {}
    #expect(log.entries == ["failed store"])
  }

  @Test func anAsyncOpenOnAnActorPreparesTheFileFirst() async throws {
    let (_, path) = try openReef()
    #expect(try await OpenerActor().openAndCount(path) == 0)
  }
}

/// An actor opening a file with Realm's `downloadBeforeOpen`.
actor OpenerActor {
  func openAndCount(_ path: String) async throws -> Int {
    let reef = try await Reef(configuration: configuration(path), actor: self, downloadBeforeOpen: .always)
    return reef.objects(Person.self).count
  }
}
