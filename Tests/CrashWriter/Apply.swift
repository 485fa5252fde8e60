import ReefBSON
import ReefStore

/// `reef-crash-writer --apply STORE TRANSACTION...`: commits each TRANSACTION, an Extended JSON
/// document `{"c": collection, "insert": [documents], "update": [{"q": filter, "u": update}],
/// "delete": [filters]}`, as one write transaction (inserts, then updates, then deletes), in
/// order; then exits with 0. The notification tests use it to commit from another process.
func applyTransactions(store path: String, _ transactions: [String]) {
  do {
    let store = try Store(path: path)
    for (number, text) in transactions.enumerated() {
      let transaction = try Document(extendedJSON: text)
      guard case .string(let name)? = transaction["c"] else {
        fail("transaction \(number + 1) names no collection (c)")
      }
      try store.write { write in
        let collection = write.collection(name)
        if case .array(let documents)? = transaction["insert"] {
          for case .document(let document) in documents { _ = try collection.insert(document) }
        }
        if case .array(let updates)? = transaction["update"] {
          for case .document(let update) in updates {
            guard case .document(let filter)? = update["q"], case .document(let change)? = update["u"] else {
              fail("transaction \(number + 1): an update is {\"q\": filter, \"u\": update}")
            }
            _ = try collection.updateMany(filter, change)
          }
        }
        if case .array(let filters)? = transaction["delete"] {
          for case .document(let filter) in filters { _ = try collection.deleteMany(filter) }
        }
      }
    }
  } catch {
    fail("\(error)")
  }
}
