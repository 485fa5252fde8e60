import CLMDB

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// One write transaction's changes to LMDB, as the commit log keeps them (`Specs/store/log.md`):
/// a 32-byte header, then operations on databases named once per record.
///
/// | op | layout (little-endian) |
/// |---|---|
/// | 1 name | database number (2), create (1), name length (2), name |
/// | 2 put | database number (2), key length (4), key, value length (4), value |
/// | 3 delete | database number (2), key length (4), key |
/// | 4 drop | database number (2) |
///
/// The builder reuses one 4 KiB-aligned buffer (records are written with `O_DIRECT`). A
/// transaction whose record would pass ``CommitLog/largestRecord`` stops recording
/// (``isAbandoned``) and commits with a checkpoint instead.
final class CommitRecord {
  private(set) var bytes: UnsafeMutableRawPointer
  private var capacity: Int
  private var count = CommitLog.recordHeaderSize
  private(set) var isAbandoned = false
  /// The record's numbers of the LMDB databases it names so far.
  private var numbers: [(database: MDB_dbi, number: UInt16)] = []
  private var nextNumber: UInt16 = 1
  /// The name of an open database (the store's table), for databases opened before this
  /// transaction.
  var nameOf: (MDB_dbi) -> String? = { _ in nil }

  private static let initialCapacity = 64 << 10
  /// A buffer grown past this for a large transaction is given back when the next one begins.
  private static let keptCapacity = 1 << 20

  init() {
    capacity = CommitRecord.initialCapacity
    bytes = CommitRecord.allocate(capacity)
  }

  deinit { free(bytes) }

  private static func allocate(_ size: Int) -> UnsafeMutableRawPointer {
    var pointer: UnsafeMutableRawPointer?
    guard posix_memalign(&pointer, CommitLog.blockSize, size) == 0, let pointer else {
      fatalError("cannot allocate \(size) bytes for a commit record")
    }
    return pointer
  }

  /// Whether nothing was recorded.
  var isEmpty: Bool { count == CommitLog.recordHeaderSize }

  /// Starts over for the next transaction (with a small buffer again after a large one).
  func reset() {
    if capacity > CommitRecord.keptCapacity {
      free(bytes)
      capacity = CommitRecord.initialCapacity
      bytes = CommitRecord.allocate(capacity)
    }
    count = CommitLog.recordHeaderSize
    isAbandoned = false
    numbers.removeAll(keepingCapacity: true)
    nextNumber = 1
  }

  /// `size` rounded up to whole blocks.
  static func paddedSize(_ size: Int) -> Int {
    (size + CommitLog.blockSize - 1) / CommitLog.blockSize * CommitLog.blockSize
  }

  // MARK: Recording

  /// Room for `size` more bytes; false (and the record abandoned) past the largest record.
  @inline(__always)
  private func reserve(_ size: Int) -> Bool {
    if isAbandoned { return false }
    if count + size <= capacity { return true }
    return grow(count + size)
  }

  @inline(never)
  private func grow(_ needed: Int) -> Bool {
    guard needed <= CommitLog.largestRecord else {
      isAbandoned = true
      return false
    }
    var size = capacity
    while size < needed + CommitLog.blockSize { size *= 2 }
    let larger = CommitRecord.allocate(size)
    larger.copyMemory(from: bytes, byteCount: count)
    free(bytes)
    bytes = larger
    capacity = size
    return true
  }

  @inline(__always)
  private func append<T: FixedWidthInteger>(_ value: T) {
    bytes.storeBytes(of: value.littleEndian, toByteOffset: count, as: T.self)
    count += MemoryLayout<T>.size
  }

  @inline(__always)
  private func append(_ data: UnsafeRawBufferPointer) {
    if let base = data.baseAddress { (bytes + count).copyMemory(from: base, byteCount: data.count) }
    count += data.count
  }

  /// The record's number of `database`, naming it first if this record has not; nil once the
  /// record is abandoned (without looking the database's name up for every later change).
  @inline(__always)
  private func number(_ database: MDB_dbi) -> UInt16? {
    if isAbandoned { return nil }
    for entry in numbers where entry.database == database { return entry.number }
    guard let name = nameOf(database) else {
      isAbandoned = true  // cannot name it: commit with a checkpoint instead
      return nil
    }
    return define(database, name: name, create: false)
  }

  /// Names `database` in this record (after opening it, `create` if it was opened creating).
  @discardableResult
  func define(_ database: MDB_dbi, name: String, create: Bool) -> UInt16? {
    let utf8 = Array(name.utf8)
    guard reserve(6 + utf8.count) else { return nil }
    numbers.removeAll { $0.database == database }
    let number = nextNumber
    nextNumber &+= 1
    append(UInt8(1))
    append(number)
    append(UInt8(create ? 1 : 0))
    append(UInt16(utf8.count))
    utf8.withUnsafeBytes { append($0) }
    numbers.append((database, number))
    return number
  }

