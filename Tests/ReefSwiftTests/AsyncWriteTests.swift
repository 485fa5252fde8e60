import Foundation
import ReefBSON
import ReefSwift
import Testing

@testable import ReefStore

/// Another thread's `Reef` that holds the write transaction until told to commit.
final class HeldWrite: @unchecked Sendable {
  private let began = DispatchSemaphore(value: 0)
  private let release = DispatchSemaphore(value: 0)
  private let done = DispatchSemaphore(value: 0)
  /// Whether the holder had to give up waiting for `commit()` (the test then fails).
  private(set) var timedOut = false

  /// Starts the thread and returns once it holds the write transaction, in which it adds a
  /// person.
  init(path: String, id: Int, name: String) {
    Thread { [self] in
      let reef = try! Reef(configuration: configuration(path))
      try! reef.write {
        reef.add(makePerson(id, name))
        began.signal()
        // Generous: the test's continuations run on the cooperative pool (2 threads on a 2-core
        // machine), which blocking tests running beside it can hold for minutes. A timeout here
        // means a deadlock, not a slow machine.
        timedOut = release.wait(timeout: .now() + 600) == .timedOut
      }
      done.signal()
    }.start()
    began.wait()
  }

  /// Lets the holder commit, and waits for the commit.
  func commit() {
    release.signal()
    done.wait()
  }
}

/// Opens a `Reef` confined to `queue` (from a block on it).
func queueReef(_ path: String, _ queue: DispatchQueue) -> Smuggled<Reef> {
  let box = Smuggled(value: NSMutableArray())
  queue.sync { box.value.add(try! Reef(configuration: configuration(path), queue: queue)) }
  return Smuggled(value: box.value[0] as! Reef)
}

extension ReefHolder {
  /// Three `writeAsync` calls on the actor's `Reef`; each block and completion logs itself and
  /// whether it runs isolated to the actor.
  func writeAsyncThree(_ log: LockedLog) {
    let reef = reef!
    for (id, name) in [(1, "Ann"), (2, "Bob"), (3, "Cy")] {
      reef.writeAsync {
        self.preconditionIsolated()
        reef.add(makePerson(id, name))
        log.append("block \(name)")
      } onComplete: { error in
        self.preconditionIsolated()
        log.append("done \(name) \(error.map { "\($0)" } ?? "nil")")
      }
    }
    // Nothing ran yet: the blocks run later, on this actor.
    log.append("returned \(reef.isPerformingAsynchronousWriteOperations)")
  }

  var isPerformingAsynchronousWriteOperations: Bool { reef!.isPerformingAsynchronousWriteOperations }
}

struct BlockError: Error, Equatable {}

/// Async writes: `asyncWrite` on an actor, `writeAsync`, `beginAsyncWrite` and
/// `commitAsyncWrite` on a queue.
@Suite struct AsyncWriteTests {
  @Test func asyncWriteLetsTheActorRunWhileAnotherThreadWrites() async throws {
    let (_, path) = try openReef()
    let holder = ReefHolder()
    try await holder.open(path)
    let held = HeldWrite(path: path, id: 1, name: "Ann")
    let write = _Concurrency.Task { try await holder.add(2, "Bob") }
    // The write is under way and waits for the lock: the actor still runs other work.
    while await holder.state != "waiting" { await _Concurrency.Task.yield() }
    await holder.ping()
    held.commit()
    try await write.value
    #expect(!held.timedOut, "the actor was blocked while the write waited")
    #expect(holder.log.entries == ["ping while waiting", "wrote Bob"])
    #expect(await holder.names() == ["Ann", "Bob"])
  }

