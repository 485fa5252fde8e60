/// ReefStore: collections of raw BSON documents in one LMDB environment, with indexes,
/// transactions and dump import and export.
public enum ReefStoreVersion {
  /// The on-disk format version this build reads and writes (`Specs/store/layout.md`).
  ///
  /// Version 2 stores each document after an 8-byte checksum; version 1 stores (from before
  /// that) are refused when opened, with a message saying so.
  public static let formatVersion = 2
}
