#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The repository's `Specs/<name>` directory, found from this source file's path.
public func specDirectory(_ name: String) -> String {
  var path = #filePath
  for _ in 0..<3 { path = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)]) }
  return path + "/Specs/" + name
}

/// The names of the `.json` files in `directory`, sorted. Fails loudly (a fatal error naming the
/// directory) when it cannot be opened, so that a missing spec directory never passes as zero cases.
public func jsonFileNames(in directory: String) -> [String] {
  guard let handle = opendir(directory) else { fatalError("cannot open \(directory)") }
  defer { closedir(handle) }
  var names: [String] = []
  while let entry = readdir(handle) {
    let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    if name.hasSuffix(".json") { names.append(name) }
  }
  return names.sorted()
}
