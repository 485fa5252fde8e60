import CLMDB

extension Transaction {
  /// The number of the committed state this transaction reads (LMDB's transaction id): two read
  /// transactions with the same number see the same snapshot of the file. For a write
  /// transaction, the number its commit will have.
  public var snapshotID: Int { Int(mdb_txn_id(lmdb.pointer)) }
}