  func put(_ database: MDB_dbi, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
    guard let number = number(database), reserve(11 + key.count + value.count) else { return }
    append(UInt8(2))
    append(number)
    append(UInt32(key.count))
    append(key)
    append(UInt32(value.count))
    append(value)
  }

  func delete(_ database: MDB_dbi, key: UnsafeRawBufferPointer) {
    guard let number = number(database), reserve(7 + key.count) else { return }
    append(UInt8(3))
    append(number)
    append(UInt32(key.count))
    append(key)
  }

  func drop(_ database: MDB_dbi) {
    guard let number = number(database), reserve(3) else { return }
    append(UInt8(4))
    append(number)
    // LMDB closes a dropped database's handle; its number may come back for another name.
    numbers.removeAll { $0.database == database }
  }

  // MARK: Sealing

  /// Fills the header in (record `lsn` of checkpoint `sequence`, with its checksum salted with
  /// the checkpoint's `salt`) and zeroes
  /// the padding; returns the padded size to write from ``bytes``.
  func seal(sequence: UInt64, salt: UInt64, lsn: UInt64) -> Int {
    let padded = CommitRecord.paddedSize(count)
    (bytes + count).initializeMemory(as: UInt8.self, repeating: 0, count: padded - count)
    bytes.storeBytes(of: CommitLog.recordMagic.littleEndian, toByteOffset: 0, as: UInt32.self)
    bytes.storeBytes(of: lsn.littleEndian, toByteOffset: 16, as: UInt64.self)
    bytes.storeBytes(of: UInt32(count - CommitLog.recordHeaderSize).littleEndian, toByteOffset: 24, as: UInt32.self)
    bytes.storeBytes(of: UInt32(0), toByteOffset: 28, as: UInt32.self)
    reseal(sequence: sequence, salt: salt)
    return padded
  }

  /// Sets the checkpoint's sequence number and the checksum (salted with the checkpoint's salt)
  /// again: a checkpoint came in between.
  func reseal(sequence: UInt64, salt: UInt64) {
    bytes.storeBytes(of: sequence.littleEndian, toByteOffset: 8, as: UInt64.self)
    let checksum = reef_crc32c_salted(salt, bytes + 8, count - 8)
    bytes.storeBytes(of: checksum.littleEndian, toByteOffset: 4, as: UInt32.self)
  }

  // MARK: Applying

  /// Applies a record's operations (`payload`, after its header) to `transaction`; `place`
  /// names the record in errors.
  static func apply(_ payload: [UInt8], to transaction: LMDBTransaction, where place: String) throws(StoreError) {
    var databases: [UInt16: MDB_dbi] = [:]
    var offset = 0
    /// The error for the field that begins at byte `start` of the operations.
    func damaged(_ what: String, at start: Int) -> StoreError {
      StoreError(.corrupt, "\(place): \(what) at byte \(start) of its operations")
    }
    func integer<T: FixedWidthInteger>(_: T.Type) throws(StoreError) -> T {
      let size = MemoryLayout<T>.size
      guard offset + size <= payload.count else {
        throw damaged("expected \(size) more bytes, found the end", at: offset)
      }
      defer { offset += size }
      return payload.littleEndian(T.self, at: offset)
    }
    func slice(_ size: Int) throws(StoreError) -> ArraySlice<UInt8> {
      guard size >= 0, offset + size <= payload.count else {
        throw damaged("expected \(size) bytes of data, found \(payload.count - offset)", at: offset)
      }
      defer { offset += size }
      return payload[offset..<offset + size]
    }
    /// The number of a database the record has named, and its handle.
    func database() throws(StoreError) -> (number: UInt16, handle: MDB_dbi) {
      let start = offset
      let number = try integer(UInt16.self)
      guard let database = databases[number] else {
        throw damaged("database number \(number) used before it is named", at: start)
      }
      return (number, database)
    }
    while offset < payload.count {
      let start = offset
      let op = try integer(UInt8.self)
      switch op {
      case 1:
        let number = try integer(UInt16.self)
        let create = try integer(UInt8.self) != 0
        let length = Int(try integer(UInt16.self))
        let nameStart = offset
        let name = String(decoding: try slice(length), as: UTF8.self)
        guard let database = try transaction.open(name, create: create) else {
          throw damaged("the database \(name) does not exist", at: nameStart)
        }
        databases[number] = database
      case 2:
        let database = try database().handle
        let key = Array(try slice(Int(try integer(UInt32.self))))
        let value = Array(try slice(Int(try integer(UInt32.self))))
        try transaction.put(database, key, value)
      case 3:
        let database = try database().handle
        try transaction.delete(database, Array(try slice(Int(try integer(UInt32.self)))))
      case 4:
        let database = try database()
        try transaction.drop(database.handle)
        databases[database.number] = nil
      default:
        throw damaged("expected an operation (1 to 4), found \(op)", at: start)
      }
    }
  }
}