  @Test func writeAsyncOnAnActorRunsBlocksAndCompletionsInOrderOnTheActor() async throws {
    let (_, path) = try openReef()
    let holder = ReefHolder()
    try await holder.open(path)
    let log = LockedLog()
    await holder.writeAsyncThree(log)
    #expect(await log.arrive(7))
    #expect(
      log.entries == [
        "returned true", "block Ann", "block Bob", "block Cy", "done Ann nil", "done Bob nil", "done Cy nil",
      ])
    #expect(await holder.isPerformingAsynchronousWriteOperations == false)
    #expect(await holder.names() == ["Ann", "Bob", "Cy"])
  }

  @Test func asyncWriteRollsBackWhatTheBlockThrowsOrBreaks() async throws {
    let (_, path) = try openReef()
    let holder = ReefHolder()
    try await holder.open(path)
    try await holder.add(1, "Ann")
    await #expect(throws: BlockError()) {
      try await holder.write { reef in
        reef.add(makePerson(2, "Bob"))
        throw BlockError()
      }
    }
    await #expect {
      try await holder.write { reef in reef.add(makePerson(1, "Ann again")) }
    } throws: { error in
      (error as? ReefError)?.kind == .primaryKeyExists
    }
    #expect(await holder.names() == ["Ann"])
  }

  @Test func asyncWriteOnAThreadConfinedReefThrows() async throws {
    let (reef, _) = try openReef()
    await #expect {
      try await reef.asyncWrite { reef.add(makePerson(1, "Ann")) }
    } throws: { error in
      (error as? ReefError)?.kind == .confinement
    }
    #expect(reef.objects(Person.self).isEmpty)
  }

  @Test func writeAsyncBlocksAndCompletionsRunInOrderOnTheQueue() throws {
    let (_, path) = try openReef()
    let queue = DispatchQueue(label: "reef.async.order")
    let reef = queueReef(path, queue)
    let log = LockedLog()
    queue.sync {
      let reef = reef.value
      for (id, name) in [(1, "Ann"), (2, "Bob"), (3, "Cy")] {
        reef.writeAsync {
          reef.add(makePerson(id, name))
          log.append("block \(name)")
        } onComplete: { error in
          log.append("done \(name) \(error.map { "\($0)" } ?? "nil")")
        }
      }
      // Nothing ran yet: the blocks run later.
      log.append("returned \(reef.isPerformingAsynchronousWriteOperations)")
    }
    #expect(log.wait(for: 7))
    #expect(
      log.entries == [
        "returned true", "block Ann", "block Bob", "block Cy", "done Ann nil", "done Bob nil", "done Cy nil",
      ])
    let after = queue.sync {
      (reef.value.isPerformingAsynchronousWriteOperations, reef.value.objects(Person.self).map(\.name))
    }
    #expect(after.0 == false)
    #expect(after.1 == ["Ann", "Bob", "Cy"])
  }

  @Test func groupedAsyncCommitsShareOneFlushMadeBeforeTheirCompletions() throws {
    let (_, path) = try openReef()
    let queue = DispatchQueue(label: "reef.async.group")
    let reef = queueReef(path, queue)
    let log = LockedLog()
    let commitLog = try #require(reef.value.store.log)
    let before = (commitLog.commitFlushes, commitLog.syncFlushes)
    /// The flushes since `before`, as each completion sees them.
    let flushes = { "commit flushes \(commitLog.commitFlushes - before.0) syncs \(commitLog.syncFlushes - before.1)" }
    queue.sync {
      let reef = reef.value
      for (id, name) in [(1, "Ann"), (2, "Bob"), (3, "Cy")] {
        reef.beginAsyncWrite {
          reef.add(makePerson(id, name))
          reef.commitAsyncWrite(allowGrouping: true) { error in
            log.append("done \(name) \(error.map { "\($0)" } ?? "nil"), \(flushes())")
          }
        }
      }
    }
    #expect(log.wait(for: 3))
    // No commit waited for the disk; one flush made the three durable before any completion.
    #expect(
      log.entries == [
        "done Ann nil, commit flushes 0 syncs 1", "done Bob nil, commit flushes 0 syncs 1",
        "done Cy nil, commit flushes 0 syncs 1",
      ])
    // Without grouping, a commit flushes on its own.
    queue.sync {
      let reef = reef.value
      reef.beginAsyncWrite {
        reef.add(makePerson(4, "Dee"))
        reef.commitAsyncWrite { error in log.append("done Dee \(error.map { "\($0)" } ?? "nil"), \(flushes())") }
      }
    }
    #expect(log.wait(for: 4))
    #expect(log.entries.last == "done Dee nil, commit flushes 1 syncs 1")
    #expect(queue.sync { reef.value.objects(Person.self).count } == 4)
  }

  @Test func writeAsyncDoesNotBlockTheQueueWhileAnotherThreadWrites() throws {
    let (_, path) = try openReef()
    let queue = DispatchQueue(label: "reef.async.wait")
    let reef = queueReef(path, queue)
    let log = LockedLog()
    let held = HeldWrite(path: path, id: 1, name: "Ann")
    _ = queue.sync {
      reef.value.writeAsync {
        log.append("block sees \(reef.value.objects(Person.self).map(\.name))")
        reef.value.add(makePerson(2, "Bob"))
      } onComplete: { error in
        log.append("done \(error.map { "\($0)" } ?? "nil")")
      }
    }
    // The queue runs other blocks while the write waits for the lock.
    queue.sync { log.append("queue free") }
    held.commit()
    #expect(log.wait(for: 3))
    #expect(!held.timedOut)
    #expect(log.entries == ["queue free", #"block sees ["Ann"]"#, "done nil"])
    #expect(queue.sync { reef.value.objects(Person.self).sorted(byKeyPath: "id").map(\.name) } == ["Ann", "Bob"])
  }

  @Test func cancelAsyncWriteDropsAWaitingWriteOrACompletion() throws {
    let (_, path) = try openReef()
    let queue = DispatchQueue(label: "reef.async.cancel")
    let reef = queueReef(path, queue)
    let log = LockedLog()
    queue.sync {
      let reef = reef.value
      reef.writeAsync {
        reef.add(makePerson(1, "Ann"))
      } onComplete: { _ in
        log.append("done Ann")
      }
      let bob = reef.writeAsync {
        reef.add(makePerson(2, "Bob"))
      } onComplete: { _ in
        log.append("done Bob")
      }
      reef.beginAsyncWrite {
        reef.add(makePerson(3, "Cy"))
        let commit = reef.commitAsyncWrite { _ in log.append("done Cy") }
        // The commit stays; its completion is not called.
        try! reef.cancelAsyncWrite(commit)
      }
      reef.writeAsync {
        reef.add(makePerson(4, "Dee"))
      } onComplete: { _ in
        log.append("done Dee")
      }
      try! reef.cancelAsyncWrite(bob)
    }
    #expect(log.wait(for: 2))
    #expect(log.entries == ["done Ann", "done Dee"])
    #expect(
      queue.sync { reef.value.objects(Person.self).sorted(byKeyPath: "id").map(\.name) } == ["Ann", "Cy", "Dee"])
  }

  @Test func aBrokenRuleInAWriteAsyncBlockRollsBackAndReachesOnComplete() throws {
    let (_, path) = try openReef()
    let queue = DispatchQueue(label: "reef.async.error")
    let reef = queueReef(path, queue)
    let log = LockedLog()
    queue.sync {
      let reef = reef.value
      reef.writeAsync { reef.add(makePerson(1, "Ann")) }
      reef.writeAsync {
        reef.add(makePerson(2, "Bob"))
        reef.add(makePerson(1, "Ann again"))
      } onComplete: { error in
        log.append("\((error as? ReefError)?.kind.description ?? "no ReefError: \(String(describing: error))")")
      }
      // Without a write transaction, commitAsyncWrite reports it.
      reef.commitAsyncWrite { error in log.append("\((error as? ReefError)?.kind.description ?? "nil")") }
    }
    #expect(log.wait(for: 2))
    #expect(log.entries == ["transaction", "primaryKeyExists"])
    #expect(queue.sync { reef.value.objects(Person.self).map(\.name) } == ["Ann"])
  }

  @Test func writeAsyncOnAFrozenReefStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      runOrExitCleanly {
        let (reef, _) = try openReef()
        let frozen = reef.freeze()
        frozen.writeAsync { frozen.add(makePerson(1, "Ann")) }
      }
    }
    let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(stderr.contains("Can't perform transactions on a frozen Reef"), "\(stderr)")
  }
}

extension ReefHolder {
  /// Runs `block` in `asyncWrite` on the actor's `Reef`.
  func write(_ block: (Reef) throws -> Void) async throws {
    let reef = self.reef!
    try await reef.asyncWrite { try block(reef) }
  }
}
