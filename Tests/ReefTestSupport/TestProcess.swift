#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Runs the package's helper executables (`reef-crash-writer`) from tests, in other processes.
public enum TestProcess {
  /// A process that could not be started or waited for.
  public struct Failure: Error, CustomStringConvertible {
    public var description: String
  }

  /// The built executable `name`: the one next to the test bundle, a few folders up, or in
  /// `.build/debug` of the package (found from this file's path).
  public static func executable(_ name: String) -> String {
    var candidates: [String] = []
    let executable = CommandLine.arguments[0]
    if let slash = executable.lastIndex(of: "/") {
      var directory = String(executable[..<slash])
      for _ in 0..<4 {
        candidates.append(directory + "/" + name)
        guard let up = directory.lastIndex(of: "/") else { break }
        directory = String(directory[..<up])
      }
    }
    // Tests/ReefTestSupport/TestProcess.swift -> package root -> .build/debug
    let root = String(#filePath).split(separator: "/", omittingEmptySubsequences: false).dropLast(3)
      .joined(separator: "/")
    candidates.append(root + "/.build/debug/" + name)
    return candidates.first { access($0, X_OK) == 0 } ?? candidates.last!
  }

  /// Runs `binary` with `arguments` and waits for it; returns its exit status (or 128 + the
  /// signal that ended it). Its standard streams are this process's.
  /// - Throws: ``Failure`` when it cannot be started or waited for.
  public static func run(_ binary: String, _ arguments: [String]) throws -> Int32 {
    var argv: [UnsafeMutablePointer<CChar>?] = ([binary] + arguments).map { strdup($0) } + [nil]
    defer { for argument in argv { free(argument) } }
    var pid = pid_t()
    let code = posix_spawn(&pid, binary, nil, nil, &argv, environ)
    guard code == 0 else { throw Failure(description: "cannot start \(binary) (error \(code))") }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 {
      guard errno == EINTR else { throw Failure(description: "cannot wait for \(binary) (errno \(errno))") }
    }
    let signal = status & 0x7f
    return signal == 0 ? (status >> 8) & 0xff : 128 + signal
  }
}
