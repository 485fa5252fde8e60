/// A unified diff of two texts, line by line, as `diff -u` prints it: `---`/`+++` headers, then
/// hunks of changed lines with three lines of context, `\ No newline at end of file` where a
/// text does not end in one. `patch -p0` applies it.
public enum UnifiedDiff {
  /// The diff from `old` to `new`, or "" when they are equal.
  /// - Parameters:
  ///   - old: the text before.
  ///   - new: the text after.
  ///   - oldName: the name on the `---` line.
  ///   - newName: the name on the `+++` line.
  ///   - context: the lines of context around each change.
  /// - Complexity: O((n + m) · d) for texts of n and m lines that differ in d lines.
  public static func diff(_ old: String, _ new: String, oldName: String, newName: String, context: Int = 3) -> String {
    guard old != new else { return "" }
    let a = lines(old)
    let b = lines(new)
    // A last line without its newline differs from the same line with one.
    let script = editScript(
      a.map { $0.terminated ? $0.text + "\n" : String($0.text) },
      b.map {
        $0.terminated ? $0.text + "\n" : String($0.text)
      })
    var output = "--- \(oldName)\n+++ \(newName)\n"
    // Group the script into hunks: changes closer than 2 * context lines share one.
    var i = 0
    while i < script.count {
      guard script[i].kind != .same else {
        i += 1
        continue
      }
      var start = i
      var kept = 0
      while start > 0 && kept < context && script[start - 1].kind == .same {
        start -= 1
        kept += 1
      }
      var end = i
      var sameRun = 0
      while end < script.count {
        if script[end].kind == .same {
          sameRun += 1
          if sameRun > 2 * context { break }
        } else {
          sameRun = 0
        }
        end += 1
      }
      // Trim the trailing context to `context` lines.
      var trailing = 0
      while end > i && script[end - 1].kind == .same {
        end -= 1
        trailing += 1
      }
      end += min(trailing, context)
      let hunk = script[start..<end]
      let oldStart = hunk.first.map { $0.oldIndex } ?? 0
      let newStart = hunk.first.map { $0.newIndex } ?? 0
      let oldCount = hunk.filter { $0.kind != .inserted }.count
      let newCount = hunk.filter { $0.kind != .deleted }.count
      output += "@@ -\(range(oldStart, oldCount)) +\(range(newStart, newCount)) @@\n"
      for step in hunk {
        switch step.kind {
        case .same: output += line(" ", a[step.oldIndex])
        case .deleted: output += line("-", a[step.oldIndex])
        case .inserted: output += line("+", b[step.newIndex])
        }
      }
      i = end
    }
    return output
  }

  private static func range(_ start: Int, _ count: Int) -> String {
    // diff -u numbers lines from 1; an empty range names the line before it.
    count == 1 ? "\(start + 1)" : "\(count == 0 ? start : start + 1),\(count)"
  }

  private static func line(_ prefix: String, _ line: (text: Substring, terminated: Bool)) -> String {
    prefix + line.text + (line.terminated ? "\n" : "\n\\ No newline at end of file\n")
  }

  private static func lines(_ text: String) -> [(text: Substring, terminated: Bool)] {
    var result: [(text: Substring, terminated: Bool)] = []
    var rest = text[...]
    while !rest.isEmpty {
      if let newline = rest.firstIndex(of: "\n") {
        result.append((rest[..<newline], true))
        rest = rest[rest.index(after: newline)...]
      } else {
        result.append((rest, false))
        rest = rest[rest.endIndex...]
      }
    }
    return result
  }

  struct Step {
    enum Kind { case same, deleted, inserted }
    var kind: Kind
    var oldIndex: Int
    var newIndex: Int
  }

  /// Myers' shortest edit script from `a` to `b`: each line of `a` kept or deleted, each line
  /// of `b` kept or inserted, deletions before insertions within a change.
  static func editScript(_ a: [String], _ b: [String]) -> [Step] {
    let n = a.count
    let m = b.count
    let maximum = n + m
    var v = [Int](repeating: 0, count: 2 * maximum + 2)
    var trace: [[Int]] = []
    var found = false
    for d in 0...maximum {
      // Only the diagonals this round reads: -d...d.
      trace.append(Array(v[(maximum - d)...(maximum + d)]))
      for k in stride(from: -d, through: d, by: 2) {
        var x: Int
        if k == -d || (k != d && v[maximum + k - 1] < v[maximum + k + 1]) {
          x = v[maximum + k + 1]
        } else {
          x = v[maximum + k - 1] + 1
        }
        var y = x - k
        while x < n && y < m && a[x] == b[y] {
          x += 1
          y += 1
        }
        v[maximum + k] = x
        if x >= n && y >= m {
          found = true
          break
        }
      }
      if found { break }
    }
    // Walk back through the trace.
    var steps: [Step] = []
    var x = n
    var y = m
    for d in stride(from: trace.count - 1, through: 0, by: -1) {
      let round = trace[d]
      var previousX = 0
      var previousY = 0
      if d > 0 {
        let k = x - y
        let previousK = k == -d || (k != d && round[k - 1 + d] < round[k + 1 + d]) ? k + 1 : k - 1
        previousX = round[previousK + d]
        previousY = previousX - previousK
      }
      while x > previousX && y > previousY {
        x -= 1
        y -= 1
        steps.append(Step(kind: .same, oldIndex: x, newIndex: y))
      }
      if d > 0 {
        if x == previousX {
          y -= 1
          steps.append(Step(kind: .inserted, oldIndex: x, newIndex: y))
        } else {
          x -= 1
          steps.append(Step(kind: .deleted, oldIndex: x, newIndex: y))
        }
      }
    }
    return steps.reversed()
  }
}
