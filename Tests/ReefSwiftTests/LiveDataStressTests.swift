import Foundation
import ReefBSON
import ReefStore
import ReefSwift
import Testing

/// A bank account: transfers between accounts keep the total.
class Account: Object {
  @Persisted(primaryKey: true) var id = 0
  @Persisted var balance = 0
  @Persisted var transfers = 0
}

/// A ledger of transfers, in another collection: each transfer adds one entry, so a snapshot's
/// entry count equals the sum of its accounts' transfer counts / 2 (an invariant across
/// collections).
class Entry: Object {
  @Persisted(primaryKey: true) var id = 0
  @Persisted var amount = 0
}

/// Several reader threads and one writer for 30 seconds under CI (5 elsewhere): every state a
/// reader's `Reef` shows, after each refresh and in each notification, keeps the invariants
/// across both collections; no crash, no deadlock; every commit the writer made is seen.
@Suite struct LiveDataStressTests {
  static let accounts = 10
  static let initialBalance = 1_000

  static func check(_ reef: Reef) -> String? {
    let accounts = reef.objects(Account.self)
    let total = accounts.reduce(0) { $0 + $1.balance }
    let transfers = accounts.reduce(0) { $0 + $1.transfers }
    let entries = reef.objects(Entry.self).count
    if total != accounts.count * initialBalance { return "total \(total)" }
    if transfers != 2 * entries { return "\(transfers) account transfers for \(entries) entries" }
    return nil
  }

  @Test func readersSeeOnlyConsistentSnapshotsWhileAWriterTransfers() throws {
    let seconds: Double = ProcessInfo.processInfo.environment["CI"] == "true" ? 30 : 5
    let (reef, path) = try openReef("stress", types: [Account.self, Entry.self])
    try reef.write {
      for id in 0..<Self.accounts {
        let account = Account()
        account.id = id
        account.balance = Self.initialBalance
        reef.add(account)
      }
    }
    let configuration = Reef.Configuration(fileURL: URL(fileURLWithPath: path))
    let deadline = Date().addingTimeInterval(seconds)
    let failures = LockedList()
    let group = DispatchGroup()
    let committed = LockedList()
    group.enter()
    Thread {
      defer { group.leave() }
      do {
        let writer = try Reef(configuration: configuration)
        var generator = SystemRandomNumberGenerator()
        var number = 0
        while Date() < deadline {
          number += 1
          let from = Int.random(in: 0..<Self.accounts, using: &generator)
          let to = (from + Int.random(in: 1..<Self.accounts, using: &generator)) % Self.accounts
          let amount = Int.random(in: 1...50, using: &generator)
          try writer.write {
            let source = writer.object(ofType: Account.self, forPrimaryKey: from)!
            let target = writer.object(ofType: Account.self, forPrimaryKey: to)!
            source.balance -= amount
            target.balance += amount
            source.transfers += 1
            target.transfers += 1
            let entry = Entry()
            entry.id = number
            entry.amount = amount
            writer.add(entry)
          }
        }
        committed.append("\(number)")
      } catch {
        failures.append("writer: \(error)")
      }
    }.start()
    let readers = 3
    let notified = LockedList()
    for reader in 0..<readers {
      group.enter()
      Thread {
        defer { group.leave() }
        do {
          let mine = try Reef(configuration: configuration)
          var updates = 0
          let token = mine.objects(Account.self).observe { change in
            if case .update = change {
              updates += 1
              if let failure = Self.check(mine) { failures.append("reader \(reader) in a notification: \(failure)") }
            }
          }
          while Date() < deadline {
            mine.refresh()
            if let failure = Self.check(mine) { failures.append("reader \(reader): \(failure)") }
          }
          token.invalidate()
          notified.append("\(updates)")
        } catch {
          failures.append("reader \(reader): \(error)")
        }
      }.start()
    }
    let finished = group.wait(timeout: .now() + seconds + 60)
    #expect(finished == .success, "a thread did not finish: deadlock?")
    #expect(failures.items.isEmpty, "\(failures.items.prefix(5))")
    let commits = Int(committed.items.first ?? "") ?? 0
    #expect(commits > 0)
    // Every commit is seen by the first Reef after a refresh.
    reef.refresh()
    #expect(reef.objects(Entry.self).count == commits)
    #expect(Self.check(reef) == nil)
    #expect(notified.items.count == readers)
    #expect(notified.items.allSatisfy { (Int($0) ?? 0) > 0 }, "every reader was notified: \(notified.items)")
  }
}

/// Strings appended from several threads.
final class LockedList: @unchecked Sendable {
  private let lock = NSLock()
  private var list: [String] = []
  func append(_ item: String) { lock.withLock { list.append(item) } }
  var items: [String] { lock.withLock { list } }
}
