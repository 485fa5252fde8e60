@_spi(ReefInternal) import ReefQuery

extension Query {
  /// Whether a stored document matches; a regular expression past its limits on one of its
  /// strings ends the query with a ``StoreError/Kind/invalidQuery`` error whose ``StoreError/queryError``
  /// says which pattern and which limit (``QueryError/Kind/regexLimit``).
  @inline(__always)
  func storedMatches(_ bson: UnsafeRawBufferPointer) throws(StoreError) -> Bool {
    do {
      return try evaluate(trustedBytes: bson)
    } catch {
      throw StoreError(.invalidQuery, error.description, queryError: error)
    }
  }
}
