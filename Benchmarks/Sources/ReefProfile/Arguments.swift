// ReefProfile's command-line arguments.
import BenchSupport

#if canImport(Glibc)
  import Glibc
#endif

/// Argument `index` of the command line, a positive count; `fallback` when the line is shorter.
/// Exits with a message when the argument is not a positive integer.
func countArgument(_ index: Int, default fallback: Int) -> Int {
  let arguments = CommandLine.arguments
  guard index < arguments.count else { return fallback }
  guard let value = Int(arguments[index]), value > 0 else {
    printError("ReefProfile: argument \(index) must be a positive count, not '\(arguments[index])'")
    exit(2)
  }
  return value
}

/// Argument `index` of the command line, one of `choices`; `choices[0]` when the line is shorter.
/// Exits with a message naming the choices otherwise.
func choiceArgument(_ index: Int, _ choices: [String]) -> String {
  let arguments = CommandLine.arguments
  guard index < arguments.count else { return choices[0] }
  guard choices.contains(arguments[index]) else {
    let expected = choices.joined(separator: ", ")
    printError("ReefProfile: argument \(index) must be one of \(expected), not '\(arguments[index])'")
    exit(2)
  }
  return arguments[index]
}
