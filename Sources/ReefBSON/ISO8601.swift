/// ISO 8601 date-time formatting and parsing on int64 milliseconds, without Foundation, for
/// relaxed Extended JSON (`{"$date": "1970-01-01T00:00:00Z"}`).
public enum ISO8601 {
  /// Days since 1970-01-01 for a proleptic Gregorian civil date.
  static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
    let y = month <= 2 ? year - 1 : year
    let era = (y >= 0 ? y : y - 399) / 400
    let yoe = y - era * 400
    let mp = (month + 9) % 12
    let doy = (153 * mp + 2) / 5 + day - 1
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
    return era * 146097 + doe - 719468
  }

  /// The civil date of a day count since 1970-01-01.
  static func civil(days z0: Int64) -> (year: Int64, month: Int64, day: Int64) {
    let z = z0 + 719468
    let era = (z >= 0 ? z : z - 146096) / 146097
    let doe = z - era * 146097
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
    let mp = (5 * doy + 2) / 153
    let d = doy - (153 * mp + 2) / 5 + 1
    let m = mp < 10 ? mp + 3 : mp - 9
    return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
  }

  /// Formats milliseconds since the epoch as `YYYY-MM-DDTHH:MM:SS[.sss]Z`; milliseconds are
  /// written only when not zero. `nil` for years outside 0…9999.
  public static func format(milliseconds: Int64) -> String? {
    let (secondsTotal, ms) = floorDivMod(milliseconds, 1000)
    let (dayCount, secondOfDay) = floorDivMod(secondsTotal, 86400)
    let (y, m, d) = civil(days: dayCount)
    guard (0...9999).contains(y) else { return nil }
    var s = pad(y, 4) + "-" + pad(m, 2) + "-" + pad(d, 2) + "T"
    s += pad(secondOfDay / 3600, 2) + ":" + pad(secondOfDay / 60 % 60, 2) + ":" + pad(secondOfDay % 60, 2)
    if ms != 0 { s += "." + pad(ms, 3) }
    return s + "Z"
  }

  /// The number of days in `month` (1…12) of `year`, in the proleptic Gregorian calendar.
  static func daysIn(year: Int64, month: Int64) -> Int64 {
    switch month {
    case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
    case 4, 6, 9, 11: 30
    default: 31
    }
  }

  /// For text starting `YYYY-MM-DD` whose day does not exist in its month (`2020-02-30`), what
  /// is wrong with it ("2020-02 has 29 days, found day 30"); `nil` otherwise.
  static func impossibleDay(in text: some StringProtocol) -> String? {
    let u = Array(text.utf8.prefix(10))
    guard u.count == 10, u[4] == 45, u[7] == 45 else { return nil }
    func number(_ range: Range<Int>) -> Int64? {
      var v: Int64 = 0
      for c in u[range] {
        guard c >= 48 && c <= 57 else { return nil }
        v = v * 10 + Int64(c - 48)
      }
      return v
    }
    guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), (1...12).contains(month)
    else { return nil }
    let days = daysIn(year: year, month: month)
    guard day == 0 || day > days else { return nil }
    return "\(String(decoding: u[0..<7], as: UTF8.self)) has \(days) days, found day \(day)"
  }

  /// Parses `YYYY-MM-DDTHH:MM[:SS[.fraction]](Z|±HH:MM|±HHMM)` into milliseconds since the epoch
  /// (fractions beyond milliseconds are truncated). `nil` when the text is not of that form or
  /// names a day that its month does not have (`2020-02-30`).
  public static func parse(_ text: some StringProtocol) -> Int64? {
    let u = Array(text.utf8)
    var i = 0
    func number(_ digits: Int) -> Int64? {
      guard i + digits <= u.count else { return nil }
      var v: Int64 = 0
      for k in 0..<digits {
        let c = u[i + k]
        guard c >= 48 && c <= 57 else { return nil }
        v = v * 10 + Int64(c - 48)
      }
      i += digits
      return v
    }
    func expect(_ c: UInt8) -> Bool {
      guard i < u.count, u[i] == c else { return false }
      i += 1
      return true
    }
    guard let year = number(4), expect(45), let month = number(2), expect(45), let day = number(2),
      (1...12).contains(month), day >= 1, day <= daysIn(year: year, month: month)
    else { return nil }
    guard i < u.count, u[i] == UInt8(ascii: "T") || u[i] == UInt8(ascii: "t") || u[i] == 32 else { return nil }
    i += 1
    guard let hour = number(2), expect(58), let minute = number(2), hour < 24, minute < 60 else { return nil }
    var second: Int64 = 0
    var millis: Int64 = 0
    if expect(58) {
      guard let s = number(2), s < 61 else { return nil }
      second = s
      if expect(46) {
        var scale: Int64 = 100
        var digits = 0
        while i < u.count, u[i] >= 48 && u[i] <= 57 {
          millis += Int64(u[i] - 48) * scale
          scale /= 10
          digits += 1
          i += 1
        }
        guard digits > 0 else { return nil }
      }
    }
    var offsetSeconds: Int64 = 0
    guard i < u.count else { return nil }
    if u[i] == UInt8(ascii: "Z") || u[i] == UInt8(ascii: "z") {
      i += 1
    } else if u[i] == UInt8(ascii: "+") || u[i] == UInt8(ascii: "-") {
      let sign: Int64 = u[i] == UInt8(ascii: "+") ? 1 : -1
      i += 1
      guard let oh = number(2) else { return nil }
      _ = expect(58)
      guard let om = number(2), oh < 24, om < 60 else { return nil }
      offsetSeconds = sign * (oh * 3600 + om * 60)
    } else {
      return nil
    }
    guard i == u.count else { return nil }
    let seconds = days(year: year, month: month, day: day) * 86400 + hour * 3600 + minute * 60 + second - offsetSeconds
    return seconds * 1000 + millis
  }

  static func floorDivMod(_ a: Int64, _ b: Int64) -> (Int64, Int64) {
    var q = a / b
    var r = a % b
    if r < 0 {
      q -= 1
      r += b
    }
    return (q, r)
  }

  static func pad(_ v: Int64, _ width: Int) -> String {
    let s = String(v)
    return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
  }
}
