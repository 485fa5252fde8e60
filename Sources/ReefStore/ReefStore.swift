/// ReefStore: collections of raw BSON documents in one LMDB environment, with indexes,
/// transactions and dump import and export.
public enum ReefStoreVersion {
  /// The on-disk format version this build reads and writes.
  public static let formatVersion = 1
}
